"""Hypothesis strategies: one for every message type, covering each field's whole range."""

from __future__ import annotations

from hypothesis import strategies as st

from firmware_protocol.messages import (
    MAX_BEEP_MS,
    MAX_DETAIL_TEXT,
    MAX_IDENTITY_TEXT,
    MESSAGE_CLASSES,
    Ack,
    Button,
    ButtonPressed,
    Capability,
    CardDrawn,
    CardMisread,
    DeviceFault,
    DeviceInfo,
    ErrorCode,
    ErrorReport,
    FaultCode,
    Heartbeat,
    HostHello,
    Indicator,
    LinkFeature,
    LinkOptions,
    Message,
    MisreadReason,
    Nak,
    Reset,
    ResetKind,
    Sensor,
    SetClock,
    SetExitLock,
    SetIndicators,
    SetState,
    ShoeEvent,
    ShoeStateChanged,
    StatusReport,
    StatusRequest,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
u64 = st.integers(0, 0xFFFF_FFFF_FFFF_FFFF)


def text(limit: int) -> st.SearchStrategy[str]:
    """Any text (incl. NUL and non-ASCII) whose UTF-8 fits in ``limit`` bytes."""
    return st.text(max_size=limit).filter(lambda value: len(value.encode("utf-8")) <= limit)


identity_text = text(MAX_IDENTITY_TEXT)
detail_text = text(MAX_DETAIL_TEXT)

MESSAGES: dict[type[Message], st.SearchStrategy[Message]] = {
    HostHello: st.builds(HostHello, u8, u32),
    DeviceInfo: st.builds(
        DeviceInfo,
        u8,
        u32,
        u32.map(Capability),
        identity_text,
        identity_text,
        identity_text,
        identity_text,
    ),
    Ack: st.just(Ack()),
    Heartbeat: st.builds(Heartbeat, u32),
    ErrorReport: st.builds(ErrorReport, st.sampled_from(ErrorCode), detail_text),
    CardDrawn: st.builds(
        CardDrawn,
        u32,
        st.integers(1, 13),
        st.integers(0, 3),
        st.sampled_from(Sensor),
        st.integers(0, 100),
        st.booleans(),
    ),
    CardMisread: st.builds(
        CardMisread, u32, st.sampled_from(Sensor), st.sampled_from(MisreadReason), st.booleans()
    ),
    ShoeStateChanged: st.builds(ShoeStateChanged, st.sampled_from(ShoeEvent), u32),
    ButtonPressed: st.builds(ButtonPressed, st.sampled_from(Button), u32),
    DeviceFault: st.builds(
        DeviceFault,
        st.sampled_from([code for code in FaultCode if code is not FaultCode.NONE]),
        detail_text,
    ),
    StatusReport: st.builds(
        StatusReport,
        st.booleans(),
        st.booleans(),
        st.booleans(),
        u32,
        u8.map(Indicator),
        u64,
        u16,
        st.sampled_from(FaultCode),
    ),
    SetExitLock: st.one_of(
        st.builds(SetExitLock, st.just(True)),
        st.builds(SetExitLock, st.just(False), st.integers(0, 255), st.integers(0, 2**32 - 1)),
    ),
    SetIndicators: st.builds(SetIndicators, u8.map(Indicator), st.integers(0, MAX_BEEP_MS)),
    StatusRequest: st.just(StatusRequest()),
    SetClock: st.builds(SetClock, u64),
    Reset: st.builds(Reset, st.sampled_from(ResetKind)),
    Nak: st.builds(Nak, u64),
    LinkOptions: st.builds(LinkOptions, u32.map(LinkFeature)),
    SetState: st.one_of(
        st.builds(SetState, u8.map(Indicator), st.just(True)),
        st.builds(SetState, u8.map(Indicator), st.just(False), st.integers(0, 255),
                  st.integers(0, 2**32 - 1)),
    ),
}
assert set(MESSAGES) == set(MESSAGE_CLASSES.values()), "a message type has no strategy"

any_message: st.SearchStrategy[Message] = st.one_of(*MESSAGES.values())
