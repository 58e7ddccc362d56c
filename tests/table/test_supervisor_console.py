from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from shoe_controller.access import Limits
from shoe_controller.display.supervisor_console import (
    SupervisorConsole,
    SupervisorConsoleError,
    describe,
    parse_command,
)
from shoe_controller.errors import ShoeError
from shoe_controller.live.supervision import SupervisorTicket
from shoe_controller.table.runtime import services

from .harness import PIN, SUPERVISOR, Harness

WRONG = "000000"


@pytest.mark.parametrize(
    "line,parsed",
    [
        ("clear alice", ("clear", "alice", None, "")),
        ("void bob dealer exposed a card", ("void_round", "bob", None, "dealer exposed a card")),
        ("enter alice QS", ("enter_card", "alice", "QS", "")),
        ("END carol", ("end_shoe", "carol", None, "")),
        ("   ", None),
    ],
)
def test_parse(line, parsed) -> None:
    assert parse_command(line) == parsed


@pytest.mark.parametrize("line", ["clear", "hop alice", "enter alice", "enter alice QS KS"])
def test_bad_commands_say_how(line) -> None:
    with pytest.raises(ShoeError, match="clear ID|enter ID CARD"):
        parse_command(line)


def settled(action: str, refusal: str = "", notice: str = "", record: int = 42) -> SupervisorTicket:
    ticket = SupervisorTicket(action, "alice")
    ticket.settle(record, refusal, notice)
    return ticket


def test_console_passes_the_pin_and_the_console_client_and_reports_refusals(mocker) -> None:
    controller = mocker.Mock()
    controller.supervisor.return_value = settled("enter_card")
    said: list[str] = []
    console = SupervisorConsole(controller, iter(()), ask_pin=lambda prompt: "123456",
                                out=said.append, wait=0)
    console.handle("enter alice 9H")
    controller.supervisor.assert_called_once_with("enter_card", "alice", "123456", card="9H",
                                                  reason="", client="console")
    assert said[-1] == "enter_card by alice: done (journal record 42)"
    controller.supervisor.side_effect = ShoeError("supervisor 'alice': unknown id or wrong PIN")
    console.handle("clear alice")
    assert said[-1] == "supervisor 'alice': unknown id or wrong PIN"


def test_the_console_prints_what_the_table_decided() -> None:
    assert describe(settled("clear", refusal="cannot clear yet: card 12 was not read: enter "
                            "it, or void the round")) == (
        "clear by alice: REFUSED by the table: cannot clear yet: card 12 was not read: enter "
        "it, or void the round (journalled as tried)")
    assert describe(settled("void_round", notice="round 3 voided", record=7)) == (
        "void_round by alice: done (journal record 7): round 3 voided")
    queued = describe(SupervisorTicket("end_shoe", "alice"))
    assert queued.startswith("end_shoe by alice: queued, not yet journalled")
    assert "lost if the controller stops" in queued


def test_the_console_is_limited_like_the_web() -> None:
    """The console's wrong PINs go through the controller's one access guard, as client
    "console": after the limit it is held off without a PIN check; the web is not."""
    harness = Harness(seed=3)
    try:
        controller = harness.controller
        calls = []
        verify = controller.access.verify_pin
        controller.access.verify_pin = lambda stored, pin: calls.append(pin) or verify(stored, pin)
        pins = iter([WRONG] * Limits().pair_failures + [PIN])
        said: list[str] = []
        console = SupervisorConsole(controller, iter(()), ask_pin=lambda prompt: next(pins),
                                    out=said.append, wait=0)
        for _ in range(Limits().pair_failures):
            console.handle("clear alice")
            assert said[-1] == "supervisor 'alice': unknown id or wrong PIN"
        console.handle("clear alice")  # the right PIN, but held off
        assert said[-1].startswith("refused: too many wrong PINs from here: try again in 5 min")
        assert len(calls) == Limits().pair_failures
        assert controller.access.is_held_off(SUPERVISOR, "console")
        # The web panel (another client) is not locked out by the console's wrong PINs.
        ticket = controller.supervisor("clear", SUPERVISOR, PIN, client="127.0.0.1")
        harness.settle()
        assert ticket.status == "journalled"
        harness.clock.now += Limits().pair_window
        assert not controller.access.is_held_off(SUPERVISOR, "console")
    finally:
        harness.close()


