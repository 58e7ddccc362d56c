"""``shoe sim``, ``shoe run --profile blackjack`` and ``shoe table-sim --game blackjack`` as
separate processes: a whole 8-deck shoe with splits, doubles, insurance, dealer blackjacks and
decision timeouts, the controller SIGKILLed twice mid-round (once while a seat decides, after
the hole card was dealt and before it is turned), and restarted on its journal.

The table system's record must then hold every event exactly once and in order, its rounds
must equal ``shoe replay`` of the same shoe file with the decisions it recorded, and in the
record no hole card comes before the last decision of its round.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shoe_controller.cards import format_shoe, new_shoe
from shoe_controller.games.blackjack.live_players import BuiltInPlayers
from shoe_controller.games.blackjack.profile import PACKAGED_DIR, load_profile
from tests.reporting.test_end_to_end import Procs, first_line, read_record, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TOKEN = "e2e-blackjack-token"
DECISION_SECONDS = 1  # timeouts within the test's time
PLAYERS_SEED = 3


def fast_profile(directory: Path) -> Path:
    """blackjack-8d with a one-second decision time."""
    text = (PACKAGED_DIR / "blackjack-8d.toml").read_text(encoding="utf-8")
    text = text.replace("decision_seconds = 15", f"decision_seconds = {DECISION_SECONDS}")
    assert f"decision_seconds = {DECISION_SECONDS}" in text
    path = directory / "blackjack-fast.toml"
    path.write_text(text.replace('name = "blackjack-8d"', 'name = "blackjack-fast"'),
                    encoding="utf-8")
    return path


def shoe_with_a_dealer_blackjack() -> list:
    """A shuffled shoe arranged so that round 1 has an ace up and a ten in the hole (the
    table system's players bet on a known number of seats: their seed is fixed)."""
    cards = new_shoe(8, 1717)
    seats = len(BuiltInPlayers(load_profile("blackjack-8d").rules, PLAYERS_SEED).seats(1, 1))
    up, hole = 6 + seats, 6 + 2 * seats + 1
    for place, wanted in ((up, 1), (hole, 10)):
        found = next(i for i in range(hole + 1, len(cards))
                     if min(cards[i].rank, 10) == wanted)
        cards[place], cards[found] = cards[found], cards[place]
    return cards


def decisions_from_record(events: list[dict]) -> str:
    """The decisions file (docs/blackjack.md) of the rounds the table system recorded."""
    lines, current = [], None
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "betting_closed":
            current = {"round": data["round"], "seats": data["seats"], "insurance": [],
                       "actions": {str(seat): [] for seat in data["seats"]}}
        elif kind == "insurance_closed":
            current["insurance"] = data["seats"]
        elif kind == "decision_made":
            current["actions"][str(data["seat"])].append(data["action"])
        elif kind == "round_result":
            lines.append(json.dumps(current))
        elif kind == "round_void":
            current = None
    return "\n".join(lines) + "\n"


def test_a_blackjack_shoe_end_to_end_through_two_kills(tmp_path: Path, procs: Procs) -> None:
    shoe_file = tmp_path / "shoe.txt"
    shoe_file.write_text(format_shoe(shoe_with_a_dealer_blackjack()), encoding="utf-8")
    key_file = tmp_path / "table.key"
    key_file.write_text(os.urandom(32).hex())
    record = tmp_path / "record.jsonl"
    journal = tmp_path / "journal.db"
    profile = fast_profile(tmp_path)

    sim, out, err = procs.start("sim", "sim", "--tcp", "127.0.0.1:0", "--cards", str(shoe_file),
                                "--cut-card", "52", "--pace", "0.002", "--button-delay", "0",
                                "--quiet")
    shoe_port = int(first_line(sim, out, err).rpartition(":")[2])
    table_system, out, err = procs.start(
        "table-sim", "table-sim", "--listen", "127.0.0.1:0", "--record", str(record),
        "--token", TOKEN, "--key-file", str(key_file), "--betting-seconds", "0.05",
        "--game", "blackjack", "--players-seed", str(PLAYERS_SEED), "--silent-every", "11",
        "--insurance-rate", "0.9", "--quiet")
    line = first_line(table_system, out, err)
    table_port = int(line.rpartition(":")[2])

    def start_controller() -> subprocess.Popen[bytes]:
        proc, _, _ = procs.start(
            "run", "run", "--device", f"socket://127.0.0.1:{shoe_port}", "--profile",
            str(profile), "--journal", str(journal), "--betting-seconds", "0", "--shoes", "1",
            "--quiet", "--log-level", "warning", "--table-url", f"ws://127.0.0.1:{table_port}/",
            "--table-token", TOKEN, "--table-key-file", str(key_file))
        return proc

    controller = start_controller()

    def deciding_after(n: int) -> bool:
        events = read_record(record)
        return len(events) >= n and events[-1]["type"] == "decision_due"

    for at in (150, 600):
        # Kill while a seat decides: the hole card is dealt and journalled, and held back.
        wait_until(f"a decision after {at} events", lambda at=at: deciding_after(at), 90,
                   procs=[controller, table_system])
        controller.send_signal(signal.SIGKILL)
        controller.wait(5)
        controller = start_controller()

    assert controller.wait(150) == 0
    events = read_record(record)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert len({e["id"] for e in events}) == len(events)
    assert sum(e["type"] == "shoe_finished" for e in events) == 1
    made = [e["data"] for e in events if e["type"] == "decision_made"]
    assert {"split", "double", "hit", "stand"} <= {d["action"] for d in made}
    assert any(d["origin"] == "timeout" for d in made)
    # The table system answers again a decision asked before a kill: only the ones it was
    # told to leave unanswered time out (every 11th decision_due it received).
    asked = [e for e in events if e["type"] == "decision_due"]
    timeouts = [d for d in made if d["origin"] == "timeout"]
    assert len(timeouts) <= len(asked) // 11 + 1
    results = [e["data"] for e in events if e["type"] == "round_result"]
    assert any(r["insurance"]["taken"] for r in results)
    assert any(r["dealer"]["blackjack"] for r in results)

    # Secrecy as the table system saw it: a round's hole card after its last decision.
    for round_ in {r["round"] for r in results}:
        in_round = [e for e in events if e["data"].get("round") == round_]
        kinds = [(e["type"], e["data"].get("reason")) for e in in_round]
        hole = kinds.index(("card", "hole"))
        assert all(k[0] not in ("decision_due", "decision_made", "insurance_closed",
                                "dealer_check") for k in kinds[hole + 1:]), round_

    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(decisions_from_record(events), encoding="utf-8")
    replay = subprocess.run(
        [sys.executable, "-m", "shoe_controller", "replay", str(shoe_file), "--profile",
         str(profile), "--decisions", str(decisions), "--cut-card", "52", "--json"],
        capture_output=True, text=True, timeout=60, check=False)
    assert replay.returncode == 0, replay.stderr
    rounds = [json.loads(line) for line in replay.stdout.splitlines()]
    rounds = [{k: v for k, v in line.items() if k != "type"} for line in rounds
              if line["type"] == "round"]
    assert results == rounds
