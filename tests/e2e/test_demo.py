"""``shoe demo --seed N`` in its own process plays the whole shoe that ``shoe replay`` deals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .processes import json_lines, replay_lines, run_shoe_cli, write_shoe_file


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [3, 41])
def test_demo_plays_the_replayed_shoe_to_the_end(seed: int, tmp_path: Path) -> None:
    journal = tmp_path / "demo.sqlite"
    done = run_shoe_cli(
        "demo",
        "--seed",
        str(seed),
        "--pace",
        "0",
        "--journal",
        str(journal),
        timeout=90,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "Shoe summary" in done.stdout
    played = re.search(r"^Rounds played\s+(\d+)\s*$", done.stdout, re.MULTILINE)
    assert played is not None, done.stdout[-2000:]

    replayed = replay_lines(write_shoe_file(tmp_path, seed))
    replay = json_lines("\n".join(replayed))
    end = replay[-1]
    assert end["type"] == "shoe_end"
    assert int(played.group(1)) == end["rounds"], done.stdout[-4000:] + done.stderr[-2000:]
    # Every replayed round was announced with the same cards and outcome.
    for line in replay:
        if line["type"] != "round":
            continue
        pattern = (
            rf"Round\s+{line['round']}: Player {' '.join(line['player'])}\s+"
            rf"{line['player_total']}\s+Banker {' '.join(line['banker'])}\s+"
            rf"{line['banker_total']}\s+-> {line['outcome'].upper()}"
        )
        assert re.search(pattern, done.stdout), f"round {line['round']} missing: {pattern}"
    # The journal it kept says the same, line for line.
    export = run_shoe_cli("journal", "export", str(journal), "--json")
    assert export.returncode == 0, export.stderr
    assert export.stdout.splitlines() == replayed
