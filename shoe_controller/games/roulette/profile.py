"""Roulette table profiles: payouts, limits, zero bets and the even-money rule, validated TOML.

Profiles ship in ``profiles/*.toml`` next to this file; operators add their own by path or in a
directory named by ``SHOE_PROFILE_PATH`` (searched first), as for baccarat (docs/profiles.md).
A roulette profile says ``game = "roulette"``. Loading reports *every* problem at once as
``file: key: reason`` in a :class:`ProfileError`, and refuses a payout that gives the player
an edge on a single-zero wheel (a bet on n numbers paying p to 1 returns n(p+1)/37) unless the
profile says ``allow_player_edge = true``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from shoe_controller.config import parse_toml, toml_text
from shoe_controller.games.baccarat.profile import ROUNDINGS, ProfileError
from shoe_controller.games.profile_files import looks_like_path, profile_files, read_profile_text
from shoe_controller.games.roulette.bets import NO_ZERO_BETS, BetKind, ZeroBets

PACKAGED_DIR = Path(__file__).with_name("profiles")
EVEN_MONEY_RULES = ("lose", "la-partage", "en-prison")
"""What an even-money bet does when zero wins: lose; lose half (La Partage); stay for one
more spin and come back without a win if it then wins (En Prison; lost if zero comes again)."""

PAY_KEYS = ("straight", "split", "street", "corner", "line", "column", "dozen", "even_money")
SEED_003_PAYS = {"straight": 35, "split": 17, "street": 11, "corner": 8, "line": 5,
                 "column": 2, "dozen": 2, "even_money": 1}
MAX_AMOUNT = Decimal(10) ** 9
MAX_DECIMAL_PLACES = 2

_TOP_KEYS = {"name", "description", "source", "game", "wheel", "rounding", "allow_player_edge",
             "zero_splits", "zero_streets", "first_four", "even_money_on_zero", "pays",
             "limits"}
_LIMIT_KEYS = {"min", "max"}


def pay_key(kind: BetKind) -> str:
    return "even_money" if kind.even_money else kind.value


@dataclass(frozen=True, slots=True)
class Limit:
    """Smallest and largest stake on one bet."""

    min: Decimal
    max: Decimal


@dataclass(frozen=True, slots=True)
class RouletteProfile:
    name: str
    description: str
    pays: dict[str, Decimal]  # pay key -> "to 1"
    limits: dict[str, Limit]  # pay key -> per-bet limit
    table_min: Decimal | None = None  # smallest total per bet slip (one player, one game)
    table_max: Decimal | None = None
    zero: ZeroBets = NO_ZERO_BETS
    even_money_on_zero: str = "lose"
    rounding: str = "down-to-cent"
    allow_player_edge: bool = False
    source: str = ""
    path: Path | None = field(default=None, compare=False)

    def pays_for(self, kind: BetKind) -> Decimal:
        return self.pays[pay_key(kind)]

    def limit_for(self, kind: BetKind) -> Limit:
        return self.limits[pay_key(kind)]


def list_profiles() -> dict[str, Path]:
    """Roulette profile name -> file: ``SHOE_PROFILE_PATH`` directories, then packaged ones
    (only files that say ``game = "roulette"`` in user directories)."""
    return profile_files(PACKAGED_DIR, _says_roulette)


def _says_roulette(path: Path) -> bool:
    try:
        return parse_toml(toml_text(path.read_bytes())).get("game") == "roulette"
    except (OSError, ValueError):
        return False


def find_profile(name_or_path: str | os.PathLike[str]) -> Path | None:
    """The file of a roulette profile given by name or path, or ``None`` if it is not one
    (a missing file, another game's profile): the caller then tries the other games."""
    text = os.fspath(name_or_path)
    if looks_like_path(text):
        path = Path(text)
        return path if path.is_file() and _says_roulette(path) else None
    return list_profiles().get(text)


def load_profile(name_or_path: str | os.PathLike[str]) -> RouletteProfile:
    """Load and validate a roulette profile by name or file path."""
    text = os.fspath(name_or_path)
    if looks_like_path(text):
        path = Path(text)
        if not path.is_file():
            raise ProfileError([f"{path}: profile file not found"])
    else:
        profiles = list_profiles()
        if text not in profiles:
            known = ", ".join(profiles) or "none"
            raise ProfileError([f"{text}: no such roulette profile (known: {known})"])
        path = profiles[text]
    return profile_from_toml(read_profile_text(path), path)


def profile_from_toml(text: str | bytes, origin: Path | str = "<profile>") -> RouletteProfile:
    """Validate a profile's TOML text; every failure is a :class:`ProfileError`."""
    try:
        data = parse_toml(toml_text(text) if isinstance(text, bytes) else text)
    except ValueError as exc:
        raise ProfileError([f"{origin}: {exc}"]) from None
    return parse_profile(data, origin)


def parse_profile(data: Mapping[str, Any], origin: Path | str = "<profile>") -> RouletteProfile:
    """Validate a parsed TOML document, listing every problem."""
    check = _Checker(str(origin))
    profile = check.profile(data, origin)
    if check.problems or profile is None:
        raise ProfileError(check.problems)
    return profile


class _Checker:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[str] = []

    def problem(self, key: str, reason: str) -> None:
        self.problems.append(f"{self.file}: {key}: {reason}")

    def unknown(self, table: Mapping[str, Any], allowed: set[str] | tuple[str, ...],
                prefix: str) -> None:
        for key in table:
            if key not in allowed:
                self.problem(prefix + str(key), f"unknown key (allowed: "
                             f"{', '.join(sorted(allowed))})")

    def flag(self, data: Mapping[str, Any], key: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false, got {value!r}")
            return False
        return value

    def text(self, data: Mapping[str, Any], key: str, default: str) -> str:
        value = data.get(key, default)
        if not isinstance(value, str):
            self.problem(key, f"must be a string, got {value!r}")
            return default
        return value

    def choice(self, data: Mapping[str, Any], key: str, choices: tuple[str, ...]) -> str:
        value = data.get(key, choices[0])
        if value not in choices:
            self.problem(key, f"must be one of {', '.join(choices)}; got {value!r}")
            return choices[0]
        return str(value)

    def amount(self, value: Any, key: str, *, places: int = MAX_DECIMAL_PLACES) -> Decimal | None:
        # Strings are exact; TOML floats are read by their shortest repr (0.5 -> "0.5").
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            self.problem(key, f'must be a decimal amount such as "2.50", got {value!r}')
            return None
        try:
            number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
        except InvalidOperation:
            self.problem(key, f"not a decimal amount: {str(value)[:40]!r}")
            return None
        if not number.is_finite() or not 0 < number <= MAX_AMOUNT:
            self.problem(key, f"must be more than 0 and at most {MAX_AMOUNT}, got "
                         f"{str(value)[:40]}")
            return None
        if number != number.quantize(Decimal(1).scaleb(-places)):
            self.problem(key, f"at most {places} decimal places, got {str(value)[:40]}")
            return None
        return number

    def profile(self, data: Mapping[str, Any], origin: Path | str) -> RouletteProfile | None:
        self.unknown(data, _TOP_KEYS, "")
        if data.get("game") != "roulette":
            self.problem("game", f'must be "roulette", got {data.get("game")!r}')
        self.choice(data, "wheel", ("single-zero",))
        default_name = Path(os.fspath(origin)).stem
        name = self.text(data, "name", default_name) or default_name
        pays = self.pays(data.get("pays", {}))
        limits, table_min, table_max = self.limits(data.get("limits"))
        profile = RouletteProfile(
            name=name,
            description=self.text(data, "description", ""),
            source=self.text(data, "source", ""),
            pays=pays,
            limits=limits,
            table_min=table_min,
            table_max=table_max,
            zero=ZeroBets(self.flag(data, "zero_splits"), self.flag(data, "zero_streets"),
                          self.flag(data, "first_four")),
            even_money_on_zero=self.choice(data, "even_money_on_zero", EVEN_MONEY_RULES),
            rounding=self.choice(data, "rounding", tuple(ROUNDINGS)),
            allow_player_edge=self.flag(data, "allow_player_edge"),
            path=origin if isinstance(origin, Path) else None,
        )
        if not profile.allow_player_edge:
            self.player_edge(pays)
        return None if self.problems else profile

    def pays(self, table: Any) -> dict[str, Decimal]:
        pays = {key: Decimal(value) for key, value in SEED_003_PAYS.items()}
        if not isinstance(table, Mapping):
            self.problem("pays", 'must be a table, e.g. [pays] straight = "35"')
            return pays
        self.unknown(table, PAY_KEYS, "pays.")
        for key in PAY_KEYS:
            if key in table:
                value = self.amount(table[key], f"pays.{key}", places=6)
                if value is not None:
                    pays[key] = value
        return pays

    def player_edge(self, pays: dict[str, Decimal]) -> None:
        sizes = {pay_key(kind): kind.size for kind in BetKind}
        for key, pay in pays.items():
            if sizes[key] * (pay + 1) > 37:
                edge = sizes[key] * (pay + 1) / 37 - 1
                self.problem(f"pays.{key}", f"{pay} to 1 on {sizes[key]} numbers gives the "
                             f"player an edge of {float(edge) * 100:.2f} % on a single-zero "
                             "wheel; set allow_player_edge = true if this is intended")

    def limits(self, table: Any) -> tuple[dict[str, Limit], Decimal | None, Decimal | None]:
        limits: dict[str, Limit] = {}
        if not isinstance(table, Mapping):
            self.problem("limits", ("required: a table with [limits.straight] min/max and "
                                    f"one for each of {', '.join(PAY_KEYS)}"))
            return limits, None, None
        self.unknown(table, {*PAY_KEYS, "table_min", "table_max"}, "limits.")
        table_min = self.amount(table["table_min"], "limits.table_min") \
            if "table_min" in table else None
        table_max = self.amount(table["table_max"], "limits.table_max") \
            if "table_max" in table else None
        if table_min is not None and table_max is not None and table_min > table_max:
            self.problem("limits.table_min", f"{table_min} is above table_max {table_max}")
        for key in PAY_KEYS:
            entry = table.get(key)
            if not isinstance(entry, Mapping):
                self.problem(f"limits.{key}", "required: a table with min and max stakes")
                continue
            self.unknown(entry, _LIMIT_KEYS, f"limits.{key}.")
            low = self.amount(entry.get("min"), f"limits.{key}.min")
            high = self.amount(entry.get("max"), f"limits.{key}.max")
            if low is not None and high is not None:
                if low > high:
                    self.problem(f"limits.{key}", f"min {low} is above max {high}")
                limits[key] = Limit(low, high)
        return limits, table_min, table_max
