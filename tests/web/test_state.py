"""The display state folded from table events (the documented event shapes, docs/journal.md)."""

from __future__ import annotations

from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.web.state import Ingest, TableHistory, compute_odds

PROFILE = load_profile("punto-banco-1d")


def result(number: int, outcome: str) -> dict[str, Any]:
    return {"type": "round_result", "round": number, "player": ["9S", "TD"],
            "banker": ["2H", "3C"], "player_total": 9, "banker_total": 5, "outcome": outcome,
            "natural": True, "player_pair": False, "banker_pair": False}


def round_events(number: int, outcome: str = "player") -> list[dict[str, Any]]:
    return [
        {"type": "round_opened", "round": number},
        {"type": "betting_closed", "round": number},
        *({"type": "card", "round": number, "target": target, "position": i + 1, "card": code,
           "source": "scanner", "counter": 10 * number + i}
          for i, (target, code) in enumerate(
              [("player", "9S"), ("banker", "2H"), ("player", "TD"), ("banker", "3C")])),
        result(number, outcome),
        {"type": "result_confirmed", "round": number},
    ]


def history_with(events: list[dict[str, Any]]) -> TableHistory:
    history = TableHistory(PROFILE)
    history.apply(Ingest({"cards_dealt": 6}, events, {}, 1, 0.0))
    return history


def test_hands_and_totals_of_the_round_being_dealt() -> None:
    events = [{"type": "shoe_loaded", "shoe": 1}, *round_events(1)[:4]]
    doc = history_with(events).snapshot(1)["round"]
    assert doc["player"] == {"cards": ["9S"], "total": 9}
    assert doc["banker"] == {"cards": ["2H"], "total": 2}
    assert doc["result"] is None and doc["void"] is None


def test_recall_shows_the_last_ten_finished_rounds_while_one_is_dealt() -> None:
    events: list[dict[str, Any]] = [{"type": "shoe_loaded", "shoe": 1}]
    for number in range(1, 12):
        events += round_events(number)
    events += round_events(12)[:3]  # round 12 in progress
    recall = history_with(events).recall_document()
    assert [r["round"] for r in recall] == list(range(2, 12))


def test_a_voided_round_is_recalled_with_who_voided_it() -> None:
    events = [{"type": "shoe_loaded", "shoe": 1}, *round_events(1)[:3],
              {"type": "round_void", "round": 1, "supervisor": "alice", "reason": "misdeal"}]
    history = history_with(events)
    assert history.recall_document()[0]["void"] == {"supervisor": "alice", "reason": "misdeal"}
    assert history.supervisor_log == [{"type": "round_void", "supervisor": "alice",
                                       "reason": "misdeal", "round": 1,
                                       "text": "Round 1 voided: misdeal"}]
    assert history.snapshot(1)["stats"]["voided"] == 1


def test_the_supervisor_log_says_what_happened_in_words() -> None:
    """Reported: the panel's log showed raw ids like ``clear_refused``."""
    events = [{"type": "shoe_loaded", "shoe": 1}, *round_events(1)[:3],
              {"type": "clear_refused", "supervisor": "alice",
               "reason": "Player's 1st card (card 3 out of the shoe) was not read: enter it, "
                         "or void the round"},
              {"type": "irregularity_cleared", "kind": "misread", "supervisor": "alice",
               "round": 1, "card": "QS", "source": "supervisor"},
              {"type": "irregularity_cleared", "kind": "lid_opened", "supervisor": "bob",
               "round": 1},
              {"type": "irregularity_cleared", "kind": "something_new", "supervisor": "bob"},
              {"type": "shoe_finished", "shoe": 1, "supervisor": "bob", "early": True}]
    texts = [entry["text"] for entry in history_with(events).supervisor_log]
    assert texts == [
        ("Clear refused: Player's 1st card (card 3 out of the shoe) was not read: enter it, "
         "or void the round"),
        f"Cleared: {Irregularity.MISREAD.prompt} (card entered by hand: QS)",
        f"Cleared: {Irregularity.LID_OPENED.prompt}",
        "Cleared: something new",
        "Shoe 1 ended early",
    ]
    for text in texts:
        assert "_" not in text


def test_a_new_shoe_starts_new_statistics_and_roads_but_keeps_the_old_shoe() -> None:
    events = [{"type": "shoe_loaded", "shoe": 1}, *round_events(1, "banker"),
              {"type": "shoe_finished", "shoe": 1, "rounds": 1, "cards_used": 6, "early": True,
               "supervisor": "alice"},
              {"type": "shoe_loaded", "shoe": 2}]
    history = history_with(events)
    snapshot = history.snapshot(3)
    assert snapshot["stats"]["shoe"] == 2 and snapshot["stats"]["rounds"] == 0
    assert snapshot["roads"]["bead_plate"] == []
    assert [s.summary()["rounds"] for s in history.shoes] == [1, 0]
    assert history.rounds_of(1)[0]["result"]["outcome"] == "banker"  # type: ignore[index]
    assert history.rounds_of(7) is None


def test_odds_are_due_after_a_round_and_reported_with_the_round() -> None:
    history = history_with([{"type": "shoe_loaded", "shoe": 1}, *round_events(1)])
    wanted = history.odds_input()
    assert wanted is not None and wanted[:2] == (1, 1)
    assert history.odds_input() is None  # not due again until the next round
    odds = compute_odds(PROFILE, 1, 1, {Card.from_code("9S"): 1, Card.from_code("TD"): 1})
    assert odds["cards_left"] == 50 and odds["error"] is None
    assert {b["bet"] for b in odds["bets"]} == set(PROFILE.bets)


def test_impossible_composition_is_reported_not_raised() -> None:
    odds = compute_odds(PROFILE, 1, 0, {Card.from_code("9S"): 2})  # one deck holds one 9S...
    assert odds["error"] is None  # ...but two nines of rank 9 is fine for rank counts
    too_many = compute_odds(PROFILE, 1, 0, {Card.from_code("9S"): 5})
    assert too_many["error"] and too_many["bets"] == []
