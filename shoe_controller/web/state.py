"""What the web display shows, folded from table events (runs on the web server's thread).

The controller's thread only hands over an :class:`Ingest` (a copy of the view, the events and
the cards seen); everything here runs on the web thread, so nothing in the display can slow the
table down. :class:`TableHistory` keeps the shoes, rounds, statistics and the recall;
:meth:`TableHistory.snapshot` is the JSON document the page renders and the API serves.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.display.summary import ShoeStats
from shoe_controller.games.baccarat.odds import OddsError, exact_odds, remaining
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.games.baccarat.rules import hand_total
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.web.roads import RoundMark, roads

#: Events after which the odds of the remaining shoe change for the next round.
ODDS_EVENTS = frozenset({"shoe_loaded", "burn", "round_result", "round_void", "shoe_finished"})
#: Events a supervisor's action leads to (shown in the panel's log).
SUPERVISOR_EVENTS = frozenset({"irregularity_cleared", "clear_refused", "round_void",
                               "shoe_finished"})
RECALL_ROUNDS = 10
KEEP_SHOES = 50
SUPERVISOR_LOG = 10


@dataclass(frozen=True)
class Ingest:
    """One update as the controller's thread hands it over (copies only, nothing shared)."""

    view: dict[str, Any]
    events: list[dict[str, Any]]
    seen: dict[Card, int]
    shoe: int
    at: float  # time.monotonic() when the controller applied the input
    #: Blackjack: the round's cards as outputs may see them (hole card face down until
    #: revealed) and the seconds left to answer what is awaited; None for baccarat.
    table_cards: list[dict[str, Any]] | None = None
    answer_left: float | None = None


@dataclass
class ShoeRecord:
    number: int
    burn: list[str] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    stats: ShoeStats = field(default_factory=ShoeStats)
    finished: bool = False

    def summary(self) -> dict[str, Any]:
        return {"shoe": self.number, "rounds": self.stats.rounds, "finished": self.finished,
                "stats": self.stats.to_dict()}

    def marks(self) -> list[RoundMark]:
        # Baccarat's roads; a blackjack result (no outcome) has no mark on them.
        return [RoundMark.from_result(r["result"]) for r in self.rounds
                if r.get("result") and "outcome" in r["result"]]


def irregularity_words(kind: str) -> str:
    """What an irregularity kind is called on the dealer's screen (its prompt)."""
    try:
        return Irregularity(kind).prompt
    except ValueError:
        return kind.replace("_", " ")


def supervisor_text(event: dict[str, Any]) -> str:
    """A supervisor's action as the panel's log says it, in words for people (not ids)."""
    kind = event["type"]
    reason = str(event.get("reason") or "")
    if kind == "clear_refused":
        return f"Clear refused: {reason or 'the table refused it'}"
    if kind == "irregularity_cleared":
        text = f"Cleared: {irregularity_words(str(event.get('kind', '')))}"
        if event.get("card") and event.get("source") == "supervisor":
            text += f" (card entered by hand: {event['card']})"
        return text
    if kind == "round_void":
        return f"Round {event.get('round', '?')} voided" + (f": {reason}" if reason else "")
    if kind == "shoe_finished":
        return f"Shoe {event.get('shoe', '?')} ended early"
    return kind.replace("_", " ")


def _hand(cards: list[dict[str, Any]], target: str) -> dict[str, Any]:
    codes = [c["card"] for c in cards if c["target"] == target]
    return {"cards": codes, "total": hand_total(Card.from_code(code) for code in codes)
            if codes else None}


