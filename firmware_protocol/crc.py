"""Frame check sequence: CRC-32/ISO-HDLC (the CRC of Ethernet, zlib, PNG).

Parameters (Rocksoft/Williams model, as catalogued by reveng): width 32, poly 0x04C11DB7,
init 0xFFFFFFFF, refin true, refout true, xorout 0xFFFFFFFF, check 0xCBF43926 (the CRC of the
ASCII bytes ``123456789``), residue 0xDEBB20E3.

Why this variant: it is the most widely implemented 32-bit CRC (every MCU vendor ships a table or
hardware unit for it), and on the host it is ``zlib.crc32``, computed in C. A 32-bit CRC detects
every burst error up to 32 bits and every error of up to 3 bits in frames of our size (< 300
bytes), which a 16-bit CRC does not guarantee for 4-bit errors at this length.
"""

from __future__ import annotations

import zlib

CRC_SIZE = 4
"""Bytes of CRC appended to each frame (little-endian)."""

CHECK_VALUE = 0xCBF43926
"""``crc32(b"123456789")``: the catalogue check value of CRC-32/ISO-HDLC."""


def crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32/ISO-HDLC of ``data`` as an unsigned 32-bit integer."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32_bitwise(data: bytes | bytearray | memoryview) -> int:
    """The same CRC computed bit by bit, as a firmware engineer would write it without a table.

    Slow; kept as the executable reference for SPEC.md and checked against :func:`crc32` in the
    tests, so the description in the spec is proven to match the implementation.
    """
    crc = 0xFFFFFFFF
    for byte in bytes(data):
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF
