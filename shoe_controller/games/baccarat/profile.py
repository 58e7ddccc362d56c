"""Table profiles: the shoe rules and paytable of one table, as validated TOML data.

Profiles ship with the package (``profiles/*.toml``); operators add their own either as a file
path or in a directory named by the ``SHOE_PROFILE_PATH`` environment variable (several
directories separated by ``os.pathsep``; they are searched before the packaged profiles, so a
user file may replace a packaged one of the same name). See docs/profiles.md.

Loading validates everything and reports *every* problem at once as ``file: key: reason`` in a
:class:`ProfileError`, including a bet that gives the player an edge on a full shoe unless the
profile says ``allow_player_edge = true``. Amounts are bounded (at most :data:`MAX_PAYS` to 1,
at most :data:`MAX_DECIMAL_PLACES` decimal places) so that odds, settlement and the figures
printed from them are exact and finite for anything that loads.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from shoe_controller.config import parse_toml
from shoe_controller.errors import ConfigError
from shoe_controller.games.baccarat.odds import exact_odds, full_shoe
from shoe_controller.games.baccarat.shoe_rules import BURN_PROCEDURES, LAST_ROUND_RULES, ShoeRules
from shoe_controller.games.profile_files import (
    looks_like_path,
    profile_files,
    read_profile_text,
    user_profile_dirs,
)

PACKAGED_DIR = Path(__file__).with_name("profiles")

#: Facts a bet can win, push or pay specially on (the keys of CoupResult.facts()).
OUTCOME_FACTS = (
    "banker",
    "player",
    "tie",
    "banker_three_card_7",
    "player_three_card_8",
    "banker_wins_with_6",
)
PAIR_FACTS = ("player_pair", "banker_pair")
FACTS = OUTCOME_FACTS + PAIR_FACTS

#: The largest win a bet or exception may pay, "to 1" (real side bets stay far below).
MAX_PAYS = Decimal(1_000_000)
#: Decimal places allowed in pays and commission (keeps every product exact in 28 digits).
MAX_DECIMAL_PLACES = 6

_CENT = Decimal("0.01")
#: Rounding rules for a win (the stake itself is never rounded).
ROUNDINGS: dict[str, str | None] = {
    "down-to-cent": ROUND_DOWN,
    "half-up-to-cent": ROUND_HALF_UP,
    "half-even-to-cent": ROUND_HALF_EVEN,
    "exact": None,
}

_TOP_KEYS = {
    "name",
    "description",
    "source",
    "decks",
    "burn",
    "cut_card",
    "last_round",
    "rounding",
    "allow_player_edge",
    "bets",
}
_BURN_KEYS = {"procedure", "count"}
_BET_KEYS = {"wins_on", "pays", "commission", "rounding", "pushes_on", "exceptions", "description"}
_EXCEPTION_KEYS = {"when", "result", "pays"}


class ProfileError(ConfigError):
    """A profile could not be found or is invalid; ``problems`` holds every ``file: key: reason``."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            problems[0]
            if len(problems) == 1
            else f"{len(problems)} problems:\n  " + "\n  ".join(problems)
        )


