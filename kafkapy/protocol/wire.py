"""Primitive encoders and decoders of Kafka's wire types, used where kio is bypassed.

Only what the hand-written paths need (request headers, the Fetch response writer): fixed-width
integers, varints, strings, compact/legacy arrays and tagged-field sections.
"""

from __future__ import annotations

import struct
import uuid

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT32 = struct.Struct(">I")


class DecodeError(Exception):
    """Bytes that do not decode as the expected Kafka type."""


def read_uvarint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Return (value, new position) of an unsigned varint."""
    value = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 35:
            raise DecodeError("varint too long")


def uvarint(value: int) -> bytes:
    """Encode an unsigned varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def skip_tagged_fields(buf: bytes | memoryview, pos: int) -> int:
    """Skip a tagged-field section; return the position after it."""
    count, pos = read_uvarint(buf, pos)
    if count * 2 > len(buf) - pos:  # a tagged field takes at least 2 bytes (tag, size)
        raise DecodeError(f"{count} tagged fields in {len(buf) - pos} bytes")
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
        if pos > len(buf):
            raise DecodeError("truncated tagged field")
    return pos


def int16(v: int) -> bytes:
    return INT16.pack(v)


def int32(v: int) -> bytes:
    return INT32.pack(v)


def int64(v: int) -> bytes:
    return INT64.pack(v)


def string(value: str, flexible: bool) -> bytes:
    raw = value.encode()
    if flexible:
        return uvarint(len(raw) + 1) + raw
    return INT16.pack(len(raw)) + raw


def array_len(n: int | None, flexible: bool) -> bytes:
    """Length prefix of an array; None encodes a null array."""
    if flexible:
        return uvarint(0 if n is None else n + 1)
    return INT32.pack(-1 if n is None else n)


def bytes_len(n: int | None, flexible: bool) -> bytes:
    """Length prefix of a (nullable) bytes field; None encodes null."""
    if flexible:
        return uvarint(0 if n is None else n + 1)
    return INT32.pack(-1 if n is None else n)


def uuid_bytes(value: uuid.UUID) -> bytes:
    return value.bytes


EMPTY_TAGS = b"\x00"
