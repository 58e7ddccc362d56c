"""The blackjack dealer view in headless Chromium (Debian's chromium, tests/conftest.py).

The whole stack runs (software shoe, controller, web server; tests/web/rig.py with a blackjack
profile); the test is the dealer (it pulls each card when the exit opens) and the table system
(it answers each decision through the controller's ``submit``, as the table-system client
does). The shoe is one deck, so every card's code is unique: the hole card's code must be
nowhere on the page, nor in ``/api/state``, until the dealer turns it over.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from shoe_controller.cards import new_shoe
from shoe_controller.games.registry import create_game
from shoe_controller.table.inputs import InsuranceDecision, PlayerDecision

from . import rig

expect.set_options(timeout=10_000)
SEATS_SEED = 0


@pytest.fixture
def blackjack_rig(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rig, "PROFILE", "blackjack-8d")
    monkeypatch.setattr(rig, "load_profile", lambda name: create_game(name).profile)



def deal_until(table: rig.WebTable, done: Any, what: str) -> None:
    for _ in range(60):
        if done():
            return
        if table.controller.view.due is not None and not table.controller.view.exit_locked:
            table.pull()
        else:
            table.wait(lambda: done() or (table.controller.view.due is not None
                                          and not table.controller.view.exit_locked),
                       what)
    assert done(), what


def test_seats_awaited_decision_and_the_hole_card_face_down_then_revealed(
        tmp_path: Path, page: Page, blackjack_rig: None) -> None:
    cards = new_shoe(1, 5)
    with rig.web_table(tmp_path, cards, betting_seconds=0.05) as table:
        controller = table.controller
        controller.player_seconds = 3600.0  # the test answers, as a table system would
        page.goto(table.url)
        deal_until(table, lambda: controller.view.awaiting is not None, "a wait for players")
        awaiting = controller.view.awaiting
        if awaiting.kind == "insurance":
            controller.submit(InsuranceDecision([], "table-system", awaiting.key))
            table.wait(lambda: controller.view.awaiting is None
                       or controller.view.awaiting.kind == "decision", "insurance to close")
        awaiting = controller.view.awaiting
        journal_cards = [c.card.code for c in table.sim.model.drawn]
        hole = journal_cards[len(journal_cards) - 1]  # the last card out is the hole card
        assert awaiting is not None and awaiting.kind == "decision"
        # Seats, the awaited decision with its options and countdown, the hole card down.
        seat = awaiting.seat
        expect(page.get_by_test_id("bj-table")).to_be_visible()
        expect(page.get_by_test_id(f"bj-seat-{seat}")).to_have_class(re.compile("deciding"))
        expect(page.get_by_test_id("bj-awaiting-text")).to_have_text(
            f"Seat {seat} to decide")
        expect(page.get_by_test_id("bj-options")).to_have_text(
            " / ".join(awaiting.options))
        expect(page.get_by_test_id("bj-countdown")).to_have_text(re.compile(r"^1[0-5] s$"))
        expect(page.get_by_test_id("hole-card")).to_have_count(1)
        expect(page.get_by_test_id("bj-dealer-cards").locator(".card")).to_have_count(2)
        assert hole not in page.content()
        assert hole not in json.dumps(table.get("/api/state"))
        # Every hand stands: the dealer's turn turns the hole card over.
        while (awaiting := controller.view.awaiting) is not None:
            controller.submit(PlayerDecision(awaiting.seat, awaiting.hand, "stand",
                                             "table-system", awaiting.key))
            table.wait(lambda key=awaiting.key: controller.view.awaiting is None
                       or controller.view.awaiting.key != key, "the next decision")
        deal_until(table, lambda: controller.view.state.endswith("result_shown"),
                   "the round's result")
        expect(page.get_by_test_id("hole-card")).to_have_count(0)
        expect(page.get_by_test_id("bj-dealer-cards").locator(f'[data-card="{hole}"]')
               ).to_have_count(1)
        result = controller.table.game.result()
        for seat_text, hands in result["seats"].items():
            expect(page.get_by_test_id(f"bj-seat-{seat_text}-hand-1")).to_contain_text(
                hands[0]["outcome"])
        expect(page.get_by_test_id("bj-awaiting")).to_be_hidden()