def round_amount(amount: Decimal, rounding: str) -> Decimal:
    """Apply a rounding rule from :data:`ROUNDINGS` to a win."""
    mode = ROUNDINGS[rounding]
    return amount if mode is None else amount.quantize(_CENT, rounding=mode)


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one bet ends on one round: ``win`` at ``odds`` to 1 (before commission), ``push``, ``lose``."""

    kind: str
    odds: Decimal = Decimal(0)
    commission: Decimal = Decimal(0)

    @property
    def net_odds(self) -> Decimal:
        """What one unit wins after commission (exact; rounding applies to real amounts only)."""
        return self.odds * (1 - self.commission)


@dataclass(frozen=True, slots=True)
class PayException:
    """``when`` the fact holds, the bet pushes (``pays is None``) or wins at ``pays`` to 1."""

    when: str
    pays: Decimal | None


@dataclass(frozen=True, slots=True)
class Bet:
    """One paytable entry. Exceptions are checked first, in order; then the win; then pushes."""

    name: str
    wins_on: str
    pays: Decimal
    commission: Decimal = Decimal(0)
    rounding: str = "down-to-cent"
    pushes_on: tuple[str, ...] = ()
    exceptions: tuple[PayException, ...] = ()
    description: str = ""

    @property
    def facts_used(self) -> tuple[str, ...]:
        names = [self.wins_on, *self.pushes_on, *(e.when for e in self.exceptions)]
        return tuple(dict.fromkeys(names))

    def pair_fact(self) -> str | None:
        """The pair fact this bet is about, or ``None`` for a bet on the outcome facts."""
        used = self.facts_used
        return used[0] if used[0] in PAIR_FACTS else None

    def resolve(self, facts: Mapping[str, bool]) -> Resolution:
        for exception in self.exceptions:
            if facts[exception.when]:
                if exception.pays is None:
                    return Resolution("push")
                return Resolution("win", exception.pays, self.commission)
        if facts[self.wins_on]:
            return Resolution("win", self.pays, self.commission)
        if any(facts[name] for name in self.pushes_on):
            return Resolution("push")
        return Resolution("lose")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    decks: int
    burn_procedure: str
    burn_count: int
    cut_card: int
    last_round: str
    bets: dict[str, Bet]
    allow_player_edge: bool = False
    source: str = ""
    path: Path | None = field(default=None, compare=False)

    @property
    def shoe_rules(self) -> ShoeRules:
        return ShoeRules(
            decks=self.decks,
            burn_procedure=self.burn_procedure,
            burn_count=self.burn_count,
            cut_card=self.cut_card,
            last_round=self.last_round,
        )


def profile_dirs() -> list[Path]:
    """Directories searched by name: ``SHOE_PROFILE_PATH`` entries, then the packaged ones."""
    return [*user_profile_dirs(), PACKAGED_DIR]


def list_profiles() -> dict[str, Path]:
    """Profile name -> file, user directories shadowing packaged profiles of the same name."""
    return profile_files(PACKAGED_DIR)


def load_profile(name_or_path: str | os.PathLike[str]) -> Profile:
    """Load and validate a profile by name (see :func:`profile_dirs`) or by file path."""
    path = find_profile(name_or_path)
    return profile_from_toml(read_profile_text(path), path)


def find_profile(name_or_path: str | os.PathLike[str]) -> Path:
    """The file of a profile given by name (see :func:`profile_dirs`) or by path."""
    text = os.fspath(name_or_path)
    if looks_like_path(text):
        path = Path(text)
        if not path.is_file():
            raise ProfileError([f"{path}: profile file not found"])
    else:
        profiles = list_profiles()
        if text not in profiles:
            known = ", ".join(profiles) or "none"
            raise ProfileError([f"{text}: no such profile (known: {known})"])
        path = profiles[text]
    return path


@functools.lru_cache(maxsize=16)
def profile_from_toml(text: str, origin: Path | str = "<profile>") -> Profile:
    """Validate a profile's TOML text (a file's, or the one journalled with a session).

    Every failure is a :class:`ProfileError`, as for :func:`load_profile`: the text is parsed
    by the same :func:`~shoe_controller.config.parse_toml`. Without a ``name`` key the name is
    the file name of ``origin`` without ``.toml``, as :func:`load_profile` gives it.

    Kept for the same text and origin (the result depends on nothing else; a failure is not
    kept): a replay meets its session's journalled text at every session record, and the
    player-edge check works out a full shoe's exact odds (about 8 ms). The profile is frozen;
    its ``bets`` are shared, and nothing changes them.
    """
    try:
        data = parse_toml(text)  # not TOML, nested too deeply, a huge integer: ConfigError
    except ConfigError as exc:
        raise ProfileError([f"{origin}: {exc}"]) from None
    return parse_profile(data, origin, default_name=Path(os.fspath(origin)).stem)


def parse_profile(
    data: Mapping[str, Any], path: Path | str = "<profile>", *, default_name: str | None = None
) -> Profile:
    """Validate a parsed TOML document; raises :class:`ProfileError` listing every problem.

    Without a ``name`` key the name is ``default_name``, else the stem of ``path`` if it is a
    :class:`~pathlib.Path`.
    """
    checker = _Checker(str(path))
    file = Path(path) if isinstance(path, Path) else None
    if default_name is None:
        default_name = file.stem if file is not None else ""
    profile = checker.profile(data, file, default_name)
    if checker.problems:
        raise ProfileError(checker.problems)
    assert profile is not None
    _check_player_edge(profile, checker)
    if checker.problems:
        raise ProfileError(checker.problems)
    return profile


def _check_player_edge(profile: Profile, checker: _Checker) -> None:
    """Refuse a bet that favours the player on a full shoe unless the profile says it is intended."""
    if profile.allow_player_edge:
        return
    odds = exact_odds(full_shoe(profile.decks), profile)
    for name, bet in odds.bets.items():
        if bet.house_edge < 0:
            checker.problem(
                f"bets.{name}.pays",
                f"pays {profile.bets[name].pays} to 1, which gives the player an edge of "
                f"{float(-bet.house_edge) * 100:.2f} % with {profile.decks} decks; "
                "set allow_player_edge = true if this is intended",
            )


class _Checker:
    """Collects problems instead of stopping at the first, so an operator fixes a file in one go."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[str] = []

    def problem(self, key: str, reason: str) -> None:
        self.problems.append(f"{self.file}: {key}: {reason}")

    def unknown_keys(self, table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                self.problem(
                    f"{prefix}{_label(key)}",
                    f"unknown key (allowed: {', '.join(sorted(allowed))})",
                )

    def integer(
        self,
        table: Mapping[str, Any],
        key: str,
        default: int,
        low: int,
        high: int,
        label: str | None = None,
    ) -> int:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.problem(
                label or key, f"must be a whole number from {low} to {high}, got {value!r}"
            )
            return default
        return int(value)

    def choice(
        self,
        table: Mapping[str, Any],
        key: str,
        default: str,
        choices: tuple[str, ...],
        label: str | None = None,
    ) -> str:
        value = table.get(key, default)
        if value not in choices:
            self.problem(label or key, f"must be one of {', '.join(choices)}; got {value!r}")
            return default
        return str(value)

    def decimal(self, value: Any, label: str) -> Decimal | None:
        # Strings are exact; TOML floats are taken by their shortest repr (0.95 -> "0.95").
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            self.problem(label, f'must be a decimal number such as "0.95", got {value!r}')
            return None
        try:
            number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
        except InvalidOperation:
            self.problem(label, f"not a decimal number: {value!r}")
            return None
        if not number.is_finite():
            self.problem(label, f"must be finite, got {value!r}")
            return None
        if _decimal_places(number) > MAX_DECIMAL_PLACES:
            self.problem(
                label, f"at most {MAX_DECIMAL_PLACES} decimal places, got {_short(str(value))}"
            )
            return None
        return number

    def profile(
        self, data: Mapping[str, Any], path: Path | None, default_name: str
    ) -> Profile | None:
        self.unknown_keys(data, _TOP_KEYS, "")
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name:
            self.problem("name", f"must be a non-empty string, got {name!r}")
            name = default_name
        description = data.get("description", "")
        if not isinstance(description, str):
            self.problem("description", "must be a string")
            description = ""
        source = data.get("source", "")
        if not isinstance(source, str):
            self.problem("source", "must be a string")
            source = ""
        decks = self.integer(data, "decks", 8, 1, 64)
        cut_card = self.integer(data, "cut_card", 14, 0, 52 * decks - 1)
        last_round = self.choice(data, "last_round", "finish-and-one-more", LAST_ROUND_RULES)
        rounding = self.choice(data, "rounding", "down-to-cent", tuple(ROUNDINGS))
        allow = data.get("allow_player_edge", False)
        if not isinstance(allow, bool):
            self.problem("allow_player_edge", f"must be true or false, got {allow!r}")
            allow = False
        burn_procedure, burn_count = self.burn(data.get("burn", {}), decks)
        bets = self.bets(data.get("bets"), rounding)
        if self.problems:
            return None
        return Profile(
            name=name,
            description=description,
            decks=decks,
            burn_procedure=burn_procedure,
            burn_count=burn_count,
            cut_card=cut_card,
            last_round=last_round,
            bets=bets,
            allow_player_edge=allow,
            source=source,
            path=path,
        )

    def burn(self, table: Any, decks: int) -> tuple[str, int]:
        if not isinstance(table, Mapping):
            self.problem("burn", 'must be a table, e.g. [burn] procedure = "turn-and-burn"')
            return "turn-and-burn", 0
        self.unknown_keys(table, _BURN_KEYS, "burn.")
        procedure = self.choice(
            table, "procedure", "turn-and-burn", BURN_PROCEDURES, "burn.procedure"
        )
        if procedure == "fixed":
            if "count" not in table:
                self.problem("burn.count", 'required when burn.procedure is "fixed"')
            count = self.integer(table, "count", 0, 0, 52 * decks - 1, "burn.count")
            return procedure, count
        if "count" in table:
            self.problem(
                "burn.count",
                'only for burn.procedure = "fixed"; turn-and-burn burns '
                "as many cards as the turned card's points",
            )
        return procedure, 0

    def bets(self, table: Any, default_rounding: str) -> dict[str, Bet]:
        if not isinstance(table, Mapping) or not table:
            self.problem("bets", "must be a table with at least one bet, e.g. [bets.player]")
            return {}
        bets: dict[str, Bet] = {}
        for name, entry in table.items():
            bet = self.bet(name, entry, default_rounding)
            if bet is not None:
                bets[name] = bet
        return bets

    def fact(self, value: Any, label: str) -> str | None:
        if value not in FACTS:
            self.problem(label, f"unknown fact {value!r} (known: {', '.join(FACTS)})")
            return None
        return str(value)

    def bet(self, name: str, entry: Any, default_rounding: str) -> Bet | None:
        prefix = f"bets.{_label(name)}."
        if not isinstance(entry, Mapping):
            self.problem(f"bets.{_label(name)}", "must be a table")
            return None
        before = len(self.problems)
        self.unknown_keys(entry, _BET_KEYS, prefix)
        wins_on = self.fact(entry.get("wins_on"), prefix + "wins_on")
        pays = None
        if "pays" not in entry:
            self.problem(prefix + "pays", 'required: the win in units per unit staked ("to 1")')
        else:
            pays = self.decimal(entry["pays"], prefix + "pays")
            if pays is not None and not 0 < pays <= MAX_PAYS:
                self.problem(prefix + "pays", f"must be more than 0 and at most {MAX_PAYS}, "
                             f"got {_short(str(pays))}")
                pays = None
        commission = self.decimal(entry.get("commission", "0"), prefix + "commission")
        if commission is not None and not 0 <= commission < 1:
            self.problem(
                prefix + "commission",
                f"must be a fraction from 0 to below 1 (0.05 = 5 %), got {commission}",
            )
        rounding = self.choice(
            entry, "rounding", default_rounding, tuple(ROUNDINGS), prefix + "rounding"
        )
        pushes_raw = entry.get("pushes_on", [])
        pushes: list[str] = []
        if not isinstance(pushes_raw, list):
            self.problem(prefix + "pushes_on", 'must be a list of facts, e.g. ["tie"]')
        else:
            for i, item in enumerate(pushes_raw):
                fact = self.fact(item, f"{prefix}pushes_on[{i}]")
                if fact is not None:
                    pushes.append(fact)
        exceptions = self.exceptions(entry.get("exceptions", []), prefix)
        description = entry.get("description", "")
        if not isinstance(description, str):
            self.problem(prefix + "description", "must be a string")
        if len(self.problems) > before or wins_on is None or pays is None or commission is None:
            return None
        bet = Bet(
            name=name,
            wins_on=wins_on,
            pays=pays,
            commission=commission,
            rounding=rounding,
            pushes_on=tuple(pushes),
            exceptions=tuple(exceptions),
            description=str(description),
        )
        used = bet.facts_used
        if any(f in PAIR_FACTS for f in used) and len(used) > 1:
            self.problem(
                prefix + "wins_on",
                f"a pair bet must use its pair fact alone (uses "
                f"{', '.join(used)}); exact odds cannot price the mix",
            )
            return None
        return bet

    def exceptions(self, raw: Any, prefix: str) -> list[PayException]:
        if not isinstance(raw, list):
            self.problem(prefix + "exceptions", "must be an array of tables ([[...exceptions]])")
            return []
        result = []
        for i, item in enumerate(raw):
            label = f"{prefix}exceptions[{i}]"
            if not isinstance(item, Mapping):
                self.problem(label, "must be a table with 'when' and 'result' or 'pays'")
                continue
            self.unknown_keys(item, _EXCEPTION_KEYS, label + ".")
            when = self.fact(item.get("when"), label + ".when")
            has_result, has_pays = "result" in item, "pays" in item
            if has_result == has_pays:
                self.problem(label, 'needs exactly one of result = "push" or pays = "X"')
                continue
            if has_result:
                if item["result"] != "push":
                    self.problem(label + ".result", f'must be "push", got {item["result"]!r}')
                    continue
                pays = None
            else:
                pays = self.decimal(item["pays"], label + ".pays")
                if pays is None:
                    continue
                if not 0 < pays <= MAX_PAYS:
                    self.problem(label + ".pays", f"must be more than 0 and at most "
                                 f"{MAX_PAYS}, got {_short(str(pays))}")
                    continue
            if when is not None:
                result.append(PayException(when, pays))
        return result


def _decimal_places(number: Decimal) -> int:
    """Decimal places that matter (trailing zeros ignored), without any context rounding."""
    _sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # finite
    trailing = len(digits) - len(("".join(map(str, digits))).rstrip("0"))
    return max(0, -(exponent + trailing)) if any(digits) else 0


def _label(key: Any) -> str:
    """A key as written, or quoted if it would not show as itself on one line."""
    plain = isinstance(key, str) and key != "" and key.isprintable() and key.strip() == key
    return str(key) if plain else repr(key)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
