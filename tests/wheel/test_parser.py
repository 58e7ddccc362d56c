"""Wheel parser: the guide's examples by hand, split at every byte boundary, noise, fuzz."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheel_protocol import (
    AcknowledgeVoid,
    CommandParser,
    Direction,
    GetVersion,
    Identify,
    Reply,
    Rotor,
    SelfTest,
    SetMode,
    SetParameter,
    StartGame,
    Status,
    StatusPoll,
    Unparsed,
    WarningFlag,
    WheelParser,
    WheelState,
    WinningNumberLine,
    encode_line,
)
from wheel_protocol.parser import MAX_LINE

S = WheelState
W = WarningFlag
CW, ACW = Direction.CLOCKWISE, Direction.ANTICLOCKWISE

# Every wheel line the guide shows, with what it means written out by hand.
WHEEL_LINES: list[tuple[bytes, object]] = [
    (b"*X;1;011;17;0;250;0", Status(S.BEFORE_GAME, 11, 17, W.NONE, 250, CW)),
    (b"*X;2;012;17;0;251;1", Status(S.BETS_OPEN, 12, 17, W.NONE, 251, ACW)),
    (b"*X;3;012;17;8;249;1", Status(S.BALL_IN_RIM, 12, 17, W.LAUNCH_FAILED, 249, ACW)),
    (b"*X;3;012;17;2;249;1", Status(S.BALL_IN_RIM, 12, 17, W.MISSPIN, 249, ACW)),
    (b"*X;4;012;17;1;248;1", Status(S.NO_MORE_BETS, 12, 17, W.BALL_NOT_DETECTED, 248, ACW)),
    (b"*X;5;012; 6;0;247;1", Status(S.WINNING_NUMBER, 12, 6, W.NONE, 247, ACW)),
    (b"*X;5;256; 0;0;247;0", Status(S.WINNING_NUMBER, 256, 0, W.NONE, 247, CW)),
    (b"*X;6;001;36;4;000;0", Status(S.TABLE_CLOSED, 1, 36, W.HARDWARE_FAULT, 0, CW)),
    (b"*X;7;013;  ;F;180;0", Status(S.BALL_NOT_DETECTED, 13, None, W(15), 180, CW)),
    (b"*X;4;099;21;a;120;1", Status(S.NO_MORE_BETS, 99, 21, W(10), 120, ACW)),
    (b"*X;2;014;21;0;200;0;77", Status(S.BETS_OPEN, 14, 21, W.NONE, 200, CW, ("77",))),
    (b" 6", WinningNumberLine(6)),
    (b"27", WinningNumberLine(27)),
    (b" 0", WinningNumberLine(0)),
    (b"*K CAM", Reply("K", "CAM")),
    (b"*P OK", Reply("P", "OK")),
    (b"*P NO", Reply("P", "NO")),
    (b"*T OK", Reply("T", "OK")),
    (b"*o BUSY", Reply("o", "BUSY")),
    (b"*F 0", Reply("F", "0")),
    (b"*V SS2 2.10", Reply("V", "SS2 2.10")),
]

COMMAND_LINES: list[tuple[bytes, object]] = [
    (b"*K", Identify()),
    (b"*V", GetVersion("V")),
    (b"*S", GetVersion("S")),
    (b"*F", SelfTest()),
    (b"*P 1", Rotor(True)),
    (b"*P 0", Rotor(False)),
    (b"*u 1", StartGame(CW)),
    (b"*u 3", StartGame(ACW)),
    (b"*R", AcknowledgeVoid()),
    (b"*X", StatusPoll()),
    (b"*o 1159", SetMode(1159)),
    (b"*o 1157", SetMode(1157)),
    (b"*T G 40", SetParameter("G", 40)),
]

BAD_WHEEL_LINES = [
    b"*X;8;012;17;0;250;0",  # state 8
    b"*X;5;257;17;0;250;0",  # spin beyond 256
    b"*X;5;12;17;0;250;0",  # spin not three digits
    b"*X;5;012;37;0;250;0",  # no pocket 37
    b"*X;5;012;7 ;0;250;0",  # number padded on the wrong side
    b"*X;5;012;17;G;250;0",  # not hex
    b"*X;5;012;17;0;25;0",  # speed not three digits
    b"*X;5;012;17;0;250;2",  # direction
    b"*X;5;012;17;0;250",  # a field short
    b"*X5;012;17;0;250;0",
    b"37",
    b"6",
    b"*",
    b"*KK CAM",
    b"*K  CAM",
    b"hello",
    "*X;5;012;1\u00e9;0;250;0".encode(),
    b"*X;5;012;17;0;250;0\x07",
]


def _stream(lines: list[tuple[bytes, object]], end: bytes = b"\r\n") -> bytes:
    return b"".join(line + end for line, _ in lines)


def _messages(lines: list[tuple[bytes, object]]) -> list[object]:
    return [message for _, message in lines]


@pytest.mark.parametrize(("line", "expected"), WHEEL_LINES, ids=lambda v: repr(v)[:30])
def test_each_wheel_line_parses_to_what_it_means(line: bytes, expected: object) -> None:
    for end in (b"\r\n", b"\r", b"\n", b"\n\r"):
        assert WheelParser().feed(line + end) == [expected]
    assert encode_line(expected) == line.replace(b";a;", b";A;") + b"\r\n"  # type: ignore[arg-type]


@pytest.mark.parametrize(("line", "expected"), COMMAND_LINES, ids=lambda v: repr(v)[:20])
def test_each_command_parses_and_encodes(line: bytes, expected: object) -> None:
    assert CommandParser().feed(line + b"\r\n") == [expected]
    assert encode_line(expected) == line + b"\r\n"  # type: ignore[arg-type]


@pytest.mark.parametrize("line", BAD_WHEEL_LINES, ids=repr)
def test_malformed_lines_are_unparsed_with_a_reason(line: bytes) -> None:
    (result,) = WheelParser().feed(line + b"\r\n")
    assert isinstance(result, Unparsed) and result.reason and result.raw == line


def _split_everywhere(data: bytes, parser_type: type) -> None:
    whole = parser_type().feed(data)
    for cut in range(len(data) + 1):
        parser = parser_type()
        assert parser.feed(data[:cut]) + parser.feed(data[cut:]) == whole, cut
    parser = parser_type()
    assert [m for i in range(len(data)) for m in parser.feed(data[i : i + 1])] == whole


def test_every_wheel_message_split_at_every_byte_boundary() -> None:
    data = _stream(WHEEL_LINES)
    assert WheelParser().feed(data) == _messages(WHEEL_LINES)
    _split_everywhere(data, WheelParser)


def test_every_command_split_at_every_byte_boundary() -> None:
    data = _stream(COMMAND_LINES, b"\r")
    assert CommandParser().feed(data) == _messages(COMMAND_LINES)
    _split_everywhere(data, CommandParser)


NOISE = [b"\x00", b"\xff\xfe", b"~~", b"\x13\x11", b"\x1b[0m", b"#"]


def test_garbage_and_noise_between_messages_lose_no_message() -> None:
    """Noise before a packet on the same line, on lines of its own, and an overlong line:
    each comes out as Unparsed in its place, every real message is still read."""
    parts: list[bytes] = []
    expected: list[object] = []
    for i, (line, message) in enumerate(WHEEL_LINES):
        noise = NOISE[i % len(NOISE)]
        if line.startswith(b"*"):
            parts.append(noise + line + b"\r\n")  # noise glued to the packet's front
            expected += [Unparsed(noise, "noise before '*'"), message]
        else:
            parts.append(noise + b"\n" + line + b"\n")  # noise on a line of its own
            expected += ["unparsed", message]
    parts.append(b"\x55" * (MAX_LINE * 3) + b"\r\n*K CAM\r\n")
    expected += ["unparsed", Reply("K", "CAM")]
    data = b"".join(parts)
    got = WheelParser().feed(data)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert isinstance(g, Unparsed) if e == "unparsed" else g == e
    _split_everywhere(data, WheelParser)


def test_a_packet_resynchronises_without_a_line_end_before_it() -> None:
    got = WheelParser().feed(b"*X;5;012;1*X;5;012;17;0;250;0\r\n")
    assert isinstance(got[0], Unparsed)
    assert got[1] == Status(S.WINNING_NUMBER, 12, 17, W.NONE, 250, CW)


def test_overlong_line_memory_is_bounded() -> None:
    parser = WheelParser()
    for _ in range(200):
        assert parser.feed(b"\x01" * 10_000) == []
    assert len(parser._splitter.pending) <= MAX_LINE
    (noise, status) = parser.feed(b"\n*X;1;001;  ;0;000;0\n")
    assert isinstance(noise, Unparsed) and "2000000 bytes" in noise.reason
    assert status == Status(S.BEFORE_GAME, 1, None, W.NONE, 0, CW)


# --------------------------------------------------------------------------- properties

statuses = st.builds(
    Status,
    st.sampled_from(list(WheelState)),
    st.integers(0, 256),
    st.none() | st.integers(0, 36),
    st.integers(0, 15).map(WarningFlag),
    st.integers(0, 999),
    st.sampled_from(list(Direction)),
    st.lists(st.text("0123456789ABCZ", max_size=4), max_size=2).map(tuple),
)
wheel_messages = st.one_of(
    statuses,
    st.integers(0, 36).map(WinningNumberLine),
    st.builds(Reply, st.sampled_from("KPTFoVS"), st.sampled_from(["", "OK", "NO", "BUSY", "CAM",
                                                                  "0", "12", "SS2 2.10"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(wheel_messages, max_size=12), st.lists(st.integers(0, 400), max_size=6))
def test_encoded_messages_parse_back_whatever_the_reads(messages: list, cuts: list[int]) -> None:
    data = b"".join(encode_line(m) for m in messages)
    parser = WheelParser()
    got: list[object] = []
    last = 0
    for cut in sorted(c for c in cuts if c <= len(data)):
        got += parser.feed(data[last:cut])
        last = cut
    got += parser.feed(data[last:])
    assert got == messages


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 300))
def test_any_bytes_never_raise_and_splits_do_not_matter(data: bytes, cut: int) -> None:
    whole = WheelParser().feed(data)
    parser = WheelParser()
    assert parser.feed(data[:cut]) + parser.feed(data[cut:]) == whole
    assert all(isinstance(m, (Status, WinningNumberLine, Reply, Unparsed)) for m in whole)
    commands = CommandParser()
    commands.feed(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120).filter(lambda b: b"*" not in b), wheel_messages)
def test_a_message_after_any_noise_line_is_read(noise: bytes, message: object) -> None:
    got = WheelParser().feed(noise + b"\n" + encode_line(message))  # type: ignore[arg-type]
    assert got[-1] == message
    assert all(isinstance(m, Unparsed) for m in got[:-1])
