"""Consistent Overhead Byte Stuffing (COBS), the framing of every frame on the wire.

COBS rewrites a byte string so that it contains no 0x00 byte, at a cost of one byte per 254
bytes (at least one byte). A 0x00 then marks the end of a frame without ambiguity, so a receiver
that starts listening mid-stream, or loses bytes, resynchronises at the next 0x00: framing never
depends on timing (USB-serial adapters batch bytes and destroy inter-byte gaps).

Encoding (Cheshire and Baker, 1999): the data is cut at each zero; each piece of up to 254
non-zero bytes is written as one *code* byte (piece length + 1) followed by the piece. Code 0xFF
means "254 bytes follow and no zero is implied"; any other code implies a zero after the piece,
except after the last piece. The encoder here is canonical (the shortest encoding).
"""

from __future__ import annotations

_MAX_RUN = 254


def cobs_encode(data: bytes | bytearray | memoryview) -> bytes:
    """COBS-encode ``data``; the result contains no 0x00 and is never empty."""
    out = bytearray()
    pieces = bytes(data).split(b"\x00")
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        emitted_full_run = False
        while len(piece) >= _MAX_RUN:
            out.append(0xFF)
            out += piece[:_MAX_RUN]
            piece = piece[_MAX_RUN:]
            emitted_full_run = True
        # A final piece that ended exactly on a full run needs no closing code byte.
        if index == last and emitted_full_run and not piece:
            break
        out.append(len(piece) + 1)
        out += piece
    return bytes(out)


def cobs_decode(data: bytes | bytearray | memoryview) -> bytes:
    """Decode one COBS block (without its 0x00 delimiter).

    Raises :class:`ValueError` if ``data`` is empty, contains 0x00, or a code byte points past
    the end: all of which mean the bytes were not produced by a COBS encoder (line noise).
    """
    raw = bytes(data)
    size = len(raw)
    if size == 0:
        raise ValueError("COBS: empty input")
    if 0 in raw:
        raise ValueError("COBS: 0x00 inside an encoded block")
    out = bytearray()
    index = 0
    while index < size:
        code = raw[index]
        end = index + code
        if end > size:
            raise ValueError(f"COBS: code byte {code} at offset {index} runs past the end ({size})")
        out += raw[index + 1 : end]
        index = end
        if code != 0xFF and index < size:
            out.append(0)
    return bytes(out)
