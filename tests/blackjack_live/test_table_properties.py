"""Hypothesis drives a blackjack table with any mix of cards, answers (legal, illegal, for the
wrong hand, late, timeouts), stray cards, voids and clears, and checks after every input:

* the exit is unlocked only when a card is due, and never while the players are awaited;
* the fold of the inputs so far rebuilds exactly the live table;
* what the listeners would be shown (``Withheld``) never holds a hole card before its reveal;
* a refused answer changes nothing but the notice.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_controller.cards import new_shoe
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    InsuranceDecision,
    PlayerDecision,
    SupervisorAction,
)
from shoe_controller.table.machine import rebuild
from shoe_controller.table.secrecy import Withheld

from .table_driver import Driver

ACTIONS = ["hit", "stand", "double", "split", "surrender"]

moves = st.lists(st.one_of(
    st.tuples(st.just("card")),
    st.tuples(st.just("answer"), st.sampled_from(ACTIONS), st.booleans()),
    st.tuples(st.just("wrong"), st.integers(0, 8), st.integers(0, 3), st.sampled_from(ACTIONS)),
    st.tuples(st.just("insure"), st.lists(st.integers(0, 8), max_size=3)),
    st.tuples(st.just("late"),),
    st.tuples(st.just("stray"),),
    st.tuples(st.just("clear"),),
    st.tuples(st.just("void"),),
    st.tuples(st.just("confirm"),),
    st.tuples(st.just("betting"), st.lists(st.integers(0, 8), max_size=7)),
), min_size=5, max_size=120)


def without_notice(snapshot: dict) -> dict:
    view = dict(snapshot["view"])
    view.pop("detail")
    return {**snapshot, "view": view}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), moves)
def test_any_sequence_keeps_the_invariants(seed: int, plan: list) -> None:
    driver = Driver()
    cards = iter(new_shoe(8, seed))
    driver.burn()
    withheld = Withheld()
    for events in driver.events:
        withheld.visible(events)
    old_keys: list[str] = []
    for move in plan:
        table = driver.table
        view = table.view()
        if view.awaiting is not None and view.awaiting.key not in old_keys:
            old_keys.append(view.awaiting.key)
        before = without_notice(table.snapshot())
        kind = move[0]
        if kind == "card" or kind == "stray":
            events = driver.card(next(cards).code)
        elif kind == "answer" and view.awaiting is not None:
            aw = view.awaiting
            if aw.kind == "insurance":
                events = driver.give(InsuranceDecision(list(aw.seats[:1]), "table-system",
                                                       aw.key if move[2] else ""))
            else:
                events = driver.give(PlayerDecision(aw.seat, aw.hand, move[1], "table-system",
                                                    aw.key if move[2] else ""))
        elif kind == "wrong":
            events = driver.decide(move[1], move[2], move[3])
        elif kind == "insure":
            events = driver.insure(move[1])
        elif kind == "late" and len(old_keys) > 1 and view.awaiting is not None:
            aw = view.awaiting
            events = driver.give(PlayerDecision(aw.seat or 1, aw.hand, "stand", "table-system",
                                                old_keys[0]))
        elif kind == "clear":
            events = driver.give(SupervisorAction("clear", "pit"))
        elif kind == "void":
            events = driver.give(SupervisorAction("void_round", "pit", None, "test"))
        elif kind == "confirm":
            events = driver.give(ButtonPressed())
        elif kind == "betting":
            driver.give(BettingCommand("open"))
            before = without_notice(table.snapshot())
            events = driver.give(BettingCommand("close", "table-system", move[1]))
        else:
            continue
        refused = [e for e in events if e["type"].endswith("_refused")]
        if refused:
            assert without_notice(table.snapshot()) == before, refused
        view = table.view()
        if view.awaiting is not None:
            assert view.exit_locked and view.due is None
        if not view.exit_locked:
            assert view.due is not None
        shown = withheld.visible(events)
        revealing = any(e["type"] == "hole_card_revealed" for e in events)
        for event in shown:
            if event["type"] == "card" and event.get("reason") == "hole":
                assert revealing, "a hole card shown without its reveal"
        if any(e["type"] == "card" and e.get("hold") for e in events) and not revealing:
            hole = next(e["card"] for e in events if e.get("hold"))
            assert all(e.get("card") != hole for e in shown)
    again = rebuild(type(driver.table.game)(driver.table.game.profile), driver.inputs)
    assert again.snapshot() == driver.table.snapshot()


def test_a_card_code_is_never_in_what_is_shown_before_its_reveal() -> None:
    """The plain statement, on a hand-made round: the hole card 9C (unique in these cards)."""
    driver = Driver()
    driver.burn()
    withheld = Withheld()
    shown: list[dict] = []
    for events in driver.events:
        shown += withheld.visible(events)
    driver.round([1])
    for code in ["TD", "6S", "7H", "9C"]:  # seat 1: T+7 = 17 v 6; hole 9C
        shown += withheld.visible(driver.card(code))
    assert "9C" not in repr(shown)
    shown += withheld.visible(driver.decide(1, 1, "stand"))
    assert "9C" in repr(shown) and withheld.held == 0
