import pytest

from shoe_controller.display.supervisor_console import SupervisorConsole, parse_command
from shoe_controller.errors import ShoeError


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


def test_console_passes_the_pin_and_reports_refusals(mocker) -> None:
    controller = mocker.Mock()
    said: list[str] = []
    console = SupervisorConsole(controller, iter(()), ask_pin=lambda prompt: "1234",
                                out=said.append)
    console.handle("enter alice 9H")
    controller.supervisor.assert_called_once_with("enter_card", "alice", "1234", card="9H",
                                                  reason="")
    controller.supervisor.side_effect = ShoeError("supervisor 'alice': unknown id or wrong PIN")
    console.handle("clear alice")
    assert said[-1] == "supervisor 'alice': unknown id or wrong PIN"
