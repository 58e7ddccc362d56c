"""``shoe sim``: argument checks, and the real command served over TCP and a pty."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_protocol.messages import CardDrawn, SetExitLock, ShoeEvent, ShoeStateChanged
from shoe_controller.cards import Card, format_shoe, new_shoe
from shoe_controller.cli import build_parser, main
from shoe_controller.device import ShoeConnection
from shoe_controller.transports.serial_port import SerialTransport

pytestmark = pytest.mark.timeout(60)


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["sim", *argv])


def test_defaults_and_options() -> None:
    args = parse("--tcp", "127.0.0.1:0")
    assert args.tcp == ("127.0.0.1", 0) and args.decks == 8 and args.cut_card == 14
    assert args.pace == 0 and args.misread_rate == 0 and not args.careless_reload
    assert parse("--tcp", "127.0.0.1:0", "--careless-reload").careless_reload
    args = parse("--pty", "--seed", "3", "--pace", "1.5", "--mistake", "extra-card@12",
                 "--mistake", "lid-open@40", "--faults", "corrupt=0.01,seed=2")
    assert args.pty and args.seed == 3 and args.pace == 1.5
    assert args.mistake == ["extra-card@12", "lid-open@40"]


@pytest.mark.parametrize(
    "argv",
    [[], ["--pty", "--tcp", "h:1"], ["--tcp", "nohost"], ["--pty", "--decks", "0"],
     ["--pty", "--pace", "-1"], ["--pty", "--misread-rate", "2"],
     ["--pty", "--seed", "1", "--cards", "x"]],
)
def test_bad_usage_exits_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        parse(*argv)
    assert excinfo.value.code == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--mistake", "juggle@3"], "unknown dealer mistake"),
     (["--faults", "corrupt=2"], "rate must be in 0..1"),
     (["--faults", "disconnect=0.1"], "cannot be disconnected"),
     (["--cards", "/nonexistent/shoe.txt"], "cannot read shoe file"),
     (["--decks", "1", "--cut-card", "60"], "beyond the 52 cards")],
)
def test_config_errors_are_one_line_and_exit_1(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim", "--pty", *argv]) == 1
    assert message in capsys.readouterr().err


def start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller", "sim", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def deal(url: str, count: int, until_empty: bool = False) -> list[Card]:
    with ShoeConnection(lambda: SerialTransport(url)) as conn:
        conn.wait_until_up(10)
        conn.send(SetExitLock(False))
        cards: list[Card] = []
        while len(cards) < count or until_empty:
            item = conn.get(timeout=10)
            if isinstance(item, CardDrawn):
                cards.append(Card.from_wire(item.rank, item.suit))
            elif isinstance(item, ShoeStateChanged) and item.event is ShoeEvent.SHOE_EMPTY:
                break
        conn.commit()  # acknowledge everything received before hanging up
        return cards


def test_tcp_shoe_from_a_shoe_file_exits_when_empty(tmp_path: Path) -> None:
    cards = new_shoe(1, seed=8)
    shoe_file = tmp_path / "shoe.txt"
    shoe_file.write_text(format_shoe(cards))
    proc, first = start(["--tcp", "127.0.0.1:0", "--cards", str(shoe_file), "--cut-card", "0",
                         "--exit-when-empty", "--quiet"])
    try:
        assert first.startswith("TCP 127.0.0.1:")
        assert deal("socket://" + first.split()[1], 52, until_empty=True) == cards
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.wait()


def test_pty_shoe_runs_until_sigterm() -> None:
    proc, first = start(["--pty", "--decks", "1", "--seed", "5"])
    try:
        kind, path = first.split()
        assert kind == "PTY" and os.path.exists(path)
        assert deal(path, 10) == new_shoe(1, seed=5)[:10]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
