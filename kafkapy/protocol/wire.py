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


# ---- bounded readers of the hand-written request decoders: (value, position after it);
# DecodeError when a length or count runs past ``n`` (the end of the body)

_Buffer = bytes | bytearray | memoryview


def need(pos: int, k: int, n: int) -> int:
    """The position after ``k`` more bytes at ``pos``; DecodeError past the end (``n``)."""
    end = pos + k
    if k < 0 or end > n:
        raise DecodeError("truncated")
    return end


def read_length(buf: _Buffer, pos: int, n: int, flexible: bool) -> tuple[int, int]:
    """(length, position after it) of a bytes/array field: -1 for null. Legacy lengths are
    int32, compact ones unsigned varints of length + 1."""
    if flexible:
        if pos < n:
            b = buf[pos]
            if b < 0x80:  # one-byte varint: the usual case
                return b - 1, pos + 1
        v, pos = read_uvarint(buf, pos)
        return v - 1, pos
    end = need(pos, 4, n)
    return INT32.unpack_from(buf, pos)[0], end


def read_string(
    buf: _Buffer, pos: int, n: int, flexible: bool, nullable: bool
) -> tuple[str | None, int]:
    if flexible:
        k, pos = read_length(buf, pos, n, True)
    else:
        pos = need(pos, 2, n)
        k = INT16.unpack_from(buf, pos - 2)[0]
    if k < 0:
        if nullable and k == -1:
            return None, pos
        raise DecodeError(f"invalid string length {k}")
    end = need(pos, k, n)
    try:
        return bytes(buf[pos:end]).decode("utf-8"), end
    except UnicodeDecodeError as e:
        raise DecodeError(f"string is not UTF-8: {e}") from None


def read_array_len(buf: _Buffer, pos: int, n: int, flexible: bool) -> tuple[int, int]:
    k, pos = read_length(buf, pos, n, flexible)
    if k < 0:
        if k == -1:
            return 0, pos  # a null array holds nothing (Kafka's reader: null arrays)
        raise DecodeError(f"invalid array length {k}")
    if k > n - pos:  # every element takes at least one byte
        raise DecodeError(f"array of {k} elements in {n - pos} bytes")
    return k, pos


def skip_tags(buf: _Buffer, pos: int, n: int) -> int:
    if pos < n and buf[pos] == 0:  # the usual empty section
        return pos + 1
    return skip_tagged_fields(buf, pos)


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
