"""A whole 8-deck shoe through the live table equals ``shoe replay`` of the same cards and
decisions, and the table-system stream never carries a hole card before its reveal.

The table is driven as a live one is: cards in shoe order, the cut card where the shoe's
sensor sees it, answers from the built-in players, with every fifth answer left to time out.
The decisions the table journalled are written as a decisions file (docs/blackjack.md) and
replayed by the foundation's ``replay_blackjack``; the round lines must be equal.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_controller.cards import new_shoe
from shoe_controller.games.blackjack.decisions import parse_decisions
from shoe_controller.games.blackjack.live_players import BuiltInPlayers, timeout_answer
from shoe_controller.games.blackjack.replay import replay_blackjack
from shoe_controller.reporting.stream import EventStream
from shoe_controller.table.inputs import BettingCommand, ButtonPressed, ShoeEventInput
from shoe_controller.table.machine import rebuild

from .table_driver import Driver


def play_shoe(seed: int, timeout_every: int = 5) -> tuple[Driver, list]:
    """Deal a whole shoe; returns the driver and the cards."""
    driver = Driver()
    game = driver.table.game
    profile = game.profile
    cards = new_shoe(profile.rules.decks, seed)
    cut_at = len(cards) - profile.shoe.cut_card
    players = BuiltInPlayers(profile.rules, seed)
    answers = 0
    position = 0
    table = driver.table
    while table.state != "shoe_finished":
        view = table.view()
        if view.due is not None:
            if position == cut_at:
                driver.give(ShoeEventInput("cut_card"))
            driver.card(cards[position].code)
            position += 1
        elif view.awaiting is not None:
            answers += 1
            if timeout_every and answers % timeout_every == 0:
                driver.give(timeout_answer(view.awaiting))
            else:
                driver.give(players.answer(game, view.awaiting, table.shoe_number,
                                           table.round_number))
        elif table.state.endswith("result_shown"):
            driver.give(ButtonPressed())
        elif table.waiting_for_round():
            driver.give(BettingCommand("open"))
            driver.give(BettingCommand("close", "timer",
                                       players.seats(table.shoe_number, table.round_number)))
        else:
            raise AssertionError(f"stuck in {table.state}: {view.prompt}")
    return driver, cards


def decisions_file(events: list[dict]) -> str:
    """The decisions the table took, as a decisions file (one JSON line per round)."""
    import json

    lines, current = [], None
    for event in events:
        kind = event["type"]
        if kind == "betting_closed":
            current = {"round": event["round"], "seats": event["seats"], "insurance": [],
                       "actions": {str(seat): [] for seat in event["seats"]}}
        elif kind == "insurance":
            current["insurance"] = event["seats"]
        elif kind == "decision":
            current["actions"][str(event["seat"])].append(event["action"])
        elif kind == "round_result":
            lines.append(json.dumps(current))
    return "\n".join(lines) + "\n"


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6))
def test_a_whole_shoe_equals_its_replay(seed: int) -> None:
    driver, cards = play_shoe(seed)
    events = driver.all_events()
    profile = driver.table.game.profile
    decisions = parse_decisions(decisions_file(events), seats=profile.rules.seats)
    replayed = [line for line in replay_blackjack(cards, profile, decisions, None)
                if line["type"] == "round"]
    live = [{"type": "round", **{k: v for k, v in e.items() if k != "type"}}
            for e in events if e["type"] == "round_result"]
    assert live == replayed
    assert len(live) > 20
    kinds = {e["type"] for e in events}
    assert {"shoe_finished", "cut_card"} <= kinds
    assert any(e["type"] == "decision" and e["origin"] == "timeout" for e in events)


def test_the_stream_never_carries_a_hole_card_before_the_dealer_turns_it() -> None:
    driver, _cards = play_shoe(17)
    stream = EventStream("t1")
    released = []
    for seq, events in enumerate(driver.events, start=1):
        released += stream.add(seq, float(seq), events)
    assert stream.held == 0  # every hole card was revealed in the end
    hole_cards = [e for e in driver.all_events() if e["type"] == "card" and e.get("hold")]
    assert len(hole_cards) > 20
    for hole in hole_cards:
        round_ = hole["round"]
        in_round = [m for m in released if m.data.get("round") == round_
                    and m.type != "round_confirmed"]
        at = next(i for i, m in enumerate(in_round)
                  if m.type == "card" and m.data.get("reason") == "hole")
        # Nothing about the players' turn follows the hole card: it goes out when the
        # dealer's turn starts or the round ends, never while a seat may still decide.
        assert all(m.type not in ("decision_due", "decision_made", "insurance_closed",
                                  "dealer_check")
                   for m in in_round[at + 1:]), round_
        # And no message before it names the card's code in a dealer's hand.
        for message in in_round[:at]:
            assert not (message.type == "card" and message.data.get("hand") == "dealer"
                        and message.data.get("position") == hole["position"])
            assert hole["card"] not in str(message.data.get("dealer", "")), message


def test_a_restart_anywhere_in_a_round_resumes_exactly() -> None:
    driver, _cards = play_shoe(5, timeout_every=0)
    inputs = driver.inputs
    game_type = type(driver.table.game)
    profile = driver.table.game.profile
    rng = random.Random(5)
    # The fold of every prefix in a few rounds equals the live table at that point.
    live = Driver()
    # Right after every fifth hole card (between the hole card and its reveal), and anywhere.
    holes = [n for n, events in enumerate(driver.events, start=1)
             if any(e.get("hold") for e in events)]
    points = set(holes[::5]) | set(rng.sample(range(20, len(inputs)), 20))
    assert holes
    for n, item in enumerate(inputs, start=1):
        if n > 4:
            live.give(item)
        if n in points:
            again = rebuild(game_type(profile), inputs[:n])
            assert again.snapshot() == live.table.snapshot(), n
