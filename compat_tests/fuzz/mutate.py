"""Byte-level mutations of a request frame (header and body, without the size prefix).

Each mutation takes the encoded request and the RNG and returns the bytes to send and, for the
frame-size mutations, the size prefix to announce (None: the true size). They model what a
broken or hostile client sends: a cut frame, flipped bits, lengths and array counts made huge or
negative, varints that never end, tagged-field sections full of garbage, a request header of the
wrong version, a record batch damaged behind a valid CRC.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

from crc32c import crc32c

from kafkapy.protocol.headers import is_flexible
from kafkapy.protocol.wire import uvarint

Mutation = Callable[[bytes, random.Random], tuple[bytes, int | None]]

HEADER_FIXED = 8  # api key, api version, correlation id
BOMBS_32 = (0x7FFFFFFF, -1, -2, -(2**31), 0x01000000, 0x00FFFFFF)
BOMBS_16 = (0x7FFF, -1, -2, -(2**15))
VARINT_BOMBS = (
    b"\xff\xff\xff\xff\x0f",  # 2**32 - 1: a compact count of 2**32 - 2
    b"\x80\x80\x80\x80\x10",  # 2**32
    b"\xff\xff\xff\xff\x7f",  # 2**35 - 1
    b"\x80\x80\x80\x80\x80\x01",  # six bytes: longer than Kafka allows
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # ten bytes
    b"\xff\xff\x03",  # 65535: a string or array far longer than the frame
    b"\x80",  # a varint cut short
)


def _body_start(payload: bytes) -> int:
    """Where the body starts (after the header), or the payload's end if it does not parse."""
    if len(payload) < 10:
        return len(payload)
    api_key, version = struct.unpack_from(">hh", payload)
    (n,) = struct.unpack_from(">h", payload, HEADER_FIXED)
    pos = 10 + max(n, 0)
    if is_flexible(api_key, version):
        pos += 1
    return min(pos, len(payload))


def _pos(payload: bytes, rng: random.Random) -> int:
    """A position in the payload, most often in the body; 0 for an empty payload."""
    start = _body_start(payload) if rng.random() < 0.85 else 0
    if start >= len(payload):
        start = 0
    return rng.randrange(start, max(start + 1, len(payload)))


