"""COBS and CRC against published vectors and as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.cobs import cobs_decode, cobs_encode
from firmware_protocol.crc import CHECK_VALUE, crc32, crc32_bitwise

# Vectors from Cheshire & Baker and the Wikipedia COBS article (delimiter not included).
COBS_VECTORS = [
    (b"", b"\x01"),
    (b"\x00", b"\x01\x01"),
    (b"\x00\x00", b"\x01\x01\x01"),
    (b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255))),
    (bytes(range(255)), b"\x01\xff" + bytes(range(1, 255))),
    (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
    (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize(("raw", "encoded"), COBS_VECTORS)
def test_cobs_vectors(raw: bytes, encoded: bytes) -> None:
    assert cobs_encode(raw) == encoded
    assert cobs_decode(encoded) == raw


@given(st.binary(max_size=1200))
def test_cobs_round_trip_has_no_zero_and_bounded_overhead(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert len(encoded) <= len(data) + 1 + len(data) // 254
    assert cobs_decode(encoded) == data


@pytest.mark.parametrize(
    "bad",
    [b"", b"\x00", b"\x05\x11\x22", b"\x02\x11\x00", b"\xff\x01", b"\x03\x11"],
)
def test_cobs_decode_rejects_malformed_input(bad: bytes) -> None:
    with pytest.raises(ValueError, match="COBS"):
        cobs_decode(bad)


@given(st.binary(max_size=300))
def test_cobs_decode_raises_only_value_error(data: bytes) -> None:
    try:
        cobs_decode(data)
    except ValueError:
        pass


def test_crc_check_value() -> None:
    assert crc32(b"123456789") == CHECK_VALUE == 0xCBF43926
    assert crc32_bitwise(b"123456789") == 0xCBF43926


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x00000000),
        (b"a", 0xE8B7BE43),
        (b"The quick brown fox jumps over the lazy dog", 0x414FA339),
        (bytes(32), 0x190A55AD),
        (b"\xff" * 32, 0xFF6CAB0B),
    ],
)
def test_crc_catalogue_vectors(data: bytes, expected: int) -> None:
    assert crc32(data) == expected
    assert crc32_bitwise(data) == expected


def test_crc_residue_of_frame_with_its_crc_appended() -> None:
    data = b"shoe"
    framed = data + crc32(data).to_bytes(4, "little")
    # With refout and xorout, the CRC over data+CRC is the constant 0x2144DF1C (residue
    # 0xDEBB20E3 before the final xor): a firmware may check frames this way.
    assert crc32(framed) == 0x2144DF1C


@given(st.binary(max_size=200))
def test_table_free_reference_matches(data: bytes) -> None:
    assert crc32_bitwise(data) == crc32(data)