def test_end_of_input_is_said_once_on_stdout_and_in_the_log(caplog) -> None:
    said: list[str] = []
    console = SupervisorConsole(None, iter(["\n", "  \n"]),  # type: ignore[arg-type]
                                out=said.append)
    with caplog.at_level(logging.WARNING, logger="shoe_controller.supervisor"):
        console.start()
        console.thread.join(5)
    assert not console.thread.is_alive()
    ended = [line for line in said if "no longer read" in line]
    assert ended == [("supervisor console: input ended (end of input): typed supervisor "
                     "commands are no longer read; the table runs on (use the web panel, or "
                     "restart with a terminal)")]
    assert [r.getMessage() for r in caplog.records] == ended
    console.check()  # the end of input is not a failure
    assert console.ended == "end of input"


def test_end_of_input_at_the_pin_prompt_is_the_end_of_input(mocker) -> None:
    def no_pin(prompt: str) -> str:
        raise EOFError

    said: list[str] = []
    console = SupervisorConsole(mocker.Mock(), iter(["clear alice\n", "clear bob\n"]),
                                ask_pin=no_pin, out=said.append).start()
    console.thread.join(5)
    assert console.ended == "end of input while asking for a PIN"
    assert sum("no longer read" in line for line in said) == 1
    console.check()


class BrokenInput:
    def __init__(self) -> None:
        self.read = threading.Event()

    def __iter__(self) -> Iterator[str]:
        self.read.set()
        raise OSError(5, "Input/output error")


def test_a_failure_in_the_console_thread_reaches_the_owner(mocker) -> None:
    controller = mocker.Mock()
    stream = BrokenInput()
    with services(controller, console=stream) as started:
        assert stream.read.wait(5)
        console = started.checks[-1]
        console.thread.join(5)
        assert console.failed
        should_stop = started.should_stop(lambda: False)
        with pytest.raises(SupervisorConsoleError, match="Input/output error"):
            should_stop()


@pytest.mark.parametrize("line", ["burn", "burn alice now"])
def test_burn_takes_exactly_the_supervisor(line) -> None:
    with pytest.raises(ShoeError, match="burn ID"):
        parse_command(line)


def test_burn_after_a_game_error_from_the_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """``burn ID`` is the web panel's "Burn after error" (action error_burn): a real
    controller on a blackjack profile refuses it in a round, and after the round is voided
    makes the profile's 3 burn cards due; the PIN is checked by the same access guard."""
    from shoe_controller.table.inputs import BettingCommand

    from . import harness as harness_module

    monkeypatch.setattr(harness_module, "PROFILE", "blackjack-8d")
    harness = Harness(seed=11)
    try:
        controller = harness.controller
        for _ in range(200):  # deal the burn after the shuffle
            if controller.table.waiting_for_round():
                break
            view = controller.table.view()
            if view.due is not None and not view.exit_locked:
                harness.shoe.pull(harness.clock())
            harness.run(0.02)
        assert controller.table.waiting_for_round()
        controller.submit(BettingCommand("open", "table-system"))
        controller.submit(BettingCommand("close", "table-system", [3]))
        harness.run(0.1)

        pins = iter([WRONG, PIN, PIN, PIN])
        said: list[str] = []
        console = SupervisorConsole(controller, iter(()), ask_pin=lambda prompt: next(pins),
                                    out=said.append, wait=5.0)

        def type_line(line: str) -> str:
            """The console's thread waits for the table's decision while the table runs."""
            typed = threading.Thread(target=console.handle, args=(line,))
            typed.start()
            while typed.is_alive():
                harness.run(0.02)
            return said[-1]

        assert type_line("burn alice") == "supervisor 'alice': unknown id or wrong PIN"
        assert type_line("burn alice") == (  # a round is in play
            "error_burn by alice: REFUSED by the table: cards are burned after a game error "
            "only between rounds, with nothing latched (void the round or clear the error "
            "first) (journalled as tried)")
        assert type_line("void alice dealer exposed a card").startswith(
            "void_round by alice: done")
        assert type_line("burn alice").startswith("error_burn by alice: done (journal record")
        view = controller.table.view()
        assert view.prompt == "Burn 3 more cards face down after the game error"
        assert view.due == "burn" and not view.exit_locked
    finally:
        harness.close()
