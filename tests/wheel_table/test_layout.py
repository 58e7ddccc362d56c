"""The split a reader sees in the package layout: a wheel table runs on what every live table
shares (``shoe_controller.live``, the journal, reporting) without anything of a shoe's."""

from __future__ import annotations

import subprocess
import sys

SHOE_ONLY = ("shoe_controller.table", "firmware_protocol", "shoe_controller.device",
             "shoe_controller.transports", "shoe_controller.games.baccarat.table_game",
             "shoe_controller.games.blackjack", "vision")


def test_the_wheel_table_imports_nothing_of_a_shoe() -> None:
    code = ("import sys\n"
            "import shoe_controller.wheel_table.runtime, shoe_controller.commands.run_wheel\n"
            f"print('\\n'.join(m for m in sys.modules if m.startswith({SHOE_ONLY!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == []


def test_the_shared_core_imports_neither_table() -> None:
    code = ("import sys\n"
            "import shoe_controller.live.inputs, shoe_controller.live.supervision, "
            "shoe_controller.live.startup\n"
            "print('\\n'.join(m for m in sys.modules if m.startswith("
            f"{(*SHOE_ONLY, 'shoe_controller.wheel_table', 'wheel_protocol')!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == []
