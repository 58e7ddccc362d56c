"""The retained state payload of one table, folded from its view and reported events (pure).

The fold sees the events exactly as the table system gets them: the messages an
:class:`~shoe_controller.reporting.stream.EventStream` releases, so whatever the stream holds
back (a hole card not yet revealed) is neither in the events topic nor in the state. The view
(prompt, latched irregularities, exit lock) is the controller's own, as the dealer sees it.

:meth:`TableState.payload` is the document published, retained, on
``<prefix>/tables/<table_id>/state`` (schema: docs/mqtt/state.schema.json). Times are wall
clock (Unix seconds), the only clock a pit on another machine can compare with its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from shoe_controller.reporting.stream import Outgoing

#: Payload format of the state, event and status documents (docs/mqtt/README.md).
PAYLOAD_VERSION = 1
#: Results of the current shoe kept in the state: enough for a bead road of a whole shoe.
RECENT_RESULTS = 90
#: Reported events after which the exact odds of the cards left change.
ODDS_EVENTS = frozenset({"shoe_new", "shoe_burn", "round_result", "round_void",
                         "shoe_finished"})
_RESULT_KEYS = ("round", "outcome", "player_total", "banker_total", "natural", "player_pair",
                "banker_pair")


#: One reported event as the stream released it (what the events topic carries): the
#: table-system stream's own numbered event, so the pit and the game server see one numbering.
Released = Outgoing


class TableState:
    """What the pit needs to know about one table now, kept up to date event by event.

    Not thread-safe: the publisher's thread owns it. ``cards_total`` is the shoe's size
    (None if the game does not say)."""

    def __init__(self, table_id: str, *, game: str, profile: str, pit: str | None = None,
                 cards_total: int | None = None) -> None:
        self.table_id = table_id
        self.game = game
        self.profile = profile
        self.pit = pit
        self.cards_total = cards_total
        self.view: dict[str, Any] = {}
        self.view_at = 0.0
        self.shoe = 0
        self.cut_card_out = False
        self.shoe_finished = False
        self.last_result: dict[str, Any] | None = None
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_RESULTS)
        self.odds: dict[str, Any] | None = None
        self.last_seq = 0
        # (kind, counter, since) of every irregularity reported and not cleared, in order.
        self._latches: list[tuple[str, Any, float]] = []

    # ------------------------------------------------------------------ folding
    def add(self, events: Iterable[Released]) -> bool:
        """Fold reported events in; returns whether the odds of the cards left changed."""
        odds_due = False
        for event in events:
            self.last_seq = max(self.last_seq, event.seq)
            kind, data = event.type, event.data
            odds_due = odds_due or kind in ODDS_EVENTS
            if kind == "shoe_new":
                self.shoe = event.shoe
                self.cut_card_out = self.shoe_finished = False
                self.recent.clear()
                self.last_result = None
                self.odds = None
            elif kind == "shoe_cut_card":
                self.cut_card_out = True
            elif kind == "shoe_finished":
                self.shoe_finished = True
            elif kind == "round_result" and isinstance(data.get("dealer"), Mapping):
                self.last_result = blackjack_result(data, event.at)
            elif kind == "round_result":
                result = {key: data.get(key) for key in _RESULT_KEYS}
                result["at"] = event.at
                self.last_result = result
                if isinstance(result["outcome"], str):  # a game with one outcome a round
                    self.recent.append({
                        "round": result["round"], "outcome": result["outcome"],
                        **{flag: bool(result[flag]) for flag in (
                            "natural", "player_pair", "banker_pair")}})
            elif kind == "winning_number":  # roulette
                self.last_result = {"round": data.get("round"), "number": data.get("number"),
                                    "colour": data.get("colour"), "at": event.at}
                self.recent.append({"round": data.get("round"), "outcome": data.get("colour"),
                                    "number": data.get("number"), "natural": False,
                                    "player_pair": False, "banker_pair": False})
            elif kind == "round_void":
                self.recent.append({"round": data.get("round"), "outcome": "void",
                                    "natural": False, "player_pair": False,
                                    "banker_pair": False})
            elif kind == "irregularity":
                self._latches.append((str(data.get("kind")), data.get("counter"), event.at))
            elif kind == "irregularity_cleared":
                self._take(str(data.get("kind")))
        return odds_due

    def _take(self, kind: str) -> float | None:
        for index, (latched_kind, _counter, since) in enumerate(self._latches):
            if latched_kind == kind:
                del self._latches[index]
                return since
        return None

    def set_view(self, view: Mapping[str, Any], at: float) -> None:
        """The controller's view after an input (``at``: wall time it was handed over)."""
        self.view = dict(view)
        self.view_at = at

    def set_odds(self, odds: Mapping[str, Any] | None) -> None:
        """The exact odds of the cards left (``web.state.compute_odds``'s document)."""
        self.odds = None if odds is None else odds_summary(odds)

    # ------------------------------------------------------------------ the document
    def latched(self) -> list[dict[str, Any]]:
        """The view's latched irregularities, each with ``since``: when it was reported (the
        view's own time for one the stream never reported, e.g. latched before a restart of
        an older journal)."""
        pending = list(self._latches)
        out = []
        for item in self.view.get("latched") or ():
            kind = str(item.get("kind"))
            since = self.view_at
            for index, (latched_kind, _counter, at) in enumerate(pending):
                if latched_kind == kind:
                    since = at
                    del pending[index]
                    break
            out.append({"kind": kind, "prompt": str(item.get("prompt") or kind),
                        "detail": str(item.get("detail") or ""), "card": item.get("card"),
                        "round": item.get("round"), "since": since})
        return out

    def payload(self, *, version: int, session: str, at: float,
                table_system: bool | None) -> dict[str, Any]:
        """The state document (docs/mqtt/state.schema.json). ``version`` counts the states
        this publisher ``session`` produced; ``table_system``: connected, or None if the
        table reports to none."""
        view = self.view
        dealt = int(view.get("cards_dealt") or 0)
        return {
            "v": PAYLOAD_VERSION,
            "table_id": self.table_id,
            "pit": self.pit,
            "game": self.game,
            "profile": self.profile,
            "session": session,
            "version": version,
            "at": at,
            "state": str(view.get("state") or ""),
            "prompt": {"text": str(view.get("prompt") or ""),
                       "level": str(view.get("level") or ""),
                       "detail": str(view.get("detail") or "")},
            "exit_locked": bool(view.get("exit_locked", True)),
            "alarm": str(view.get("alarm") or "ok"),
            "round": int(view.get("round") or 0),
            "shoe": {"number": self.shoe, "cards_dealt": dealt,
                     "cards_total": self.cards_total,
                     "cut_card_out": self.cut_card_out, "finished": self.shoe_finished},
            "latched": self.latched(),
            "link": {"shoe": bool(view.get("link_up")), "table_system": table_system},
            "last_result": self.last_result,
            "recent_results": list(self.recent),
            "odds": self.odds,
            "last_event_seq": self.last_seq,
        }


