"""Frames: header + payload + CRC, byte-stuffed with COBS and ended by a 0x00 delimiter.

``encode_frame`` builds one whole frame for the wire; :class:`FrameDecoder` turns any stream of
bytes back into :class:`Frame` values and never raises. Layouts and rules: SPEC.md sections 3-5.
"""

from __future__ import annotations

import enum
import struct
from collections import deque
from dataclasses import dataclass, fields
from typing import cast

from firmware_protocol.cobs import cobs_decode, cobs_encode
from firmware_protocol.crc import CRC_SIZE, crc32
from firmware_protocol.messages import PROTOCOL_VERSION, Message, MessageType, decode_message

HEADER = struct.Struct("<BBBHHB")
"""version, message type, flags, seq, ack, payload length (8 bytes, little-endian)."""
HEADER_SIZE = HEADER.size
MAX_PAYLOAD = 240
"""Longest payload; header + payload + CRC = 252 bytes fits in one COBS run (1 byte overhead)."""
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
MAX_ENCODED_FRAME = MAX_FRAME + 1 + MAX_FRAME // 254
"""Longest COBS-encoded frame, delimiter excluded (253 bytes). Anything longer is garbage."""
MIN_FRAME = HEADER_SIZE + CRC_SIZE
DELIMITER = b"\x00"


class Flags(enum.IntFlag):
    """Header byte 2. Bits 4-7 are reserved: sent as 0, ignored on receipt."""

    RELIABLE = 0x01
    """``seq`` is meaningful: the message occupies a sequence number and must be acknowledged."""
    ACK_VALID = 0x02
    """``ack`` is meaningful: the next sequence number the sender expects from its peer."""
    COPY = 0x04
    """Revision 1.3 (SPEC 8.9): a reliable frame's proactive copy, sent right behind it; once
    the original has arrived it is dropped without an acknowledgement. Only between peers that
    agreed FRAME_COPIES; a revision 1.2 receiver ignores the bit (a reserved one there)."""
    COPIED = 0x08
    """Revision 1.3 (SPEC 8.9): on the original, its copy comes right behind it (a damaged
    block next is that copy, and asks for nothing)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame that passed every check: COBS, length, CRC, version, type and payload."""

    version: int
    flags: int
    seq: int
    ack: int
    message: Message

    @property
    def message_type(self) -> MessageType:
        return self.message.TYPE

    @property
    def reliable(self) -> bool:
        return bool(self.flags & Flags.RELIABLE)

    @property
    def ack_number(self) -> int | None:
        """The acknowledgement, or None when the frame carries none (ACK_VALID clear)."""
        return self.ack if self.flags & Flags.ACK_VALID else None

    @property
    def is_copy(self) -> bool:
        """A reliable frame's proactive copy (COPY, revision 1.3)."""
        return bool(self.flags & Flags.COPY) and self.reliable

    @property
    def is_copied(self) -> bool:
        """A reliable frame whose copy comes right behind it (COPIED, revision 1.3)."""
        return bool(self.flags & Flags.COPIED) and self.reliable and not self.flags & Flags.COPY


@dataclass(frozen=True, slots=True)
class DamagedBlock:
    """A block between delimiters that failed COBS, length or CRC (:meth:`FrameDecoder.feed_blocks`):
    nothing in it can be trusted, but where it came among the frames can."""


DAMAGED = DamagedBlock()


class RejectReason(enum.Enum):
    UNSUPPORTED_VERSION = "unsupported_version"
    BAD_LENGTH = "bad_length"
    UNKNOWN_TYPE = "unknown_type"
    BAD_PAYLOAD = "bad_payload"


@dataclass(frozen=True, slots=True)
class RejectedFrame:
    """A frame with a correct CRC that we still cannot accept: the peer really sent it.

    Unlike line noise (bad COBS or CRC, silently counted), these deserve an answer
    (ErrorReport) so the sender learns why; header fields after the version byte are only
    trustworthy when ``reason`` is not UNSUPPORTED_VERSION, otherwise they are None.
    """

    reason: RejectReason
    detail: str
    version: int
    type_code: int | None = None
    flags: int | None = None
    seq: int | None = None
    ack: int | None = None

    @property
    def ack_number(self) -> int | None:
        """The acknowledgement the refused frame still carries (its CRC is good), or None."""
        if self.flags is None or self.ack is None or not self.flags & Flags.ACK_VALID:
            return None
        return self.ack

    @property
    def seq_number(self) -> int | None:
        """The sequence number the refused frame occupies, or None if it is not reliable."""
        if self.flags is None or self.seq is None or not self.flags & Flags.RELIABLE:
            return None
        return self.seq


