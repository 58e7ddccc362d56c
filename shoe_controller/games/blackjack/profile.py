"""Blackjack table profiles: a table's rules and shoe procedure as validated TOML data.

Packaged profiles live in ``profiles/*.toml`` beside this module; operators add their own as a
file path or in a ``SHOE_PROFILE_PATH`` directory, searched first (as for baccarat, see
docs/profiles.md). A blackjack profile says ``game = "blackjack"``; docs/blackjack.md lists
every key. Loading reports *every* problem at once as ``file: key: reason`` in a
:class:`~shoe_controller.games.baccarat.profile.ProfileError` (the same error type as baccarat's,
so callers catch one thing).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from shoe_controller.config import parse_toml
from shoe_controller.errors import ConfigError
from shoe_controller.games.baccarat.profile import ProfileError
from shoe_controller.games.blackjack.rules import ACE, TEN, TableRules
from shoe_controller.games.profile_files import looks_like_path, profile_files, read_profile_text

GAME = "blackjack"
PACKAGED_DIR = Path(__file__).with_name("profiles")

#: Last-round rules: "finish-current" (seed 003 2.3.2: reshuffle at the end of the hand in which
#: the cut card is reached) or "finish-and-one-more" (that hand and one more).
LAST_ROUND_RULES = ("finish-current", "finish-and-one-more")
#: Up cards the dealer may check for blackjack, as written in a profile.
PEEK_CARDS = {"A": ACE, "T": TEN}
#: Upper bound of any payout "to 1" (real tables stay far below).
MAX_PAYS = Decimal(100)
MAX_DECIMAL_PLACES = 6

_KEYS: dict[str, set[str]] = {
    "": {"name", "game", "description", "source", "decks", "seats", "cut_card", "last_round",
         "decision_seconds", "burn", "dealer", "payouts", "double", "split"},
    "burn.": {"after_shuffle", "after_error"},
    "dealer.": {"soft_17", "peeks_on"},
    "payouts.": {"win", "blackjack", "insurance", "insurance_max"},
    "double.": {"totals", "after_split", "dealer_blackjack_takes"},
    "split.": {"pairs", "aces", "aces_one_card", "dealer_blackjack_takes"},
}


@dataclass(frozen=True, slots=True)
class ShoeProcedure:
    """The shoe-level rules: burn counts, cut card, which round is the last."""

    decks: int = 8
    burn_after_shuffle: int = 6
    #: Cards burned after a game error, with a supervisor's approval (seed 003 2.3.5 b).
    burn_after_error: int = 3
    #: Cards behind the cut card (it comes out before the card at ``len(shoe) - cut_card``).
    cut_card: int = 52
    last_round: str = "finish-current"


@dataclass(frozen=True, slots=True)
class BlackjackProfile:
    name: str
    description: str
    rules: TableRules
    shoe: ShoeProcedure
    source: str = ""
    path: Path | None = field(default=None, compare=False)
    #: The live table: how long a seat has to decide (or to answer insurance) before its hand
    #: stands (and insurance is declined), seed 003 issue 17: 15 s.
    decision_seconds: int = 15


def list_profiles() -> dict[str, Path]:
    """Blackjack profile name -> file (user directories first; other games' files skipped)."""
    return profile_files(PACKAGED_DIR, _declares_blackjack)


def _declares_blackjack(path: Path) -> bool:
    try:
        return parse_toml(path.read_bytes()).get("game") == GAME
    except (OSError, ConfigError):
        return False


def find_profile(name_or_path: str | os.PathLike[str]) -> Path | None:
    """The file of a blackjack profile given by name or path, or ``None`` if it is not one
    (a missing file, another game's profile): the caller then tries the other games."""
    text = os.fspath(name_or_path)
    if looks_like_path(text):
        path = Path(text)
        return path if path.is_file() and _declares_blackjack(path) else None
    return list_profiles().get(text)


def is_blackjack_profile(name_or_path: str | os.PathLike[str]) -> bool:
    return find_profile(name_or_path) is not None


def load_profile(name_or_path: str | os.PathLike[str]) -> BlackjackProfile:
    """Load and validate a blackjack profile by name or file path."""
    path = find_profile(name_or_path)
    if path is None:
        known = ", ".join(list_profiles()) or "none"
        name = os.fspath(name_or_path)
        raise ProfileError([f"{name}: no such blackjack profile (known: {known})"])
    return profile_from_toml(read_profile_text(path), path)


def profile_from_toml(text: str, origin: Path | str = "<profile>") -> BlackjackProfile:
    """Validate a blackjack profile's TOML text; every failure is a :class:`ProfileError`."""
    try:
        data = parse_toml(text)
    except ConfigError as exc:
        raise ProfileError([f"{origin}: {exc}"]) from None
    return parse_profile(data, origin)


def parse_profile(data: Mapping[str, Any], origin: Path | str = "<profile>") -> BlackjackProfile:
    checker = _Checker(str(origin), data)
    profile = checker.profile(Path(origin) if isinstance(origin, Path) else None,
                              Path(os.fspath(origin)).stem)
    if checker.problems:
        raise ProfileError(checker.problems)
    return profile


class _Checker:
    """Reads each key with its default, noting every problem (an operator fixes all at once)."""

    def __init__(self, file: str, data: Mapping[str, Any]) -> None:
        self.file = file
        self.data = data
        self.problems: list[str] = []
        self._tables: dict[str, Mapping[str, Any]] = {}

    def problem(self, key: str, reason: str) -> None:
        self.problems.append(f"{self.file}: {key}: {reason}")

    def table(self, prefix: str) -> Mapping[str, Any]:
        """The table for ``prefix`` ("" = top level), checked for unknown keys once."""
        if prefix in self._tables:
            return self._tables[prefix]
        self._tables[prefix] = self._check_table(prefix)
        return self._tables[prefix]

    def _check_table(self, prefix: str) -> Mapping[str, Any]:
        table = self.data if not prefix else self.data.get(prefix[:-1], {})
        if not isinstance(table, Mapping):
            self.problem(prefix[:-1], f"must be a table ([{prefix[:-1]}])")
            return {}
        for key in table:
            if key not in _KEYS[prefix]:
                allowed = ", ".join(sorted(_KEYS[prefix]))
                self.problem(f"{prefix}{key!s}", f"unknown key (allowed: {allowed})")
        return table

    def integer(self, prefix: str, key: str, default: int, low: int, high: int) -> int:
        value = self.table(prefix).get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.problem(prefix + key, f"must be a whole number from {low} to {high}, "
                         f"got {value!r}")
            return default
        return value

    def boolean(self, prefix: str, key: str, default: bool) -> bool:
        value = self.table(prefix).get(key, default)
        if not isinstance(value, bool):
            self.problem(prefix + key, f"must be true or false, got {value!r}")
            return default
        return value

    def choice(self, prefix: str, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.table(prefix).get(key, default)
        if value not in choices:
            self.problem(prefix + key, f"must be one of {', '.join(choices)}; got {value!r}")
            return default
        return str(value)

    def string(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            self.problem(key, f"must be a string, got {value!r}")
            return default
        return value

    def amount(self, key: str, default: str, low: Decimal, high: Decimal) -> Decimal:
        """A payout "to 1" or a fraction: a decimal string ("1.5") or number, within bounds."""
        raw = self.table("payouts.").get(key, default)
        label = "payouts." + key
        if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            self.problem(label, f'must be a decimal number such as "1.5", got {raw!r}')
            return Decimal(default)
        try:
            number = Decimal(repr(raw) if isinstance(raw, float) else str(raw).strip())
        except InvalidOperation:
            self.problem(label, f"not a decimal number: {raw!r}")
            return Decimal(default)
        if not number.is_finite():  # before comparing: a NaN cannot be compared
            self.problem(label, f"must be a finite number, got {raw!r}")
            return Decimal(default)
        if not low < number <= high:
            self.problem(label, f"must be more than {low} and at most {high}, got {raw!r}")
            return Decimal(default)
        if -number.normalize().as_tuple().exponent > MAX_DECIMAL_PLACES:  # type: ignore[operator]
            self.problem(label, f"at most {MAX_DECIMAL_PLACES} decimal places, got {raw!r}")
            return Decimal(default)
        return number

    def peeks_on(self) -> frozenset[int]:
        raw = self.table("dealer.").get("peeks_on", ["A"])
        if not isinstance(raw, list) or any(not isinstance(item, str) or item not in PEEK_CARDS
                                            for item in raw):
            self.problem("dealer.peeks_on", f'must be a list of up cards from "A", "T" '
                         f'(e.g. ["A"], or [] for no check), got {raw!r}')
            return frozenset({ACE})
        return frozenset(PEEK_CARDS[item] for item in raw)

    def double_totals(self) -> frozenset[int] | None:
        raw = self.table("double.").get("totals", "any")
        if raw == "any":
            return None
        if (not isinstance(raw, list) or not raw
                or any(isinstance(t, bool) or not isinstance(t, int) or not 4 <= t <= 20
                       for t in raw)):
            self.problem("double.totals", 'must be "any" or a non-empty list of two-card '
                         f"totals from 4 to 20 (e.g. [9, 10, 11]), got {raw!r}")
            return None
        return frozenset(raw)

    def profile(self, path: Path | None, default_name: str) -> BlackjackProfile:
        self.table("")
        game = self.data.get("game")
        if game != GAME:
            self.problem("game", f'must be "{GAME}" in a blackjack profile, got {game!r}')
        name = self.string("name", default_name) or default_name
        decks = self.integer("", "decks", 8, 1, 64)
        cards = 52 * decks
        for prefix in ("burn.", "dealer.", "payouts.", "double.", "split."):
            self.table(prefix)  # unknown keys and wrong types, even of an all-default table
        shoe = ShoeProcedure(
            decks=decks,
            burn_after_shuffle=self.integer("burn.", "after_shuffle", 6, 0, cards - 1),
            burn_after_error=self.integer("burn.", "after_error", 3, 0, cards - 1),
            cut_card=self.integer("", "cut_card", 52, 0, cards - 1),
            last_round=self.choice("", "last_round", "finish-current", LAST_ROUND_RULES),
        )
        takes = ("original", "all")
        rules = TableRules(
            decks=decks,
            seats=self.integer("", "seats", 7, 1, 7),
            hits_soft_17=self.choice("dealer.", "soft_17", "stand", ("stand", "hit")) == "hit",
            peeks_on=self.peeks_on(),
            win_pays=self.amount("win", "1", Decimal(0), MAX_PAYS),
            blackjack_pays=self.amount("blackjack", "1.5", Decimal(0), MAX_PAYS),
            insurance_pays=self.amount("insurance", "2", Decimal(0), MAX_PAYS),
            insurance_max=self.amount("insurance_max", "0.5", Decimal(0), Decimal(1)),
            double_totals=self.double_totals(),
            double_after_split=self.boolean("double.", "after_split", True),
            double_loses_original_only=self.choice(
                "double.", "dealer_blackjack_takes", "original", takes) == "original",
            split_by=self.choice("split.", "pairs", "value", ("value", "rank")),
            split_aces=self.boolean("split.", "aces", True),
            split_aces_one_card=self.boolean("split.", "aces_one_card", True),
            split_loses_original_only=self.choice(
                "split.", "dealer_blackjack_takes", "all", takes) == "original",
        )
        return BlackjackProfile(
            name=name,
            description=self.string("description", ""),
            rules=rules,
            shoe=shoe,
            source=self.string("source", ""),
            path=path,
            decision_seconds=self.integer("", "decision_seconds", 15, 1, 600),
        )
