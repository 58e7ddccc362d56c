"""Frame encoder and streaming decoder: splits, garbage, resynchronisation, limits, fuzz."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_protocol.cobs import cobs_encode
from firmware_protocol.codec import (
    HEADER,
    MAX_ENCODED_FRAME,
    MAX_PAYLOAD,
    FrameDecoder,
    RejectReason,
    encode_frame,
)
from firmware_protocol.crc import crc32
from firmware_protocol.messages import (
    CardDrawn,
    ErrorCode,
    ErrorReport,
    Message,
    MessageType,
    Sensor,
    ShoeEvent,
    ShoeStateChanged,
)

from .strategies import MESSAGES, any_message, u16

RNG = random.Random(20240611)


def _examples() -> list[Message]:
    """One deterministic, non-trivial instance of every message type."""
    found: dict[type[Message], Message] = {}

    @settings(database=None, derandomize=True, max_examples=30)
    @given(any_message)
    def collect(message: Message) -> None:
        found.setdefault(type(message), message)

    collect()
    for cls, strategy in MESSAGES.items():
        if cls not in found:
            _one(strategy, found, cls)
    return [found[cls] for cls in MESSAGES]


def _one(
    strategy: st.SearchStrategy[Message], found: dict[type[Message], Message], cls: type
) -> None:
    @settings(database=None, derandomize=True, max_examples=1)
    @given(strategy)
    def take(message: Message) -> None:
        found.setdefault(cls, message)

    take()


EXAMPLES = _examples()


def garbage(size: int, *, zero: bool = False) -> bytes:
    data = bytes(RNG.randrange(1, 256) for _ in range(size))
    return data + b"\x00" if zero else data


def raw_frame(
    version: int,
    type_code: int,
    payload: bytes,
    *,
    flags: int = 0,
    seq: int = 0,
    length: int | None = None,
) -> bytes:
    body = HEADER.pack(
        version, type_code, flags, seq, 0, len(payload) if length is None else length
    )
    body += payload
    return cobs_encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"


def decode_all(*chunks: bytes) -> tuple[list[Message], FrameDecoder]:
    decoder = FrameDecoder()
    messages = [frame.message for chunk in chunks for frame in decoder.feed(chunk)]
    return messages, decoder


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_every_split_point_with_garbage_before_and_after(message: Message) -> None:
    follower = ShoeStateChanged(ShoeEvent.CARD_AT_EXIT, 9)
    stream = (
        garbage(13, zero=True)
        + encode_frame(message, 7, 3, reliable=True)
        + encode_frame(follower, 8, 3, reliable=True)
        + garbage(11)
    )
    for split in range(len(stream) + 1):
        messages, decoder = decode_all(stream[:split], stream[split:])
        assert messages == [message, follower], split
        assert decoder.stats.frames == 2
        assert decoder.stats.garbage_bytes == 13  # trailing garbage still waits for its 0x00
        assert decoder.buffered == 11
    messages, _ = decode_all(*(bytes((byte,)) for byte in stream))
    assert messages == [message, follower]


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_garbage_inside_a_frame_drops_only_that_frame(message: Message) -> None:
    frame = encode_frame(message, 1, 2, reliable=True)
    follower = encode_frame(CardDrawn(5, 12, 3, Sensor.RFID, 77), 2, 2, reliable=True)
    for position in range(1, len(frame) - 1):
        for inserted in (garbage(1), garbage(5), b"\x00", garbage(3, zero=True)):
            damaged = frame[:position] + inserted + frame[position:]
            stream = b"\x00" + damaged + follower
            for split in (0, position, position + len(inserted), len(stream) - 1):
                messages, decoder = decode_all(stream[:split], stream[split:])
                assert messages == [CardDrawn(5, 12, 3, Sensor.RFID, 77)], (position, inserted)
                assert decoder.stats.frames == 1


def test_garbage_glued_before_a_frame_costs_that_frame_only() -> None:
    first = encode_frame(CardDrawn(1, 1, 0, Sensor.OPTICAL_PRIMARY, 90))
    second = encode_frame(CardDrawn(2, 2, 0, Sensor.OPTICAL_PRIMARY, 90))
    messages, decoder = decode_all(garbage(20) + first + second)
    assert [m.counter for m in messages] == [2]  # type: ignore[attr-defined]
    assert decoder.stats.bad_crc + decoder.stats.bad_cobs + decoder.stats.too_short == 1


def test_idle_delimiters_are_ignored() -> None:
    frame = encode_frame(ErrorReport(ErrorCode.INTERNAL, "x"))
    messages, decoder = decode_all(b"\x00\x00\x00" + frame + b"\x00\x00")
    assert len(messages) == 1 and decoder.stats.garbage_bytes == 0


def test_babbling_line_keeps_memory_bounded_and_resyncs() -> None:
    decoder = FrameDecoder()
    for _ in range(100):
        assert decoder.feed(garbage(97)) == []
        assert decoder.buffered <= MAX_ENCODED_FRAME
    message = CardDrawn(3, 13, 2, Sensor.BARCODE, 100, True)
    assert [f.message for f in decoder.feed(garbage(50) + b"\x00" + encode_frame(message))] == [
        message
    ]
    assert decoder.stats.oversize == 1
    assert decoder.stats.garbage_bytes == 9700 + 50
    assert decoder.buffered == 0


def test_every_crc_bit_flip_is_rejected() -> None:
    body = HEADER.pack(1, MessageType.ACK, 0, 0, 0, 0)
    good = crc32(body)
    decoder = FrameDecoder()
    for bit in range(32):
        frame = cobs_encode(body + (good ^ (1 << bit)).to_bytes(4, "little")) + b"\x00"
        assert decoder.feed(frame) == []
    assert decoder.stats.bad_crc == 32


@pytest.mark.parametrize(
    ("frame", "reason", "counter"),
    [
        (
            raw_frame(2, MessageType.ACK, b""),
            RejectReason.UNSUPPORTED_VERSION,
            "unsupported_version",
        ),
        (raw_frame(1, 0x7E, b"", flags=1, seq=9), RejectReason.UNKNOWN_TYPE, "unknown_type"),
        (
            raw_frame(1, MessageType.SET_EXIT_LOCK, b"\x05", flags=1),
            RejectReason.BAD_PAYLOAD,
            "bad_payload",
        ),
        (raw_frame(1, MessageType.ACK, b"", length=3), RejectReason.BAD_LENGTH, "bad_length"),
    ],
)
def test_crc_valid_but_unacceptable_frames_are_recorded(
    frame: bytes, reason: RejectReason, counter: str
) -> None:
    messages, decoder = decode_all(frame)
    assert messages == []
    (rejected,) = decoder.take_rejected()
    assert rejected.reason is reason
    assert decoder.stats.as_dict()[counter] == 1
    assert decoder.take_rejected() == []


def test_payload_over_the_maximum_is_dropped_as_oversize() -> None:
    too_long = raw_frame(1, MessageType.ERROR_REPORT, b"\x01" * (MAX_PAYLOAD + 1))
    just_fits = raw_frame(1, 0x7E, b"\x01" * MAX_PAYLOAD)
    assert len(too_long) - 1 > MAX_ENCODED_FRAME >= len(just_fits) - 1
    messages, decoder = decode_all(too_long + just_fits)
    assert messages == []
    assert decoder.stats.oversize == 1
    assert [r.reason for r in decoder.take_rejected()] == [RejectReason.UNKNOWN_TYPE]


def test_too_short_and_bad_cobs_are_counted() -> None:
    _, decoder = decode_all(b"\x02\x01\x00" + b"\x05\x01\x00")
    assert decoder.stats.too_short == 1 and decoder.stats.bad_cobs == 1


def test_encode_frame_refuses_bad_header_values() -> None:
    with pytest.raises(ValueError, match="seq"):
        encode_frame(ErrorReport(ErrorCode.INTERNAL), seq=65536)


@given(any_message, u16, u16, st.booleans())
def test_decode_of_encode_is_identity(message: Message, seq: int, ack: int, reliable: bool) -> None:
    (frame,) = FrameDecoder().feed(encode_frame(message, seq, ack, reliable=reliable))
    assert (frame.message, frame.seq, frame.ack, frame.reliable) == (message, seq, ack, reliable)


@given(st.lists(st.binary(max_size=400), max_size=8))
def test_random_bytes_never_raise_and_never_make_a_frame(chunks: list[bytes]) -> None:
    decoder = FrameDecoder()
    for chunk in chunks:
        assert decoder.feed(chunk) == []  # a random block passes CRC-32 with p = 2**-32
        assert decoder.buffered <= MAX_ENCODED_FRAME
    assert decoder.stats.frames == 0


@given(any_message, st.data())
def test_corrupted_frames_never_yield_a_wrong_frame(message: Message, data: st.DataObject) -> None:
    """Flip any bits of a valid frame: the decoder yields either the original or nothing."""
    frame = bytearray(encode_frame(message, 3, 4, reliable=True))
    flips = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(frame) - 1), st.integers(0, 7)), min_size=1, max_size=6
        )
    )
    for index, bit in flips:
        frame[index] ^= 1 << bit
    frames = FrameDecoder().feed(bytes(frame) + b"\x00")
    for decoded in frames:
        assert (decoded.message, decoded.seq, decoded.ack) == (message, 3, 4)


part = st.one_of(
    st.tuples(st.just("frame"), any_message),
    st.tuples(st.just("garbage"), st.binary(min_size=1, max_size=300)),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(part, max_size=12), st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_fuzz_stream_of_frames_and_garbage_in_random_chunks(
    parts: list[tuple[str, object]], chunk_sizes: list[int]
) -> None:
    """Bounded fuzz: a frame right after a delimiter (or at the start) always comes out, in
    order; nothing else ever does; nothing raises; memory stays bounded."""
    stream = bytearray()
    expected: list[Message] = []
    for kind, value in parts:
        if kind == "frame":
            assert isinstance(value, Message)
            if not stream or stream[-1] == 0:
                expected.append(value)
            stream += encode_frame(value, len(stream) & 0xFFFF, reliable=True)
        else:
            assert isinstance(value, bytes)
            stream += value
    decoder = FrameDecoder()
    got: list[Message] = []
    position = 0
    index = 0
    while position < len(stream):
        size = chunk_sizes[index % len(chunk_sizes)]
        got += [frame.message for frame in decoder.feed(bytes(stream[position : position + size]))]
        assert decoder.buffered <= MAX_ENCODED_FRAME
        position += size
        index += 1
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(any_message, st.booleans()), max_size=10),
       st.lists(st.integers(1, 64), min_size=1, max_size=10))
def test_feed_blocks_marks_each_damaged_block_in_its_place(
        stream: list[tuple[Message, bool]], cuts: list[int]) -> None:
    """What feed_blocks returns is feed_all's frames with one DamagedBlock where each frame
    with a changed byte came (the copy rule of SPEC 8.9 needs the order)."""
    from firmware_protocol.codec import DamagedBlock, Flags

    wire, expected = bytearray(b"\x00"), []
    for message, damage in stream:
        frame = bytearray(encode_frame(message, 7, 9, reliable=True, copied=True))
        if damage:
            middle = len(frame) // 2  # a changed byte, never a delimiter
            frame[middle] = frame[middle] ^ 0x40 if frame[middle] != 0x40 else 0x41
        wire += frame
        expected.append("damaged" if damage else message)
    decoder, got = FrameDecoder(), []
    position, index = 0, 0
    while position < len(wire):  # in pieces, as reads catch them
        piece = wire[position:position + cuts[index % len(cuts)]]
        position, index = position + len(piece), index + 1
        for item in decoder.feed_blocks(piece):
            got.append("damaged" if isinstance(item, DamagedBlock) else item.message)  # type: ignore[union-attr]
            if not isinstance(item, DamagedBlock):
                assert item.flags & Flags.COPIED and item.is_copied and not item.is_copy  # type: ignore[union-attr]
    assert got == expected


def test_a_frame_is_a_copy_or_an_original_not_both() -> None:
    message = ErrorReport(ErrorCode.BAD_PAYLOAD, "x")
    with pytest.raises(ValueError, match="copy"):
        encode_frame(message, 1, 1, reliable=False, copy=True)
    with pytest.raises(ValueError, match="not both"):
        encode_frame(message, 1, 1, reliable=True, copy=True, copied=True)