@dataclass(slots=True)
class DecoderStats:
    """Running counters of a :class:`FrameDecoder` (never reset by the decoder itself)."""

    bytes_received: int = 0
    frames: int = 0
    garbage_bytes: int = 0
    """Bytes thrown away without forming a CRC-valid frame (noise, cut or corrupted frames)."""
    bad_cobs: int = 0
    too_short: int = 0
    oversize: int = 0
    bad_crc: int = 0
    unsupported_version: int = 0
    bad_length: int = 0
    unknown_type: int = 0
    bad_payload: int = 0

    def as_dict(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


def encode_frame(
    message: Message,
    seq: int = 0,
    ack: int | None = None,
    *,
    reliable: bool = False,
    copy: bool = False,
    copied: bool = False,
    version: int = PROTOCOL_VERSION,
) -> bytes:
    """One whole frame for the wire: ``COBS(header + payload + CRC) + 0x00``.

    ``ack=None`` leaves ACK_VALID clear. ``copy`` sets COPY (a reliable frame's proactive copy,
    SPEC 8.9), ``copied`` COPIED (on the original it follows). ``version`` exists for tests of
    version mismatch.
    Raises ValueError for out-of-range header fields or a payload over MAX_PAYLOAD.
    """
    payload = message.encode_payload()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(
            f"{type(message).__name__} payload is {len(payload)} bytes > {MAX_PAYLOAD}"
        )
    if not 0 <= seq <= 0xFFFF or not (ack is None or 0 <= ack <= 0xFFFF):
        raise ValueError(f"seq and ack must be 0..65535, got seq={seq} ack={ack}")
    if (copy or copied) and not reliable:
        raise ValueError("only a reliable frame has a copy")
    if copy and copied:
        raise ValueError("a frame is a copy or an original, not both")
    flags = ((Flags.RELIABLE if reliable else 0) | (0 if ack is None else Flags.ACK_VALID)
             | (Flags.COPY if copy else 0) | (Flags.COPIED if copied else 0))
    body = HEADER.pack(version, message.TYPE, flags, seq, 0 if ack is None else ack, len(payload))
    body += payload
    return cobs_encode(body + crc32(body).to_bytes(CRC_SIZE, "little")) + DELIMITER


class FrameDecoder:
    """Streaming frame decoder: feed it any chunks, get whole checked frames; never raises.

    A frame on the wire and after un-stuffing::

        wire:    ... 00 | c1 .. .. .. .. .. .. .. cN | 00 | next frame ...
                         \\__ COBS(frame), no 00 __/   delimiter
        frame:   +-----+------+-------+-----+-----+-----+-----------+---------+
                 | ver | type | flags | seq | ack | len | payload   | CRC-32  |
                 |  1  |  1   |   1   |  2  |  2  |  1  | len bytes | 4 (LE)  |
                 +-----+------+-------+-----+-----+-----+-----------+---------+
                 \\______________ CRC covers these _________________/

    Bytes are buffered until a 0x00 arrives; the block before it is one frame candidate.
    Recovery cases (each counted in :attr:`stats`, none raises):

    * garbage before a frame, ended by a 0x00 (senders start each burst with 0x00): the
      garbage block fails COBS/length/CRC and is dropped; the frame after it decodes.
    * garbage *glued* to a frame, or bytes inside a frame lost, changed or inserted: that one
      block fails the CRC and is dropped; the link layer's retransmission recovers it.
    * a 0x00 in the middle of a frame (line noise): both halves fail and are dropped; the
      decoder is back in step at the next frame.
    * garbage after a frame: it joins the next candidate and fails, or is ended by the next
      0x00; earlier frames are already out.
    * more than MAX_ENCODED_FRAME bytes without a 0x00: dropped at once and everything up to
      the next 0x00 is skipped, so memory stays bounded (about one frame) on a babbling line.
    * empty blocks (00 00): idle fill, ignored.
    * CRC-valid frames that are still unacceptable (other protocol version, length field
      disagreeing with the real length or over MAX_PAYLOAD, unknown type, invalid payload)
      are dropped and recorded as :class:`RejectedFrame` for :meth:`take_rejected`.
    """

    MAX_REJECTED = 32

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._discarding = False
        self._rejected: deque[RejectedFrame] = deque(maxlen=self.MAX_REJECTED)
        self.stats = DecoderStats()

    @property
    def buffered(self) -> int:
        """Bytes held waiting for a delimiter (at most MAX_ENCODED_FRAME between calls)."""
        return len(self._buffer)

    def take_rejected(self) -> list[RejectedFrame]:
        """Rejected CRC-valid frames since the last call (the most recent MAX_REJECTED).

        Only :meth:`feed` collects them here; :meth:`feed_all` returns them in line."""
        rejected = list(self._rejected)
        self._rejected.clear()
        return rejected

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Add received bytes; return the frames completed by them, in order (rejected
        CRC-valid frames are kept for :meth:`take_rejected`)."""
        frames: list[Frame] = []
        for item in self.feed_all(data):
            if isinstance(item, Frame):
                frames.append(item)
            else:
                self._rejected.append(item)
        return frames

    def feed_blocks(self, data: bytes | bytearray | memoryview,
                    ) -> list[Frame | RejectedFrame | DamagedBlock]:
        """As :meth:`feed_all`, with each damaged block (COBS, length, CRC) at its place
        among the frames (a link that sends frame copies tells a damaged copy by it)."""
        return self._feed(data, damage=True)

    def feed_all(self, data: bytes | bytearray | memoryview) -> list[Frame | RejectedFrame]:
        """Add received bytes; return every CRC-valid frame they completed, accepted
        (:class:`Frame`) or refused (:class:`RejectedFrame`), in the order they arrived.

        One ordered stream: a receiver must learn that frame N was refused before it
        handles frame N+1 (a refused card followed by a good one is a gap, not a card)."""
        return cast(list[Frame | RejectedFrame], self._feed(data, damage=False))

    def _feed(self, data: bytes | bytearray | memoryview, damage: bool,
              ) -> list[Frame | RejectedFrame | DamagedBlock]:
        stats = self.stats
        stats.bytes_received += len(data)
        buffer = self._buffer
        buffer += data
        frames: list[Frame | RejectedFrame | DamagedBlock] = []
        start = 0
        while (end := buffer.find(0, start)) >= 0:
            if self._discarding:
                stats.garbage_bytes += end - start
                self._discarding = False
            elif end > start:
                self._decode_block(bytes(buffer[start:end]), frames, damage)
            start = end + 1
        if start:
            del buffer[:start]
        if len(buffer) > MAX_ENCODED_FRAME:
            stats.oversize += 0 if self._discarding else 1
            stats.garbage_bytes += len(buffer)
            buffer.clear()
            self._discarding = True
        return frames

    def _decode_block(self, block: bytes, frames: list[Frame | RejectedFrame | DamagedBlock],
                      damage: bool) -> None:
        """Decode one block into ``frames``; a damaged one is counted, and with ``damage``
        marked in its place."""
        stats = self.stats
        if len(block) > MAX_ENCODED_FRAME:
            stats.oversize += 1
            stats.garbage_bytes += len(block)
            if damage:
                frames.append(DAMAGED)
            return
        try:
            raw = cobs_decode(block)
        except ValueError:
            stats.bad_cobs += 1
            stats.garbage_bytes += len(block)
            if damage:
                frames.append(DAMAGED)
            return
        if len(raw) < MIN_FRAME:
            stats.too_short += 1
            stats.garbage_bytes += len(block)
            if damage:
                frames.append(DAMAGED)
            return
        if crc32(raw[:-CRC_SIZE]) != int.from_bytes(raw[-CRC_SIZE:], "little"):
            stats.bad_crc += 1
            stats.garbage_bytes += len(block)
            if damage:
                frames.append(DAMAGED)
            return
        if raw[0] != PROTOCOL_VERSION:
            stats.unsupported_version += 1
            frames.append(
                RejectedFrame(
                    RejectReason.UNSUPPORTED_VERSION,
                    f"frame of protocol version {raw[0]}, this side speaks {PROTOCOL_VERSION}",
                    raw[0],
                )
            )
            return
        version, type_code, flags, seq, ack, length = HEADER.unpack_from(raw)
        payload = raw[HEADER_SIZE:-CRC_SIZE]
        if length != len(payload) or length > MAX_PAYLOAD:
            stats.bad_length += 1
            detail = f"length field {length}, payload {len(payload)} bytes (max {MAX_PAYLOAD})"
            frames.append(RejectedFrame(RejectReason.BAD_LENGTH, detail, version, type_code,
                                        flags, seq, ack))
            return
        try:
            message = decode_message(type_code, payload)
        except ValueError as exc:
            if type_code in MessageType._value2member_map_:
                stats.bad_payload += 1
                reason = RejectReason.BAD_PAYLOAD
            else:
                stats.unknown_type += 1
                reason = RejectReason.UNKNOWN_TYPE
            frames.append(RejectedFrame(reason, str(exc), version, type_code, flags, seq, ack))
            return
        stats.frames += 1
        frames.append(Frame(version, flags, seq, ack, message))
