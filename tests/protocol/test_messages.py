"""Every message type: construction checks, payload round trip, frame round trip."""

from __future__ import annotations

import pytest
from hypothesis import given

from firmware_protocol.codec import MAX_PAYLOAD, FrameDecoder, encode_frame
from firmware_protocol.messages import (
    MESSAGE_CLASSES,
    CardDrawn,
    CardMisread,
    DeviceFault,
    DeviceInfo,
    FaultCode,
    Message,
    MessageType,
    Sensor,
    SetExitLock,
    SetIndicators,
    StatusReport,
    decode_message,
)

from .strategies import MESSAGES, any_message, u16


@pytest.mark.parametrize("cls", list(MESSAGES), ids=lambda cls: cls.__name__)
def test_each_type_round_trips_through_payload_and_frame(cls: type[Message]) -> None:
    @given(MESSAGES[cls], u16, u16)
    def check(message: Message, seq: int, ack: int) -> None:
        payload = message.encode_payload()
        assert len(payload) <= MAX_PAYLOAD
        assert decode_message(message.TYPE, payload) == message
        frames = FrameDecoder().feed(encode_frame(message, seq, ack, reliable=True))
        assert [(f.message, f.seq, f.ack_number, f.reliable) for f in frames] == [
            (message, seq, ack, True)
        ]

    check()


@given(any_message)
def test_frame_without_ack_has_no_ack_number(message: Message) -> None:
    (frame,) = FrameDecoder().feed(encode_frame(message))
    assert frame.ack_number is None and not frame.reliable and frame.message == message


def test_registry_is_complete_and_types_are_unique() -> None:
    assert set(MESSAGE_CLASSES) == set(MessageType)
    for code, cls in MESSAGE_CLASSES.items():
        assert cls.TYPE is code


def test_card_drawn_accepts_suit_enum_and_stores_int() -> None:
    from shoe_controller.cards import Card

    card = Card.from_code("QH")
    message = CardDrawn(7, card.rank, card.suit, Sensor.OPTICAL_PRIMARY, 98)
    assert message.suit == 1 and type(message.suit) is int
    assert Card.from_wire(message.rank, message.suit) == card


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: CardDrawn(1, 0, 0, Sensor.OPTICAL_PRIMARY, 50), "rank"),
        (lambda: CardDrawn(1, 14, 0, Sensor.OPTICAL_PRIMARY, 50), "rank"),
        (lambda: CardDrawn(1, 1, 4, Sensor.OPTICAL_PRIMARY, 50), "suit"),
        (lambda: CardDrawn(1, 1, 0, 9, 50), "sensor"),  # type: ignore[arg-type]
        (lambda: CardDrawn(1, 1, 0, Sensor.OPTICAL_PRIMARY, 101), "confidence"),
        (lambda: CardDrawn(-1, 1, 0, Sensor.OPTICAL_PRIMARY, 50), "counter"),
        (lambda: CardDrawn(2**32, 1, 0, Sensor.OPTICAL_PRIMARY, 50), "counter"),
        (lambda: CardDrawn(1, 1, 0, Sensor.OPTICAL_PRIMARY, 50, 1), "drawn_while_locked"),  # type: ignore[arg-type]
        (lambda: CardMisread(1, Sensor.RFID, 99), "reason"),  # type: ignore[arg-type]
        (lambda: SetIndicators(256), "lights"),  # type: ignore[arg-type]
        (lambda: SetIndicators(1, 5001), "beep_ms"),  # type: ignore[arg-type]
        (lambda: SetExitLock(1), "locked"),  # type: ignore[arg-type]
        (lambda: SetExitLock(True, 0, 7), "for_card"),
        (lambda: SetExitLock(False, 1, 2**32), "for_card"),
        (lambda: DeviceFault(FaultCode.NONE), "code"),
        (lambda: DeviceFault(FaultCode.JAM, "x" * 201), "detail"),
        (lambda: DeviceInfo(1, 1, 0, "é" * 17, "m", "s", "f"), "vendor"),  # type: ignore[arg-type]
        (lambda: StatusReport(True, False, True, 1, 0, 0, 70000), "unacked_cards"),  # type: ignore[arg-type]
    ],
)
def test_construction_rejects_out_of_range_fields(build: object, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("message_type", "payload"),
    [
        (MessageType.CARD_DRAWN, bytes.fromhex("010000000e00013200")),  # rank 14
        (MessageType.CARD_DRAWN, bytes.fromhex("010000000100013202")),  # flag bit
        (MessageType.CARD_DRAWN, bytes.fromhex("0100000001000132")),  # short
        (MessageType.SET_EXIT_LOCK, b"\x02"),
        (MessageType.STATUS_REQUEST, b"\x00"),
        (MessageType.DEVICE_INFO, bytes.fromhex("010000000000000000054142")),
        (MessageType.ERROR_REPORT, bytes.fromhex("0102ffff")),  # invalid UTF-8
        (MessageType.DEVICE_FAULT, b""),
        (0x7F, b""),
    ],
)
def test_decoding_bad_payload_raises_value_error(message_type: int, payload: bytes) -> None:
    with pytest.raises(ValueError):
        decode_message(message_type, payload)


def test_set_exit_lock_names_its_card_only_in_the_long_form() -> None:
    """The 2-byte form stays what it was; naming the card adds a u32 (SPEC section 6)."""
    assert SetExitLock(True).encode_payload() == bytes.fromhex("0100")
    assert SetExitLock(False, 1).encode_payload() == bytes.fromhex("0001")
    long_form = SetExitLock(False, 1, 0x12345678).encode_payload()
    assert long_form == bytes.fromhex("000178563412")
    assert SetExitLock.decode_payload(long_form) == SetExitLock(False, 1, 0x12345678)
    with pytest.raises(ValueError, match="expected 2 or 6"):
        SetExitLock.decode_payload(bytes.fromhex("000102"))