class TableHistory:
    """Shoes, rounds, recall and statistics, folded from table events in order."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        #: A blackjack profile (its rules): the display shows seats and hands, no roads/odds.
        self.blackjack = hasattr(profile, "rules")
        self.shoe_cards = 52 * (profile.rules.decks if self.blackjack else profile.decks)
        self.table_cards: list[dict[str, Any]] = []
        self.answer_left: float | None = None
        self.shoes: list[ShoeRecord] = []
        self.current: dict[str, Any] | None = None  # the round being dealt or just shown
        #: The last finished round before ``current``: the dealer sees its result (or that it
        #: was voided) until the next round's first card, however fast the table moved on.
        self.previous: dict[str, Any] | None = None
        self.recall: list[dict[str, Any]] = []
        self.supervisor_log: list[dict[str, Any]] = []
        self.view: dict[str, Any] = {}
        self.seen: dict[Card, int] = {}
        self.odds: dict[str, Any] | None = None
        self.odds_due = True
        self.last_card_at: float | None = None
        self._roads_cache: tuple[int, int, dict[str, Any]] | None = None

    # ------------------------------------------------------------------ folding
    def apply(self, item: Ingest) -> None:
        self.view = item.view
        self.seen = item.seen
        if item.table_cards is not None:
            self.table_cards = item.table_cards
            self.answer_left = item.answer_left
        for event in item.events:
            self.add_event(event)
            if event["type"] in ("card", "burn_card"):
                self.last_card_at = item.at

    def add_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ODDS_EVENTS:
            self.odds_due = True
        if kind == "shoe_loaded":
            self.shoes.append(ShoeRecord(int(event["shoe"])))
            del self.shoes[:-KEEP_SHOES]
            self.current = self.previous = None
        shoe = self.shoes[-1] if self.shoes else None
        if shoe is not None and not (self.blackjack and kind == "round_result"):
            shoe.stats.add(event)  # baccarat's statistics (a blackjack result has no outcome)
        if kind in SUPERVISOR_EVENTS and event.get("supervisor"):
            entry = {key: value for key, value in event.items() if key in (
                "type", "kind", "supervisor", "reason", "round")}
            entry["text"] = supervisor_text(event)
            self.supervisor_log = [*self.supervisor_log, entry][-SUPERVISOR_LOG:]
        if shoe is None:
            return
        if kind == "burn":
            shoe.burn = list(event["cards"])
        elif kind == "round_opened":
            if self.current is not None and (self.current["result"] or self.current["void"]):
                self.previous = self.current
            self.current = {"shoe": shoe.number, "round": event["round"], "cards": [],
                            "result": None, "void": None, "irregularities": [], "seats": []}
            shoe.rounds.append(self.current)
            # One more than shown: the round in progress is not recalled until it is over.
            self.recall = [*self.recall, self.current][-(RECALL_ROUNDS + 1):]
        elif self.current is None:
            return
        elif kind == "card":
            self.current["cards"].append({key: event.get(key) for key in (
                "target", "position", "card", "source", "counter")})
        elif kind == "irregularity":
            self.current["irregularities"].append(event["kind"])
        elif kind == "betting_closed" and event.get("seats"):
            self.current["seats"] = list(event["seats"])
        elif kind == "round_result":
            self.current["result"] = {key: value for key, value in event.items()
                                      if key not in ("type", "round")}
        elif kind == "round_void":
            self.current["void"] = {"supervisor": event.get("supervisor"),
                                    "reason": event.get("reason", "")}
        elif kind == "shoe_finished":
            shoe.finished = True

    # ------------------------------------------------------------------ odds
    def odds_input(self) -> tuple[int, int, dict[Card, int]] | None:
        """What the next odds computation needs (and marks it as no longer due)."""
        if self.blackjack:
            return None  # baccarat's bets; blackjack's figures are not shown live
        if not self.odds_due:
            return None
        self.odds_due = False
        shoe = self.shoes[-1].number if self.shoes else 0
        rounds = len(self.shoes[-1].marks()) if self.shoes else 0
        return shoe, rounds, dict(self.seen)

    # ------------------------------------------------------------------ documents
    def current_shoe(self) -> ShoeRecord | None:
        return self.shoes[-1] if self.shoes else None

    def roads(self) -> dict[str, Any]:
        shoe = self.current_shoe()
        if shoe is None:
            return roads([]).to_dict()
        marks = shoe.marks()
        key = (shoe.number, len(marks))
        if self._roads_cache is None or self._roads_cache[:2] != key:
            self._roads_cache = (*key, roads(marks).to_dict())
        return self._roads_cache[2]

    def round_document(self, record: dict[str, Any] | None) -> dict[str, Any] | None:
        if record is None:
            return None
        cards = record["cards"]
        return {
            "shoe": record["shoe"], "round": record["round"], "cards": list(cards),
            "player": _hand(cards, "player"), "banker": _hand(cards, "banker"),
            "result": record["result"], "void": record["void"],
            "irregularities": list(record["irregularities"]),
        }

    def stats(self) -> dict[str, Any]:
        shoe = self.current_shoe()
        stats = shoe.stats if shoe is not None else ShoeStats()
        cards_dealt = int(self.view.get("cards_dealt", stats.cards_dealt))
        return {**stats.to_dict(), "shoe": shoe.number if shoe else 0,
                "cards_left": max(0, self.shoe_cards - cards_dealt) if shoe else None,
                "shoe_cards": self.shoe_cards}

    def snapshot(self, version: int) -> dict[str, Any]:
        """The whole display state: what the page renders after every update."""
        return {
            "version": version,
            "profile": self.profile.name,
            "view": self.view,
            "round": self.round_document(self.current),
            "previous_round": self.round_document(self.previous),
            "stats": self.stats(),
            "roads": self.roads(),
            "recall": self.recall_document(),
            "odds": self.odds,
            "supervisor_log": list(self.supervisor_log),
            "blackjack": self.blackjack_document(),
        }

    def blackjack_document(self) -> dict[str, Any] | None:
        if not self.blackjack:
            return None
        from shoe_controller.web.blackjack import blackjack_document

        current = self.current
        result = current["result"] if current is not None else None
        seats = current.get("seats", []) if current is not None else []
        return blackjack_document(self.table_cards, self.view, result, self.answer_left, seats)

    def recall_document(self, last: int = RECALL_ROUNDS) -> list[dict[str, Any]]:
        done = [r for r in self.recall if r["result"] or r["void"]]
        return [doc for r in done[-last:] if (doc := self.round_document(r)) is not None]

    def rounds_of(self, shoe_number: int | None) -> list[dict[str, Any]] | None:
        """Every round of a shoe (None: the current one); None if that shoe is not kept."""
        shoe = self.current_shoe() if shoe_number is None else next(
            (s for s in self.shoes if s.number == shoe_number), None)
        if shoe is None:
            return None
        return [doc for r in shoe.rounds if (doc := self.round_document(r)) is not None]


def compute_odds(profile: Profile, shoe: int, rounds: int, seen: dict[Card, int]
                 ) -> dict[str, Any]:
    """Exact house edge of every bet of ``profile`` on the shoe left after ``seen`` (~1 ms)."""
    started = time.perf_counter()
    base: dict[str, Any] = {"shoe": shoe, "after_round": rounds, "error": None}
    try:
        left = remaining(profile.decks, Counter(seen).elements())
        odds = exact_odds(left, profile)
    except OddsError as exc:
        return {**base, "cards_left": None, "bets": [], "outcomes": {}, "error": str(exc)}
    bets = [
        {"bet": name, "description": profile.bets[name].description,
         "house_edge": float(bet.house_edge), "player_edge": bet.house_edge < 0,
         "win": float(bet.win), "push": float(bet.push)}
        for name, bet in odds.bets.items()
    ]
    outcomes = {key: float(odds.probability(key)) for key in ("banker", "player", "tie")}
    return {**base, "cards_left": odds.cards_left, "bets": bets, "outcomes": outcomes,
            "seconds": time.perf_counter() - started}


__all__ = ["Ingest", "ShoeRecord", "TableHistory", "compute_odds"]
