"""A ``shoe`` process imports the module of its own command only (shoe_controller.cli): the
simulators, the table system and the pit start without the controller's imports, and
``shoe --help`` without any command's."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from shoe_controller.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(",".join(sorted(name for name in sys.modules if name.startswith(
    ("shoe_controller.", "simulators.", "cv2", "vision")))))
"""


def imported(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          timeout=60, check=True)
    return set(done.stdout.strip().splitlines()[-1].split(","))


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ("no-such-command",)])
def test_the_top_level_imports_no_command(argv: tuple[str, ...]) -> None:
    assert not {name for name in imported(*argv) if name.startswith(
        ("shoe_controller.commands", "shoe_controller.table", "simulators."))}


def test_a_command_imports_its_own_module_and_not_the_others() -> None:
    sim = imported("sim", "--help")
    assert "simulators.cli" in sim
    assert not {"shoe_controller.table.controller", "shoe_controller.commands.run",
                "cv2"} & sim
    run = imported("run", "--help")
    assert "shoe_controller.commands.run" in run and "simulators.cli" not in run
