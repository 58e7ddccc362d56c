"""SPEC.md's worked examples and constants are what the reference implementation produces."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_protocol.cobs import cobs_decode
from firmware_protocol.codec import FrameDecoder, encode_frame
from firmware_protocol.link import LinkConfig, initial_sequence
from firmware_protocol.messages import (
    Ack,
    Capability,
    CardDrawn,
    DeviceIdentity,
    DeviceInfo,
    ErrorCode,
    ErrorReport,
    Heartbeat,
    HostHello,
    Indicator,
    LinkFeature,
    LinkOptions,
    Message,
    Nak,
    Sensor,
    SetExitLock,
    SetState,
)

SPEC = (Path(__file__).parents[2] / "firmware_protocol" / "SPEC.md").read_text(encoding="utf-8")
HOST, SHOE = 0x0A0B0C0D, 0x11223344
ISN = initial_sequence(HOST, SHOE)
IDENTITY = DeviceIdentity("Acme", "S8", "SN1", "1.0", Capability(0x3F))

EXAMPLES: list[tuple[str, bytes]] = [
    ("HostHello", encode_frame(HostHello(1, HOST))),
    ("DeviceInfo", encode_frame(DeviceInfo.from_identity(IDENTITY, SHOE))),
    (
        "CardDrawn",
        encode_frame(CardDrawn(42, 12, 1, Sensor.OPTICAL_PRIMARY, 97), ISN, ISN, reliable=True),
    ),
    ("Ack", encode_frame(Ack(), 0, ISN + 1)),
    ("Heartbeat", encode_frame(Heartbeat(1000), 0, ISN + 1)),
    ("SetExitLock", encode_frame(SetExitLock(True), ISN, ISN + 1, reliable=True)),
    ("ErrorReport", encode_frame(ErrorReport(ErrorCode.UNSUPPORTED_VERSION, "v1"))),
    ("LinkOptions", encode_frame(LinkOptions(LinkFeature.FAST_RECOVERY), ISN, ISN,
                                 reliable=True)),
    ("Nak", encode_frame(Nak(0b101), 0, ISN + 1)),
    ("SetState", encode_frame(SetState(Indicator.BANKER, False, 1, 43), ISN + 1, ISN + 1,
                              reliable=True)),
    ("CardDrawn COPIED", encode_frame(CardDrawn(42, 12, 1, Sensor.OPTICAL_PRIMARY, 97), ISN,
                                      ISN, reliable=True, copied=True)),
    ("CardDrawn COPY", encode_frame(CardDrawn(42, 12, 1, Sensor.OPTICAL_PRIMARY, 97), ISN, ISN,
                                    reliable=True, copy=True)),
    ("LinkOptions with copies", encode_frame(
        LinkOptions(LinkFeature.FAST_RECOVERY | LinkFeature.FRAME_COPIES), ISN, ISN,
        reliable=True)),
]


def spec_hex(data: bytes) -> str:
    return data.hex(" ")


def test_initial_sequence_example() -> None:
    assert ISN == 0x2460 and "isn 0x2460" in SPEC


@pytest.mark.parametrize(("name", "wire"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_worked_example_is_in_the_spec(name: str, wire: bytes) -> None:
    assert f"wire:  {spec_hex(wire)}" in SPEC, name
    frame = cobs_decode(wire[:-1])
    assert spec_hex(frame) in SPEC.replace(" | ", " ")
    (decoded,) = FrameDecoder().feed(wire)
    assert isinstance(decoded.message, Message)


def test_timing_table_matches_the_defaults() -> None:
    config = LinkConfig()
    assert f"| window | {config.window} frames" in SPEC
    assert f"| retransmit_timeout | {config.retransmit_timeout:g} s" in SPEC
    assert f"| retransmit_timeout_max | {config.retransmit_timeout_max:.1f} s" in SPEC
    assert f"| heartbeat_interval | {config.heartbeat_interval:g} s" in SPEC
    assert f"| link_timeout | {config.link_timeout:.1f} s" in SPEC
    assert f"| max_retransmissions | {config.max_retransmissions} |" in SPEC
    assert f"| retransmit_timeout_min | {config.retransmit_timeout_min:g} s |" in SPEC
    assert f"| nak_holdoff | {config.nak_holdoff:g} s |" in SPEC
    assert f"| ack_delay | {config.ack_delay:g} s |" in SPEC
    assert f"| frame_copies | {'on' if config.frame_copies else 'off'} |" in SPEC


def test_every_message_type_and_error_code_is_documented() -> None:
    from firmware_protocol.messages import MESSAGE_CLASSES

    for code, cls in MESSAGE_CLASSES.items():
        assert f"| {code:#04x} | {cls.__name__} |" in SPEC
    for error in ErrorCode:
        assert f"| {error.value} | {error.name} |" in SPEC


def test_every_capability_link_feature_and_header_flag_is_documented() -> None:
    from firmware_protocol.codec import Flags

    for capability in Capability:
        assert f"{capability.value:#04x} {capability.name}" in SPEC, capability
    for feature in LinkFeature:
        assert f"{feature.value:#04x} {feature.name}" in SPEC, feature
    for bit, flag in enumerate(Flags):
        assert f"bit {bit} {flag.name}" in SPEC, flag
