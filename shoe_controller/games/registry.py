"""Which game a table profile plays, and building that game for the table.

A profile names its game with ``game = "..."`` (absent: baccarat, as profiles written before
other games were). Baccarat and blackjack play on the card table (:func:`game_from_toml`);
roulette plays on the wheel table (:mod:`shoe_controller.wheel_table`); a profile for any other
game is refused with its name.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from shoe_controller.table.game import Game


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """A profile as the controller journals it: its name, whole TOML text and the text's hash."""

    name: str
    origin: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def read_profile(name_or_path: str | os.PathLike[str]) -> ProfileSource:
    """Find a profile (by name or path), read its text once and validate that same text:
    what is journalled is exactly what was checked (the file may change afterwards)."""
    from shoe_controller.games.baccarat.profile import (
        find_profile,
        read_profile_text,
    )
    from shoe_controller.games.blackjack import profile as blackjack
    from shoe_controller.games.roulette import profile as roulette

    path = (blackjack.find_profile(name_or_path) or roulette.find_profile(name_or_path)
            or find_profile(name_or_path))
    text = read_profile_text(path)
    if game_named(text, str(path)) == "roulette":
        roulette.profile_from_toml(text, path)  # validated as the game it names
    else:
        game_from_toml(text, str(path))
    return ProfileSource(os.fspath(name_or_path), str(path), text)


def create_game(profile_name: str) -> Game:
    """The table game for a profile name (a packaged profile) or a path to a profile file."""
    source = read_profile(profile_name)
    return game_from_toml(source.text, source.origin)


def game_from_toml(text: str, origin: str = "<journalled profile>") -> Game:
    """The table game for a profile's TOML text (as journalled with each controller session),
    so that a replay never depends on a profile file that may have changed since."""
    from shoe_controller.games.baccarat import profile as baccarat
    from shoe_controller.games.baccarat.table_game import BaccaratTableGame

    game = game_named(text, origin)
    if game == "blackjack":
        from shoe_controller.games.blackjack import profile as blackjack
        from shoe_controller.games.blackjack.table_game import BlackjackTableGame

        return BlackjackTableGame(blackjack.profile_from_toml(text, Path(origin)))
    if game != "baccarat":
        refusal = (f"{origin}: game {game!r} does not play on a card table (baccarat, "
                   "blackjack)" + (": a roulette profile runs a wheel table" if game == "roulette"
                                  else ""))
        raise baccarat.ProfileError([refusal])
    return cast("Game", BaccaratTableGame(baccarat.profile_from_toml(text, origin)))


def profile_game(name_or_path: str | os.PathLike[str]) -> str:
    """The game a profile (by name or path) plays; raises ``ProfileError`` as
    :func:`read_profile` does."""
    source = read_profile(name_or_path)
    return game_named(source.text, source.origin)


@functools.lru_cache(maxsize=16)
def game_named(text: str, origin: str) -> str:
    """The ``game`` a profile's text names ("baccarat" when it names none); kept for the same
    text, as the profile it names is (a replay asks at every session record)."""
    from shoe_controller.config import parse_toml
    from shoe_controller.errors import ConfigError
    from shoe_controller.games.baccarat.profile import ProfileError

    try:
        game = parse_toml(text).get("game", "baccarat")
    except ConfigError as exc:
        raise ProfileError([f"{origin}: {exc}"]) from None
    return game if isinstance(game, str) else repr(game)
