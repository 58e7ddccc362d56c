"""Which game a table profile plays, and building that game for the table.

Baccarat is the only game so far; blackjack and roulette profiles will name their game here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

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
        profile_from_toml,
        read_profile_text,
    )

    path = find_profile(name_or_path)
    text = read_profile_text(path)
    profile_from_toml(text, path)
    return ProfileSource(os.fspath(name_or_path), str(path), text)


def create_game(profile_name: str) -> Game:
    """The table game for a profile name (a packaged profile) or a path to a profile file."""
    from shoe_controller.games.baccarat.profile import load_profile
    from shoe_controller.games.baccarat.table_game import BaccaratTableGame

    return BaccaratTableGame(load_profile(profile_name))


def game_from_toml(text: str, origin: str = "<journalled profile>") -> Game:
    """The table game for a profile's TOML text (as journalled with each controller session),
    so that a replay never depends on a profile file that may have changed since."""
    from shoe_controller.games.baccarat.profile import profile_from_toml
    from shoe_controller.games.baccarat.table_game import BaccaratTableGame

    return BaccaratTableGame(profile_from_toml(text, origin))
