"""The native record walk (_speedups.c) accepts and refuses exactly what the Python one does."""

from __future__ import annotations

import random

import pytest

from kafkapy.protocol import record_walk as rw
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    Record,
    RecordBatchError,
    encode_batch,
    encode_varint,
)

pytestmark = pytest.mark.skipif(not rw.NATIVE_WALK, reason="native record walk not built")


def outcome(fn, buf, pos, end, count, keys):
    try:
        stats = fn(buf, pos, end, count, keys)
    except RecordBatchError as e:
        return type(e).__name__, str(e)
    return "ok", stats


def same(buf, pos, end, count, keys=False):
    py = outcome(rw._walk_records_py, buf, pos, end, count, keys)
    native = outcome(rw._walk_records_native, buf, pos, end, count, keys)
    where = (bytes(buf).hex(), pos, end, count, keys)
    assert native == py, where
    return py


def records(rng: random.Random, n: int) -> list[Record]:
    out = []
    for i in range(n):
        key = None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 20))
        value = None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 5, 100, 300]))
        headers = [
            (f"h{j}", None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 8)))
            for j in range(rng.choice([0, 0, 1, 3]))
        ]
        out.append(
            Record(i, 1_700_000_000_000 + rng.randrange(-(10**6), 10**9), key, value, headers)
        )
    return out


def test_valid_batches_agree() -> None:
    rng = random.Random(1)
    for _ in range(200):
        batch = encode_batch(records(rng, rng.randrange(1, 30)))
        count = int.from_bytes(batch[57:61], "big")
        assert same(batch, BATCH_HEADER_SIZE, len(batch), count)[0] == "ok"
        assert same(batch, BATCH_HEADER_SIZE, len(batch), count + 1)[0] == "InvalidRecordError"


def test_mutated_batches_agree() -> None:
    rng = random.Random(2)
    seen = set()
    for _ in range(4000):
        batch = bytearray(encode_batch(records(rng, rng.randrange(1, 6))))
        count = int.from_bytes(batch[57:61], "big")
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(BATCH_HEADER_SIZE, len(batch))
            batch[i] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        end = len(batch) if rng.random() < 0.7 else rng.randrange(BATCH_HEADER_SIZE, len(batch))
        tail = rng.choice([b"", b"\xff" * 12, bytes(rng.randrange(256) for _ in range(5))])
        res = same(bytes(batch) + tail, BATCH_HEADER_SIZE, end, count, rng.random() < 0.2)
        seen.add(res[0])
    assert {"ok", "InvalidRecordError", "OffsetDeltaError"} <= seen


def test_extreme_varints_agree() -> None:
    huge = [
        b"\xff" * 9 + b"\x01",  # largest 10-byte varint
        b"\xff" * 9 + b"\x7f",  # more than 64 bits: a "huge" value
        b"\xfe" * 9 + b"\x7f",
        b"\xff" * 10 + b"\x01",  # 11 bytes: too long
        b"\x80" * 9 + b"\x02",
    ]
    base = [b"\x00", encode_varint(0), encode_varint(0), encode_varint(1), b"k"]
    for h in huge:
        for slot in range(len(base) + 2):
            fields = list(base) + [encode_varint(-1), encode_varint(0)]
            fields.insert(slot, h)
            body = b"".join(fields)
            for length in (encode_varint(len(body)), h):
                buf = length + body
                same(buf, 0, len(buf), 1)
                same(buf + b"\x00" * 30, 0, len(buf), 1, True)


def test_huge_header_count_and_lengths_agree() -> None:
    for nh in (encode_varint(2**62), encode_varint(-(2**62)), b"\xff" * 9 + b"\x7f"):
        body = b"\x00\x00\x00" + encode_varint(-1) + encode_varint(1) + b"v" + nh + b"\x02a\x00"
        buf = encode_varint(len(body)) + body
        same(buf, 0, len(buf), 1)
    same(b"", 0, 0, 1)
    same(b"\x0c", 0, 1, 1)