def blackjack_result(data: Mapping[str, Any], at: float) -> dict[str, Any]:
    """A blackjack round's last result for the pit: the dealer's total and whether it is a
    blackjack or a bust, and each seat's hands (in play order) with total, flags, outcome and
    payout (units of the original bet, as ``shoe replay``). No card: the round's result is
    released only with the hole card's reveal, but a pit tile needs totals, not cards, and a
    state without codes cannot leak one."""
    dealer = data.get("dealer") or {}
    seats = data.get("seats")
    if not isinstance(seats, Mapping):
        seats = {}
    return {
        "round": data.get("round"),
        "dealer": {"total": dealer.get("total"), "blackjack": bool(dealer.get("blackjack")),
                   "bust": bool(dealer.get("bust"))},
        "seats": {str(seat): [{key: hand.get(key) for key in _BLACKJACK_HAND_KEYS}
                              for hand in hands if isinstance(hand, Mapping)]
                  for seat, hands in seats.items() if isinstance(hands, list)},
        "at": at,
    }


_BLACKJACK_HAND_KEYS = ("total", "soft", "blackjack", "bust", "doubled", "outcome", "payout")


def odds_summary(odds: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the exact odds the floor watches: each bet's house edge, and the bets
    where the player has the edge now (a negative house edge: an alert on the pit)."""
    bets = [{"bet": str(b["bet"]), "house_edge": float(b["house_edge"])}
            for b in odds.get("bets") or ()]
    return {
        "after_round": int(odds.get("after_round") or 0),
        "cards_left": odds.get("cards_left"),
        "outcomes": {k: float(v) for k, v in (odds.get("outcomes") or {}).items()},
        "bets": bets,
        "player_edge": [b["bet"] for b in bets if b["house_edge"] < 0],
        "error": odds.get("error"),
    }
