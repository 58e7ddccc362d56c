"""Playing cards, card codes and shoe files.

Card codes are used everywhere in this product: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` followed by
suit ``S H D C`` (``AS``, ``TD``, ``9H``). On the wire (see ``firmware_protocol/SPEC.md``) a card
is two bytes: rank 1..13 (A=1 ... K=13) and suit 0..3 (S, H, D, C); :meth:`Card.from_wire` and
:attr:`Card.wire` convert.

Shoe file format (used by the simulator and by replay): UTF-8 text (a leading byte-order mark
is ignored), card codes separated by whitespace in dealing order from the first card out; ``#``
starts a comment that runs to the end of the line. A bad token is reported with its line number
(counting ``\n`` line ends, as editors and ``grep -n`` do) and the token itself. Card codes are
ASCII only: no other character is read as a rank or suit, even one that upper-cases to one.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shoe_controller.errors import CardCodeError, ShoeFileError

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "SHDC"


class Suit(enum.IntEnum):
    """Suit, numbered as on the wire."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def char(self) -> str:
        return SUIT_CHARS[self.value]


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One physical card. ``rank`` is 1 (ace) to 13 (king); ``suit`` a :class:`Suit`."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not (isinstance(self.rank, int) and 1 <= self.rank <= 13):
            raise CardCodeError(f"card rank must be 1..13 (A..K), got {self.rank!r}")
        if not isinstance(self.suit, Suit):
            try:
                object.__setattr__(self, "suit", Suit(self.suit))
            except ValueError:
                raise CardCodeError(f"card suit must be 0..3 (S,H,D,C), got {self.suit!r}") from None

    @classmethod
    def from_code(cls, code: str) -> Card:
        """Parse ``AS``, ``td`` (case-insensitive) or ``10H`` (``10`` accepted for ``T``)."""
        text = code.strip()
        # ASCII first: str.upper() maps some other letters onto ours ("\u017f" -> "S").
        text = text.upper() if text.isascii() else text
        if text.startswith("10") and len(text) == 3:
            text = "T" + text[2:]
        if len(text) != 2 or text[0] not in RANK_CHARS or text[1] not in SUIT_CHARS:
            raise CardCodeError(
                f"unknown card code {code!r}: expected rank A23456789TJQK then suit SHDC, e.g. 'AS'"
            )
        return cls(RANK_CHARS.index(text[0]) + 1, Suit(SUIT_CHARS.index(text[1])))

    @classmethod
    def from_wire(cls, rank: int, suit: int) -> Card:
        """Build a card from the wire's rank and suit bytes; raises :class:`CardCodeError`."""
        return cls(rank, Suit(suit) if 0 <= suit <= 3 else suit)  # type: ignore[arg-type]

    @property
    def code(self) -> str:
        return RANK_CHARS[self.rank - 1] + self.suit.char

    @property
    def rank_char(self) -> str:
        return RANK_CHARS[self.rank - 1]

    @property
    def wire(self) -> tuple[int, int]:
        return self.rank, int(self.suit)

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"


def deck() -> list[Card]:
    """One 52-card deck in a fixed order (suits S,H,D,C; ranks A..K)."""
    return [Card(rank, suit) for suit in Suit for rank in range(1, 14)]


def new_shoe(decks: int, seed: int | None = None) -> list[Card]:
    """``decks`` decks shuffled by a seeded Fisher-Yates shuffle (reproducible per seed)."""
    if decks < 1:
        raise ValueError(f"a shoe needs at least one deck, got {decks}")
    cards = deck() * decks
    random.Random(seed).shuffle(cards)
    return cards


def parse_shoe(text: str, source: str = "<shoe>") -> list[Card]:
    """Parse shoe-file text; raises :class:`ShoeFileError` naming source, line and token."""
    cards: list[Card] = []
    # split("\n"), not splitlines(): that also breaks at \x0b, \x0c, \x1c..\x1e, \x85, \u2028
    # and \u2029, so the line numbers reported would not be the ones an editor shows.
    for line_number, line in enumerate(text.split("\n"), start=1):
        for token in line.split("#", 1)[0].split():
            try:
                cards.append(Card.from_code(token))
            except CardCodeError:
                raise ShoeFileError(
                    f"{source}:{line_number}: bad card code {token!r} "
                    "(expected rank A23456789TJQK then suit SHDC, e.g. 'AS')"
                ) from None
    return cards


def read_shoe_file(path: str | Path) -> list[Card]:
    """Read a shoe file; raises :class:`ShoeFileError` (also for unreadable files)."""
    try:
        # bytes.decode, not read_text: the incremental utf-8-sig decoder behind read_text
        # silently drops a file's last bytes when they are a partial byte-order mark (b"\xef").
        text = Path(path).read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ShoeFileError(f"{path}: cannot read shoe file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ShoeFileError(f"{path}: cannot read shoe file: not UTF-8 text ({exc.reason} at "
                            f"byte {exc.start})") from exc
    return parse_shoe(text.replace("\r\n", "\n").replace("\r", "\n"), str(path))


def format_shoe(cards: Iterable[Card], per_line: int = 13) -> str:
    """Shoe-file text for ``cards``, ``per_line`` codes per line."""
    codes = [card.code for card in cards]
    lines = (" ".join(codes[i : i + per_line]) for i in range(0, len(codes), per_line))
    return "\n".join(lines) + "\n"


def codes(cards: Iterable[Card]) -> list[str]:
    return [card.code for card in cards]
