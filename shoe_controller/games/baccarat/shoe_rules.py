"""The shoe-level rules of a table (decks, burn, cut card, last round) as a small value.

Kept apart from :mod:`.profile` so the pure :class:`~.shoe_procedure.ShoeDealer` depends on
nothing but this dataclass (the live table may build one without a TOML file).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Burn procedures: "turn-and-burn" turns the first card and burns as many more as its points
#: (10/J/Q/K count 10); "fixed" burns ``burn_count`` cards face down.
BURN_PROCEDURES = ("turn-and-burn", "fixed")
#: Last-round rules: "finish-and-one-more" (cut card during a round: finish it and deal one more;
#: before a round's first card: that round is the last) or "finish-current" (the round in which
#: the cut card appears is the last; before a round's first card: that round is the last).
LAST_ROUND_RULES = ("finish-and-one-more", "finish-current")


@dataclass(frozen=True, slots=True)
class ShoeRules:
    decks: int = 8
    burn_procedure: str = "turn-and-burn"
    burn_count: int = 0
    #: Cards behind the cut card (it comes out before the card at len(shoe) - cut_card).
    cut_card: int = 14
    last_round: str = "finish-and-one-more"

    def __post_init__(self) -> None:
        if self.burn_procedure not in BURN_PROCEDURES:
            raise ValueError(f"burn procedure must be one of {BURN_PROCEDURES}")
        if self.last_round not in LAST_ROUND_RULES:
            raise ValueError(f"last-round rule must be one of {LAST_ROUND_RULES}")
        if self.decks < 1 or self.burn_count < 0 or self.cut_card < 0:
            raise ValueError("decks must be >= 1, burn_count and cut_card >= 0")
