"""The record scanner (protocol/record_scan.py): it finds every record's fields as the decoder
does, and its native version (_speedups.c) returns and refuses exactly what the Python one
does."""

from __future__ import annotations

import random

import pytest

from kafkapy.protocol import record_scan as rs
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    Record,
    decode_records,
    encode_batch,
    parse_batch_header,
)

NATIVE = rs.scan_records is not rs.scan_records_py


def records(rng: random.Random, n: int) -> list[Record]:
    out = []
    for i in range(n):
        key = None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 40))
        value = None if rng.random() < 0.2 else rng.randbytes(rng.choice([0, 5, 100, 300]))
        headers = [
            (f"h{j}", None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 8)))
            for j in range(rng.choice([0, 0, 1, 3]))
        ]
        out.append(Record(i, 1_700_000_000_000 + rng.randrange(0, 10**9), key, value, headers))
    return out


def test_scanned_fields_are_the_decoded_ones():
    rng = random.Random(7)
    for _ in range(100):
        batch = encode_batch(records(rng, rng.randrange(1, 40)))
        h = parse_batch_header(batch)
        scanned = rs.scan_records_py(batch, BATCH_HEADER_SIZE, len(batch), h.records_count)
        decoded = decode_records(batch)
        assert len(scanned) == len(decoded)
        for (off, ts, key, null, attr, body, end), r in zip(scanned, decoded, strict=True):
            assert (h.base_offset + off, h.base_timestamp + ts, key, null) == (
                r.offset, r.timestamp, r.key, r.value is None
            )
            assert batch[attr] == 0 and body > attr and end <= len(batch)
        # the records are exactly their scanned spans, back to back
        assert scanned[-1][6] == len(batch)


def outcome(fn, buf, pos, end, count):
    try:
        return fn(buf, pos, end, count)
    except ValueError as e:
        return ("error", str(e))


@pytest.mark.skipif(not NATIVE, reason="native speedups not built")
def test_native_scan_agrees_on_valid_mutated_and_truncated_input():
    rng = random.Random(11)
    for i in range(1500):
        batch = bytearray(encode_batch(records(rng, rng.randrange(1, 12))))
        count = parse_batch_header(batch).records_count
        kind = i % 3
        if kind == 1:  # random bytes changed inside the records
            for _ in range(rng.randrange(1, 4)):
                batch[rng.randrange(BATCH_HEADER_SIZE, len(batch))] = rng.randrange(256)
        end = len(batch) if kind != 2 else rng.randrange(BATCH_HEADER_SIZE, len(batch))
        count = count + rng.choice((0, 0, 0, 1, -1)) if kind == 1 else count
        args = (bytes(batch), BATCH_HEADER_SIZE, end, max(count, 0))
        assert outcome(rs.scan_records, *args) == outcome(rs.scan_records_py, *args), args


@pytest.mark.skipif(not NATIVE, reason="native speedups not built")
def test_bounds_and_huge_varints():
    for args in (
        (b"", 0, 1, 1),
        (b"\x00" * 10, 5, 2, 1),
        (b"\x00" * 10, 0, 10, -1),
        (b"\xff" * 12, 0, 12, 1),
        (b"\x0c\x00" + b"\xff" * 9 + b"\x01" + b"\x00" * 10, 0, 22, 1),
    ):
        assert outcome(rs.scan_records, *args) == outcome(rs.scan_records_py, *args), args
