"""What the dealer and the operator are told (issue 15): prompts while the shoe is not
connected, dealer wording for misreads and lost links, a log line per irregularity, voids
with a reason."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from firmware_protocol import messages as wire
from firmware_protocol.link import LinkLost
from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.registry import create_game
from shoe_controller.journal import Journal
from shoe_controller.logs import JsonLinesFormatter
from shoe_controller.table.controller import TableController, dealer_reason
from shoe_controller.table.inputs import (
    CameraDeclined,
    CardMisread,
    LinkChanged,
    SessionStarted,
    SupervisorAction,
)
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.table.machine import Level, Table, TableSettings
from shoe_controller.transports.base import TransportEvent, TransportEventKind

from .driver import Driver
from .test_controller_link_grace import FakeConnection, controller_mid_round, link_up

C = Card.from_code


# -- the view while the shoe is not connected (pure table) -------------------------------


def fresh_table() -> Table:
    table = Table(create_game("punto-banco-8d"))
    table.handle(SessionStarted("punto-banco-8d"))
    return table


def test_a_table_without_its_shoe_says_so_even_with_no_shoe_loaded() -> None:
    """Was "Load a shuffled shoe" with no alarm while the shoe was not even connected."""
    table = fresh_table()
    view = table.view(link_detail="cannot reach the shoe on /dev/ttyNOPE0")
    assert view.prompt == "Shoe not connected: check its cable"
    assert view.level is Level.ERROR
    assert "/dev/ttyNOPE0" in view.detail and view.exit_locked


def test_the_first_seconds_say_connecting_not_an_alarm() -> None:
    view = fresh_table().view(connecting=True)
    assert view.prompt == "Connecting to the shoe..."
    assert view.level is Level.WAIT


def test_once_connected_the_dealer_is_told_to_load_a_shoe() -> None:
    table = fresh_table()
    table.handle(LinkChanged(True))
    assert table.view(connecting=True).prompt == "Load a shuffled shoe"


# -- the same through the controller, whose clock decides ---------------------------------


def bare_controller(tmp_path: Path, connection: FakeConnection | None = None):
    now = [0.0]
    connection = connection or FakeConnection()
    journal = Journal(tmp_path / "j.sqlite", durability="normal")
    controller = TableController(journal=journal, table=Table(create_game("punto-banco-8d")),
                                 profile="punto-banco-8d", connection=connection,
                                 betting_seconds=0, clock=lambda: now[0])
    controller.start()
    return controller, connection, journal, now


def test_controller_view_goes_from_connecting_to_not_connected_and_tells_listeners(
        tmp_path: Path) -> None:
    controller, connection, journal, now = bare_controller(tmp_path)
    prompts: list[tuple[str, str]] = []
    controller.listeners.append(lambda u: prompts.append((u.view.prompt, u.view.level.value)))
    assert controller.view.prompt == "Connecting to the shoe..."
    connection.inbox.append(TransportEvent(
        TransportEventKind.LOST, "/dev/ttyNOPE0: cannot open: no such file", "/dev/ttyNOPE0"))
    controller.step(0)
    now[0] += 6.0  # past the connect grace, with no input at all
    controller.step(0)
    assert controller.view.prompt == "Shoe not connected: check its cable"
    assert controller.view.level is Level.ERROR
    assert controller.view.detail.startswith("Cannot reach the shoe on /dev/ttyNOPE0")
    assert prompts[-1] == ("Shoe not connected: check its cable", "error")
    connection.inbox.append(link_up())
    controller.step(0)
    assert controller.view.prompt == "Load a shuffled shoe"
    journal.close()


def test_a_port_that_opens_but_never_answers_is_named(tmp_path: Path) -> None:
    connection = FakeConnection()
    connection.description = "socket://127.0.0.1:4000"  # type: ignore[attr-defined]
    controller, _, journal, now = bare_controller(tmp_path, connection)
    now[0] += 6.0
    controller.step(0)
    assert controller.view.prompt == "Shoe not connected: check its cable"
    assert "No answer from the shoe on socket://127.0.0.1:4000" in controller.view.detail
    journal.close()


def test_a_lost_link_is_the_shoe_that_stopped_answering(tmp_path: Path) -> None:
    controller, connection, journal, now = controller_mid_round(tmp_path)
    connection.inbox.append(LinkLost("no valid frame from the peer for 2 s"))
    controller.step(0)
    now[0] += 6.0
    controller.step(0)
    (latched,) = controller.view.latched
    assert latched["kind"] == "link_lost"
    assert latched["detail"] == "the shoe stopped answering"
    assert "no valid frame" not in controller.view.detail
    journal.close()


def test_dealer_reason_keeps_other_reasons() -> None:
    assert dealer_reason("no valid frame from the peer for 2 s") == "the shoe stopped answering"
    assert dealer_reason("cable pulled") == "cable pulled"
    assert dealer_reason("") == "shoe link lost"


# -- misread wording --------------------------------------------------------------------------


def misread_after_burn(driver: Driver) -> None:
    # burn: the 2 turned says two more cards are burned
    for code in ("2S", "3H", "4D"):
        driver.step_to_card()
        driver.draw(C(code))
    driver.step_to_card()
    driver.draw(C("9H"))  # Player's 1st
    driver.step_to_card()
    driver.draw(C("KD"))  # Banker's 1st
    driver.counter += 1
    driver.feed(CardMisread(driver.counter))  # Player's 2nd, counter 6


def test_a_misread_names_the_card_as_the_dealer_counts_it() -> None:
    """Was "card 6 for player": the shoe's counter, which counts the burn cards too."""
    driver = Driver()
    misread_after_burn(driver)
    (latched,) = driver.table.view().latched
    assert latched["detail"] == "Player's 2nd card"
    assert driver.table.view().detail.endswith("(Player's 2nd card)")


