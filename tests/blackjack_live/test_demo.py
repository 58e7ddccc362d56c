"""``shoe demo --game blackjack``: a whole shoe played by the built-in players, as a process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from shoe_controller.cards import new_shoe
from shoe_controller.games.blackjack.decisions import parse_decisions
from shoe_controller.games.blackjack.profile import load_profile
from shoe_controller.games.blackjack.replay import replay_blackjack
from shoe_controller.journal import Journal

pytestmark = [pytest.mark.timeout(180)]


def demo(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_controller", "demo", *args],
                          capture_output=True, text=True, timeout=170, cwd=cwd, check=False)


def test_the_demo_plays_a_whole_blackjack_shoe(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    done = demo("--game", "blackjack", "--seed", "3", "--journal", str(journal), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "== Shoe finished" in out and "Traceback" not in done.stderr
    rounds = int(re.search(r"Rounds played\s+(\d+)", out).group(1))
    assert rounds >= 20
    # The money: 10 on each seat, so the seats' net is ten times the units, plus insurance.
    units = Decimal(re.search(r"Players' net \(units\)\s+(\S+)", out).group(1))
    seats_net = Decimal(re.search(r"Seats' net, bet 10 each\s+(\S+)", out).group(1))
    insurance = Decimal(re.search(r"of which insurance\s+(\S+)", out).group(1))
    assert seats_net == 10 * units + insurance
    behind = re.search(r"Bets behind: count, net\s+(\d+), (\S+)", out)
    assert int(behind.group(1)) > 0
    lines = [line for line in out.splitlines() if re.match(r"\s+\d+\s+D ", line)]
    assert len(lines) == rounds
    # What the console printed is what the journal says, round by round.
    with Journal(journal, readonly=True) as store:
        closed = [r.data for r in store.records() if r.kind == "betting"
                  and r.data.get("action") == "close"]
        decisions = [r.data for r in store.records() if r.kind == "decision"]
    assert len(closed) == rounds and all(c["seats"] for c in closed)
    assert {d["origin"] for d in decisions} == {"player"}
    assert {"hit", "stand", "double", "split"} <= {d["action"] for d in decisions}
    verify = subprocess.run([sys.executable, "-m", "shoe_controller", "journal", "verify",
                             str(journal)], capture_output=True, text=True, timeout=60,
                            check=False)
    assert verify.returncode == 0, verify.stderr
    # shoe journal export prints what shoe replay deals from the same cards and decisions.
    export = subprocess.run([sys.executable, "-m", "shoe_controller", "journal", "export",
                             str(journal), "--json"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert export.returncode == 0, export.stderr
    exported = [json.loads(line) for line in export.stdout.splitlines()]
    with Journal(journal, readonly=True) as store:
        plan = decisions_of(store)
    profile = load_profile("blackjack-8d")
    replayed = list(replay_blackjack(new_shoe(8, 3), profile,
                                     parse_decisions(plan, seats=7), None))
    assert [e for e in exported if e["type"] == "round"] == [
        r for r in replayed if r["type"] == "round"]
    assert exported[0] == replayed[0]  # the burn


def decisions_of(store: Journal) -> str:
    """The journal's answers as a decisions file (docs/blackjack.md)."""
    lines, current = [], None
    for record in store.records():
        data = record.data
        if record.kind == "betting" and data.get("action") == "close" and data.get("seats"):
            current = {"round": len(lines) + 1, "seats": data["seats"], "insurance": [],
                       "actions": {str(seat): [] for seat in data["seats"]}}
            lines.append(current)
        elif record.kind == "insurance":
            current["insurance"] = data["seats"]
        elif record.kind == "decision":
            current["actions"][str(data["seat"])].append(data["action"])
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_a_profile_of_another_game_is_one_clear_line(tmp_path: Path) -> None:
    done = demo("--game", "blackjack", "--profile", "punto-banco-8d", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "a baccarat profile; --game is blackjack" in done.stderr
