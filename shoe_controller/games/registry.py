"""Which game a table profile plays, and building that game for the table.

Baccarat is the only game so far; blackjack and roulette profiles will name their game here.
"""

from __future__ import annotations

from shoe_controller.table.game import Game


def create_game(profile_name: str) -> Game:
    """The table game for a profile name (a packaged profile) or a path to a profile file."""
    from shoe_controller.games.baccarat.profile import load_profile
    from shoe_controller.games.baccarat.table_game import BaccaratTableGame

    return BaccaratTableGame(load_profile(profile_name))