def test_the_misread_remedy_mentions_the_camera_only_where_there_is_one() -> None:
    driver = Driver()
    misread_after_burn(driver)
    remedy = driver.table.view().latched[0]["remedy"]
    assert "camera" not in remedy and "supervisor" in remedy
    with_camera = Driver()
    with_camera.table.settings = TableSettings(camera_fallback=True)
    misread_after_burn(with_camera)
    assert "camera" in with_camera.table.view().latched[0]["remedy"]
    assert "waiting for the camera" not in Irregularity.MISREAD.remedy


def test_once_the_camera_cannot_read_the_card_the_dealer_is_told_to_call_a_supervisor(
        ) -> None:
    """The dealer leaves a misread card under the camera; when the camera says it cannot
    read it (unsure, or no picture at all) the remedy says so at once, instead of leaving the
    dealer waiting for a camera that has given up. A word about another card changes
    nothing, the supervisor's entry resolves it as before, and the next misread starts
    again from the camera."""
    for outcome, said in (("declined", "The camera could not read it"),
                          ("no_frame", "The camera gave no picture")):
        driver = Driver()
        driver.table.settings = TableSettings(camera_fallback=True)
        misread_after_burn(driver)
        waiting = driver.table.view()
        assert waiting.latched[0]["remedy"].startswith("Leave the card face up under the camera")
        driver.feed(CameraDeclined(driver.counter - 1, outcome, "another card"))
        assert driver.table.view() == waiting
        driver.feed(CameraDeclined(driver.counter, outcome, "index found alone unsure"))
        view = driver.table.view()
        assert view.latched[0]["remedy"].startswith(said)
        assert "call a supervisor to enter the card" in view.latched[0]["remedy"]
        assert view.detail.startswith(said) and view.detail.endswith("(Player's 2nd card)")
        assert view.exit_locked and view.alarm == "latched"
        driver.feed(SupervisorAction("enter_card", "alice", C("5C")))
        assert driver.table.view().alarm == "ok"
        driver.feed(CameraDeclined(driver.counter, outcome, "late"))  # entered: nothing waits
        assert driver.table.view().alarm == "ok"
        driver.step_to_card()
        driver.counter += 1
        driver.feed(CardMisread(driver.counter))
        again = driver.table.view().latched[0]["remedy"]
        assert again.startswith("Leave the card face up under the camera"), again