def truncate(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    return payload[: rng.randrange(0, max(1, len(payload)))], None


def flip_bits(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    out = bytearray(payload)
    for _ in range(rng.randrange(1, 5) if out else 0):
        out[_pos(payload, rng)] ^= 1 << rng.randrange(8)
    return bytes(out), None


def set_byte(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    out = bytearray(payload)
    if out:
        out[_pos(payload, rng)] = rng.choice((0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE))
    return bytes(out), None


def int32_bomb(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """An int32 length or count (legacy arrays and bytes) set huge or negative."""
    out = bytearray(payload)
    p = _pos(payload, rng)
    out[p : p + 4] = struct.pack(">i", rng.choice(BOMBS_32))
    return bytes(out), None


def int16_bomb(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """An int16 string length set huge or negative."""
    out = bytearray(payload)
    p = _pos(payload, rng)
    out[p : p + 2] = struct.pack(">h", rng.choice(BOMBS_16))
    return bytes(out), None


def varint_bomb(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """A compact length or count (flexible versions) replaced by a huge or endless varint."""
    p = _pos(payload, rng)
    bomb = rng.choice(VARINT_BOMBS)
    drop = rng.choice((0, 1, 1, 2))
    return payload[:p] + bomb + payload[p + drop :], None


def insert_bytes(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    p = _pos(payload, rng)
    return payload[:p] + rng.randbytes(rng.randrange(1, 9)) + payload[p:], None


def delete_bytes(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    p = _pos(payload, rng)
    return payload[:p] + payload[p + rng.randrange(1, 9) :], None


def garbage_tags(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """A tagged-field section (the body's last, or any 0x00 byte) replaced by garbage: unknown
    and known tags, sizes that lie, counts larger than the frame."""
    zeros = [i for i in range(_body_start(payload), len(payload)) if payload[i] == 0]
    p = rng.choice(zeros) if zeros and rng.random() < 0.5 else len(payload) - 1
    fields = []
    count = rng.choice((1, 2, 3, 0x7F))
    for _ in range(min(count, 3)):
        tag = rng.choice((0, 1, 2, 3, 7, 127, 128, 2**31 - 1))
        value = rng.randbytes(rng.randrange(0, 6))
        size = rng.choice((len(value), len(value) + 3, 0, 0x7F))
        fields.append(uvarint(tag) + uvarint(size) + value)
    section = uvarint(count) + b"".join(fields)
    return payload[:p] + section + payload[p + 1 :], None


def wrong_header(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """The request header in the wrong version: the tagged section of header v2 dropped or added,
    the client id length bombed, or the API version changed under the same body."""
    if len(payload) < 10:
        return payload, None
    api_key, version = struct.unpack_from(">hh", payload)
    (n,) = struct.unpack_from(">h", payload, HEADER_FIXED)
    head_end = 10 + max(n, 0)
    r = rng.random()
    if r < 0.3:
        if is_flexible(api_key, version):
            return payload[:head_end] + payload[head_end + 1 :], None  # header v1
        return payload[:head_end] + b"\x00" + payload[head_end:], None  # header v2
    if r < 0.5:
        return payload[:head_end] + b"\x02\x00\x03abc" + payload[head_end:], None  # tagged junk
    if r < 0.7:
        bad = rng.choice((-2, 0x7FFF, -(2**15), n + 3))
        return payload[:HEADER_FIXED] + struct.pack(">h", bad) + payload[10:], None
    new_version = max(0, version + rng.choice((-3, -1, 1, 2, 50)))
    return payload[:2] + struct.pack(">h", new_version) + payload[4:], None


def frame_size(payload: bytes, rng: random.Random) -> tuple[bytes, int | None]:
    """The 4-byte size prefix lies: shorter than the frame (the rest reads as the next frame),
    longer (the broker waits for bytes that never come, until the client closes), negative, or
    beyond socket.request.max.bytes."""
    size = rng.choice(
        (
            max(0, len(payload) - rng.randrange(1, 12)),
            len(payload) + rng.randrange(1, 100),
            -1,
            -(2**31),
            2**31 - 1,
            104857600 + 1,
            0,
        )
    )
    return payload, size


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "flip_bits": flip_bits,
    "set_byte": set_byte,
    "int32_bomb": int32_bomb,
    "int16_bomb": int16_bomb,
    "varint_bomb": varint_bomb,
    "insert_bytes": insert_bytes,
    "delete_bytes": delete_bytes,
    "garbage_tags": garbage_tags,
    "wrong_header": wrong_header,
    "frame_size": frame_size,
}


def damage_batch(records: bytes, rng: random.Random) -> bytes:
    """A record batch damaged inside (lengths, counts, varints, attributes) with its CRC32C
    recomputed, so that the broker's record validation, not the CRC check, has to catch it."""
    if len(records) <= 61:  # a header without records: nothing inside to damage
        return records
    out = bytearray(records)
    r = rng.random()
    if r < 0.3:  # a record's varint fields (length, deltas, key/value lengths)
        p = rng.randrange(61, len(out))
        out[p : p + 1] = rng.choice((b"\xff", b"\x7f", b"\x01", b"\x80\x80\x80\x80\x80\x01"))
    elif r < 0.5:  # record count (int32 at 57)
        out[57:61] = struct.pack(">i", rng.choice(BOMBS_32 + (0, 1000)))
    elif r < 0.65:  # attributes: codec, control, transactional bits
        out[21:23] = struct.pack(">h", rng.choice((5, 6, 7, 0x20, 0x10, 0x30, 0x7FFF)))
    elif r < 0.8:  # last offset delta
        out[23:27] = struct.pack(">i", rng.choice(BOMBS_32 + (0, 5)))
    else:  # compressed payload bytes
        for _ in range(rng.randrange(1, 4)):
            out[rng.randrange(61, len(out))] ^= 1 << rng.randrange(8)
    out[17:21] = struct.pack(">I", crc32c(bytes(out[21:])))
    return bytes(out)
