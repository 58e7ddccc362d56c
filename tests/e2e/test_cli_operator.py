"""What an operator sees of the smaller ``shoe`` commands (issue 15): ``hash-pin``, the journal
tools on a tampered journal, ``recall`` text and JSON agreeing, ``odds --decks``, ``sim
--exit-when-empty`` after a cut-card shoe, and the demo's progress line."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path

import pytest

from shoe_controller.config import check_pin
from shoe_controller.display.console import Console

from .processes import PROFILE, ProcessKeeper, run_args, run_shoe_cli, shoe_command, start_sim


def test_hash_pin_reads_stdin_and_refuses_what_the_config_refuses(tmp_path: Path) -> None:
    import subprocess

    good = subprocess.run(shoe_command("hash-pin"), input="471100\n", capture_output=True,
                          text=True, timeout=60, check=False)
    assert good.returncode == 0, good.stderr
    assert check_pin(good.stdout.strip(), "471100")
    short = subprocess.run(shoe_command("hash-pin"), input="12\n", capture_output=True,
                           text=True, timeout=60, check=False)
    assert short.returncode == 1 and short.stdout == ""
    assert short.stderr == "shoe hash-pin: error: a PIN must be at least 6 digits, got 2\n"
    helped = run_shoe_cli("hash-pin", "--help")
    assert helped.returncode == 0 and "usage: shoe hash-pin" in helped.stdout
    old = subprocess.run([*shoe_command()[:2], "shoe_controller.config", "hash-pin"],
                         input="471100\n", capture_output=True, text=True, timeout=60,
                         check=False)
    assert old.returncode == 0 and check_pin(old.stdout.strip(), "471100"), old.stderr


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal of a whole demo shoe."""
    journal = tmp_path_factory.mktemp("played") / "demo.sqlite"
    done = run_shoe_cli("demo", "--seed", "6", "--journal", str(journal), timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    return journal


def test_export_and_recall_warn_on_a_broken_chain_and_still_work(
    played: Path, tmp_path: Path
) -> None:
    tampered = tmp_path / "tampered.sqlite"
    tampered.write_bytes(played.read_bytes())
    with sqlite3.connect(tampered) as conn:
        seq, data = conn.execute(
            "SELECT seq, data FROM records WHERE kind = 'card' ORDER BY seq LIMIT 1").fetchone()
        conn.execute("UPDATE records SET data = ? WHERE seq = ?",
                     (data.replace('"scanner"', '"shoe"'), seq))
    conn.close()
    for command in (["export", "--json"], ["recall"]):
        clean = run_shoe_cli("journal", command[0], str(played), *command[1:])
        assert clean.returncode == 0 and clean.stderr == "", clean.stderr
        done = run_shoe_cli("journal", command[0], str(tampered), *command[1:])
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), "the tool must still show what the journal holds"
        (warning,) = done.stderr.splitlines()
        assert warning.startswith(f"WARNING: {tampered}: the hash chain is broken (1 problem")
        assert f"record {seq} (card) was edited" in warning
        assert f"shoe journal verify {tampered}" in warning


def test_recall_text_and_json_show_the_same_rounds_the_round_in_play_too(tmp_path: Path) -> None:
    journal = tmp_path / "cut.sqlite"
    # A demo stopped mid-shoe leaves a round in play.
    import signal
    import subprocess

    demo = subprocess.Popen(shoe_command("demo", "--seed", "5", "--pace", "0.05", "--journal",
                                         str(journal)), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            if line.startswith("Round   3:"):
                break
        time.sleep(0.3)
    finally:
        demo.send_signal(signal.SIGINT)
        demo.communicate(timeout=30)
    as_json = run_shoe_cli("journal", "recall", str(journal), "--last", "3", "--json")
    as_text = run_shoe_cli("journal", "recall", str(journal), "--last", "3")
    assert as_json.returncode == as_text.returncode == 0
    rounds = [json.loads(line) for line in as_json.stdout.splitlines()]
    rows = as_text.stdout.splitlines()[2:]
    assert [r["round"] for r in rounds] == [int(row.split()[1]) for row in rows]
    in_play = [r for r in rounds if "result" not in r and "void" not in r]
    assert len(in_play) == 1 and in_play[0] is rounds[-1]
    assert rows[-1].rstrip().endswith("(in play)")


def test_odds_takes_decks() -> None:
    done = run_shoe_cli("odds", "--profile", PROFILE, "--decks", "7", "--json")
    assert done.returncode == 0, done.stderr
    odds = json.loads(done.stdout)
    assert odds["decks"] == 7 and odds["cards_left"] == 7 * 52
    unknown = run_shoe_cli("odds", "--profile", PROFILE, "--deck", "7x")
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines()[0].startswith("usage: shoe odds ")


@pytest.mark.timeout(150)
def test_sim_exit_when_empty_exits_after_a_cut_card_shoe(
    tmp_path: Path, procs: ProcessKeeper
) -> None:
    sim, port = start_sim(procs, "--decks", "1", "--cut-card", "14", "--seed", "5",
                          "--exit-when-empty", "--quiet")
    argv = run_args(port, tmp_path / "j.sqlite")
    argv[argv.index(PROFILE)] = "punto-banco-1d"
    run = procs.start(argv, "run")
    assert run.wait(90) == 0, run.stderr()[-2000:]
    assert sim.wait(30) == 0, "shoe sim --exit-when-empty did not exit after the shoe"
    assert "Traceback" not in sim.stderr()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_names_the_round_being_dealt() -> None:
    from shoe_controller.table.controller import Update

    class View:
        prompt, detail, round = "Deal Player", "", 79

    screen = _Terminal()
    console = Console(screen, progress=True, shoe_cards=416, color=False)
    for _ in range(78):
        console.stats.add({"type": "round_result", "outcome": "banker", "natural": False,
                           "player_pair": False, "banker_pair": False})
    console(Update(View(), [], "card"))  # type: ignore[arg-type]
    status = screen.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert "round  79  Deal Player" in status, status