# -- voids need a reason ------------------------------------------------------------------------


def test_the_table_refuses_a_void_without_a_reason() -> None:
    driver = Driver()
    misread_after_burn(driver)
    driver.feed(SupervisorAction("void_round", "alice", reason="  "))
    assert driver.table.refusal == "a void needs a reason"
    assert driver.table.alarm == "latched"
    driver.feed(SupervisorAction("void_round", "alice", reason="card exposed"))
    assert driver.table.refusal == ""
    assert driver.table.state.endswith("result_confirmed")


def test_the_controller_refuses_a_void_without_a_reason_before_the_pin(tmp_path: Path) -> None:
    controller, _, journal, _ = bare_controller(tmp_path)
    with pytest.raises(ShoeError, match="a void needs a reason"):
        controller.supervisor("void_round", "alice", "123456")
    journal.close()


# -- irregularities in the log ---------------------------------------------------------------


def test_one_warning_per_irregularity_latched_and_cleared_with_fields(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    controller, connection, journal, _ = controller_mid_round(tmp_path)
    caplog.set_level(logging.WARNING, logger="shoe_controller.table")
    connection.inbox.append(wire.ShoeStateChanged(wire.ShoeEvent.LID_OPENED, 4))
    controller.step(0)
    latched = [r for r in caplog.records if r.getMessage().startswith("irregularity:")]
    assert len(latched) == 1
    record = latched[0]
    assert record.levelno == logging.WARNING
    assert record.irregularity == "lid_opened"  # type: ignore[attr-defined]
    assert record.round == 1 and record.shoe == 1  # type: ignore[attr-defined]
    line = json.loads(JsonLinesFormatter().format(record))
    assert line["level"] == "warning" and line["irregularity"] == "lid_opened"
    connection.inbox.append(wire.ShoeStateChanged(wire.ShoeEvent.LID_CLOSED, 4))
    controller.step(0)
    caplog.clear()
    controller._apply(SupervisorAction("clear", "alice"))
    cleared = [r for r in caplog.records if r.getMessage().startswith("irregularity cleared")]
    assert len(cleared) == 1
    assert cleared[0].getMessage() == "irregularity cleared: lid_opened by alice"
    assert cleared[0].supervisor == "alice"  # type: ignore[attr-defined]
    journal.close()


def test_replaying_the_journal_does_not_log_old_irregularities_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    controller, connection, journal, _ = controller_mid_round(tmp_path)
    connection.inbox.append(wire.ShoeStateChanged(wire.ShoeEvent.LID_OPENED, 4))
    controller.step(0)
    caplog.set_level(logging.WARNING, logger="shoe_controller.table")
    caplog.clear()
    again = TableController(journal=journal, table=Table(create_game("punto-banco-8d")),
                            profile="punto-banco-8d", connection=FakeConnection())
    again.start()
    assert not [r for r in caplog.records if "irregularity" in r.getMessage()]
    assert again.table.alarm == "latched"
    journal.close()



def test_the_console_asks_for_a_reason_before_the_pin() -> None:
    from shoe_controller.display.supervisor_console import SupervisorConsole, parse_command

    with pytest.raises(ShoeError, match="void ID REASON"):
        parse_command("void alice")
    asked: list[str] = []
    printed: list[str] = []
    console = SupervisorConsole(None, [], ask_pin=asked.append,  # type: ignore[arg-type]
                                out=printed.append)
    console.handle("void alice")
    assert asked == [] and "a void needs a reason" in printed[-1]
