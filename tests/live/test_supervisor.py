"""Supervisor actions at a live table: PIN checked, journalled with who did them."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoe_controller.access import Limits, SupervisorHeldOffError
from shoe_controller.errors import CardCodeError, ShoeError
from shoe_controller.live.supervision import SupervisorAuthError

from .rig import (
    PIN,
    SUPERVISOR,
    check_matches_replay,
    check_no_card_lost,
    export,
    live_table,
    one_deck,
    plan_of,
    records_of,
)
from .test_irregularities import resolve

CARDS = one_deck(3)
PLAN = plan_of(CARDS)


def test_wrong_pin_or_unknown_supervisor_is_refused_and_journals_nothing(tmp_path: Path) -> None:
    with live_table(tmp_path, CARDS, mistakes=f"forced-pull@{PLAN.card(1, 1)}") as live:
        live.step_until(lambda: live.controller.table.alarm == "latched", "an irregularity")
        before = live.records()
        attempts = [
            ("clear", SUPERVISOR, "000000", SupervisorAuthError),
            ("clear", SUPERVISOR, PIN[:4], SupervisorAuthError),  # too short, however right
            ("clear", SUPERVISOR, "", SupervisorAuthError),
            ("clear", "mallory", PIN, SupervisorAuthError),
            ("end_shoe", "mallory", "000000", SupervisorAuthError),
            ("void_round", "table-system", PIN, SupervisorAuthError),  # reserved
            ("reboot", SUPERVISOR, PIN, ShoeError),  # no such action
        ]
        for action, who, pin, error in attempts:
            with pytest.raises(error) as caught:
                live.controller.supervisor(action, who, pin, reason="a reason")
            if error is SupervisorAuthError:
                assert isinstance(caught.value, PermissionError)
                assert who in str(caught.value)
                assert not pin or pin not in str(caught.value)  # a PIN is never echoed
        with pytest.raises(CardCodeError):
            live.controller.supervisor("enter_card", SUPERVISOR, PIN, card="ZZ")
        live.step_for(0.1)
        after = live.records()
        assert after == before  # nothing journalled, nothing applied
        assert live.controller.table.alarm == "latched"
        assert not [r for r in after if r.actor is not None]
        resolve(live, "clear")  # the right PIN works
        assert [r.actor for r in live.records() if r.actor] == [SUPERVISOR]


def test_void_round_is_journalled_and_keeps_its_cards_dealt(tmp_path: Path) -> None:
    with live_table(tmp_path, CARDS) as live:
        counter = PLAN.card(2, 2)
        live.shoe.pause_dealer_after(counter)
        live.wait_settled_at(counter, "round 2's 2nd card")
        live.supervise("void_round", reason="cards exposed")
        (record,) = records_of(live.records(), "supervisor", action="void_round")
        assert record.actor == SUPERVISOR and record.data["reason"] == "cards exposed"
        table = live.controller.table
        voided = [e for u in live.updates for e in u.events if e["type"] == "round_void"]
        assert voided == [{"type": "round_void", "round": 2, "supervisor": SUPERVISOR,
                           "reason": "cards exposed"}]
        # The round is over (the betting timer may already have opened the next one).
        assert table.state in ("in_play.result_confirmed", "in_play.betting_open")
        assert table.alarm == "ok" and live.view.exit_locked
        assert table.cards_dealt == counter  # the voided round's cards stay dealt
        live.shoe.resume_dealer()
        live.step_until(lambda: table.round_number == 3 and live.round_cards() > 0,
                        "round 3 to be dealt")
        assert table.game.cards_in_round()[0]["card"] == CARDS[counter].code
        live.play_to_end()
        lines = check_no_card_lost(live)
        voids = [line for line in lines if line["type"] == "round_void"]
        assert voids == [{"type": "round_void", "round": 2, "supervisor": SUPERVISOR,
                          "reason": "cards exposed"}]
        assert lines[-1]["cards_used"] == len(live.shoe.dealt())
        check_matches_replay(live, lines)


def test_end_shoe_early_is_journalled_with_who_did_it(tmp_path: Path) -> None:
    with live_table(tmp_path, CARDS) as live:
        counter = PLAN.card(2, 3)
        live.shoe.pause_dealer_after(counter)
        live.wait_settled_at(counter, "round 2's 3rd card")
        live.supervise("end_shoe", reason="shoe damaged")
        (record,) = records_of(live.records(), "supervisor", action="end_shoe")
        assert record.actor == SUPERVISOR and record.data["reason"] == "shoe damaged"
        assert live.controller.shoes_finished == 1
        finished = [e for u in live.updates for e in u.events if e["type"] == "shoe_finished"]
        assert finished == [{"type": "shoe_finished", "shoe": 1, "rounds": 2,
                             "cards_used": counter, "early": True, "supervisor": SUPERVISOR}]
        lines = check_no_card_lost(live)
        assert [line["type"] for line in lines] == ["burn", "round", "round_void", "shoe_end"]
        assert lines[2] == {"type": "round_void", "round": 2, "supervisor": SUPERVISOR,
                            "reason": "shoe ended early"}
        assert lines[-1] == {"type": "shoe_end", "rounds": 1, "cards_used": counter}
        assert export(live.journal_path) == lines


def test_a_client_held_off_journals_nothing_and_another_client_still_acts(
        tmp_path: Path) -> None:
    with live_table(tmp_path, CARDS, mistakes=f"forced-pull@{PLAN.card(1, 1)}") as live:
        live.step_until(lambda: live.controller.table.alarm == "latched", "an irregularity")
        before = live.records()
        for _ in range(Limits().pair_failures):
            with pytest.raises(SupervisorAuthError):
                live.controller.supervisor("clear", SUPERVISOR, "000000", client="203.0.113.9")
        with pytest.raises(SupervisorHeldOffError, match="too many wrong PINs") as held:
            live.controller.supervisor("clear", SUPERVISOR, PIN, client="203.0.113.9")
        assert isinstance(held.value, PermissionError) and PIN not in str(held.value)
        live.step_for(0.1)
        assert live.records() == before and live.controller.table.alarm == "latched"
        resolve(live, "clear")  # alice at the table: another client, not held off
        assert [r.actor for r in live.records() if r.actor] == [SUPERVISOR]
