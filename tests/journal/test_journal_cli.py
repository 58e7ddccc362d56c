"""`shoe journal verify|export|recall` through the real command line."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from journal_helpers import fill

from shoe_controller.cards import new_shoe
from shoe_controller.cli import main
from shoe_controller.commands.journal import format_recall
from shoe_controller.journal import Journal

REPO = Path(__file__).resolve().parents[2]


def shoe(*argv: str) -> int:
    return main(["journal", *map(str, argv)])


def test_verify_ok(journal12: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert shoe("verify", journal12) == 0
    out = capsys.readouterr().out
    with Journal(journal12, readonly=True) as journal:
        last = journal.last()
    assert last is not None
    assert out == f"journal OK: 12 records, last hash {last.hash}\n"


def test_verify_names_the_tampered_record(
    journal12: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(journal12) as db:
        db.execute("UPDATE records SET data = '{}' WHERE seq = 7")
        db.execute("DELETE FROM records WHERE seq = 10")
    assert shoe("verify", journal12) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "journal FAILED: 2 problem(s) in 11 records"
    assert lines[1].split()[:3] == ["edited", "record", "7"]
    assert "record 7 (" in lines[1] and "was edited" in lines[1]
    assert lines[2].split()[:3] == ["deleted", "record", "10"]


def test_verify_json(journal12: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(journal12) as db:
        db.execute("UPDATE records SET kind = 'button' WHERE seq = 2")
    assert shoe("verify", journal12, "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["records"] == 12
    assert report["problems"][0]["seq"] == 2 and report["problems"][0]["kind"] == "edited"


def test_verify_errors_are_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shoe("verify", tmp_path / "nope.db") == 1
    assert (
        capsys.readouterr().err
        == f"shoe journal: error: {tmp_path / 'nope.db'}: no such journal file\n"
    )


def test_verify_keyed_journal_with_key_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, key_file = tmp_path / "j.db", tmp_path / "key"
    key_file.write_text("s3cret\n")
    with Journal(path, key=b"s3cret") as journal:
        journal.append("card", {"code": "AS"})
    assert shoe("verify", path, "--key-file", key_file) == 0
    assert shoe("verify", path) == 1
    assert "keyed (HMAC)" in capsys.readouterr().err


# -- export and recall: the lead's round reconstruction over a journal of real table inputs --


def _table_journal(path: Path) -> None:
    """Play 60 cards through the table's own test driver and journal its inputs."""
    spec = importlib.util.spec_from_file_location("table_driver", REPO / "tests/table/driver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    driver = module.Driver()
    driver.play(new_shoe(8, seed=3)[:60])
    with Journal(path, durability="normal") as journal:
        for item in driver.inputs:
            data = item.to_data()
            if getattr(item, "card", None) is not None:
                data["card"] = item.card.code
            journal.append(item.KIND, data)


def test_export_and_recall_a_played_shoe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "table.db"
    _table_journal(path)
    assert shoe("export", path, "--json") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "burn"
    rounds = [line for line in lines if line["type"] == "round"]
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))

    assert shoe("export", path, "-o", tmp_path / "out.jsonl") == 0
    written = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == lines

    assert shoe("recall", path, "--last", 3) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["shoe", "round", "player", "banker", "P", "B", "outcome", "flags"]
    assert len(table) == 2 + 3
    for line, expected in zip(table[2:], rounds[-3:], strict=True):
        assert line.split()[1] == str(expected["round"])
        assert " ".join(expected["player"]) in line and " ".join(expected["banker"]) in line
        assert expected["outcome"] in line

    assert shoe("recall", path, "--last", 2, "--json") == 0
    recalled = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["round"] for r in recalled] == [r["round"] for r in rounds[-2:]]


def test_recall_of_a_journal_the_table_cannot_replay(
    journal12: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shoe("recall", journal12) == 1
    assert "record 1" in capsys.readouterr().err


def test_export_without_the_table_module(
    journal12: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "shoe_controller.table.history", None)
    assert shoe("export", journal12) == 1
    assert "export not available" in capsys.readouterr().err


def test_recall_last_must_be_positive(journal12: Path) -> None:
    with pytest.raises(SystemExit) as info:
        shoe("recall", journal12, "--last", 0)
    assert info.value.code == 2


def test_format_recall_marks_sources_voids_and_flags() -> None:
    rounds = [
        {
            "shoe": 2,
            "round": 14,
            "irregularities": ["card_exposed"],
            "cards": [
                {"target": "player", "position": 1, "card": "9H", "source": "scanner"},
                {"target": "banker", "position": 2, "card": "9S", "source": "scanner"},
                {"target": "player", "position": 3, "card": "QD", "source": "camera"},
                {"target": "banker", "position": 4, "card": "KC", "source": "supervisor"},
            ],
            "result": {
                "player": ["9H", "QD"],
                "banker": ["9S", "KC"],
                "player_total": 9,
                "banker_total": 9,
                "outcome": "tie",
                "natural": True,
                "player_pair": False,
                "banker_pair": False,
            },
        },
        {
            "shoe": 2,
            "round": 15,
            "cards": [],
            "irregularities": [],
            "void": {"supervisor": "alice", "reason": "misdeal"},
        },
        {
            "shoe": 2,
            "round": 16,
            "irregularities": [],
            "cards": [{"target": "player", "position": 1, "card": "AS", "source": "scanner"}],
        },
    ]
    lines = format_recall(rounds).splitlines()
    assert lines[2].split() == [
        "2",
        "14",
        "9H",
        "QD(camera)",
        "9S",
        "KC(supervisor)",
        "9",
        "9",
        "tie",
        "natural,",
        "card_exposed",
    ]
    assert lines[3].split() == ["2", "15", "-", "-", "VOID", "voided", "by", "alice:", "misdeal"]
    assert lines[4].split() == ["2", "16", "AS", "-", "(in", "play)"]
    assert format_recall([]) == "no rounds in the journal\n"


def test_fill_helper_produces_a_valid_journal(tmp_path: Path) -> None:
    fill(tmp_path / "j.db", 3)
    assert shoe("verify", tmp_path / "j.db") == 0
