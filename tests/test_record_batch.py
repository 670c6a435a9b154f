"""Record batch v2: round trips, validation failures, in-place offsets, compressed batches."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from kafkapy.protocol import compression
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CorruptRecordError,
    InvalidRecordError,
    Record,
    RecordTooLargeError,
    UnsupportedMagicError,
    assign_offsets_in_place,
    decode_records,
    encode_batch,
    iter_batches,
    parse_batch_header,
    validate_batches,
)

BIG = 10**8


def recs(n: int, value_size: int = 10, ts: int = 1_700_000_000_000) -> list[Record]:
    return [
        Record(0, ts + i, b"k%d" % i, bytes([i % 256]) * value_size, [("h", b"v"), ("n", None)])
        for i in range(n)
    ]


def test_round_trip_and_header_fields() -> None:
    rs = recs(5) + [Record(0, 1_700_000_000_100, None, None, [])]
    b = encode_batch(rs, base_offset=7, producer_id=3, producer_epoch=1, base_sequence=9)
    h = parse_batch_header(b)
    assert h.size == len(b) and h.base_offset == 7 and h.last_offset == 12
    assert h.record_count == 6 and h.codec == 0 and not h.is_control
    assert h.producer_id == 3 and h.base_sequence == 9 and h.last_sequence == 14
    assert h.max_timestamp == 1_700_000_000_100
    assert h.crc == crc32c(b[21:])
    out = decode_records(b)
    assert [r.offset for r in out] == list(range(7, 13))
    assert out[0].headers == [("h", b"v"), ("n", None)]
    assert out[-1].key is None and out[-1].value is None
    assert [r.timestamp for r in out] == [r.timestamp for r in rs]
    assert validate_batches(b, max_batch_size=BIG) == [h]


def test_iter_batches_and_multi_validation() -> None:
    b1, b2 = encode_batch(recs(2)), encode_batch(recs(3), codec=compression.LZ4)
    got = list(iter_batches(b1 + b2))
    assert [p for p, _ in got] == [0, len(b1)]
    assert len(validate_batches(memoryview(b1 + b2), max_batch_size=BIG)) == 2
    with pytest.raises(CorruptRecordError):
        list(iter_batches(b1 + b2[:-1]))


def test_crc_rejection() -> None:
    b = bytearray(encode_batch(recs(3)))
    b[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError) as e:
        validate_batches(b, max_batch_size=BIG)
    assert e.value.error_code == 2


def test_too_large() -> None:
    b = encode_batch(recs(3, 1000))
    with pytest.raises(RecordTooLargeError) as e:
        validate_batches(b, max_batch_size=len(b) - 1)
    assert e.value.error_code == 10
    validate_batches(b, max_batch_size=len(b))


def test_bad_magic() -> None:
    b = bytearray(encode_batch(recs(1)))
    b[16] = 1
    with pytest.raises(UnsupportedMagicError):
        validate_batches(b, max_batch_size=BIG)


@pytest.mark.parametrize("cut", [1, 10, 30, BATCH_HEADER_SIZE + 3])
def test_truncated(cut: int) -> None:
    b = encode_batch(recs(4))
    with pytest.raises(CorruptRecordError):
        validate_batches(b[:-cut] if cut < len(b) else b[:5], max_batch_size=BIG)
    with pytest.raises(InvalidRecordError):
        validate_batches(b"", max_batch_size=BIG)


def _recrc(b: bytearray) -> bytearray:
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    return b


def test_record_count_and_deltas_checked() -> None:
    b = bytearray(encode_batch(recs(3)))
    struct.pack_into(">i", b, 57, 4)  # count 4, lastOffsetDelta 2
    with pytest.raises(InvalidRecordError):
        validate_batches(_recrc(b), max_batch_size=BIG)
    struct.pack_into(">i", b, 57, 2)
    struct.pack_into(">i", b, 23, 1)
    with pytest.raises(InvalidRecordError):
        validate_batches(_recrc(b), max_batch_size=BIG)
    gap = encode_batch([Record(0, 1, b"a", b"b"), Record(5, 2, b"a", b"b")], keep_offsets=True)
    with pytest.raises(InvalidRecordError):
        validate_batches(gap, max_batch_size=BIG)
    ctrl = encode_batch(recs(1), is_control=True, producer_id=1, producer_epoch=0)
    with pytest.raises(InvalidRecordError):
        validate_batches(ctrl, max_batch_size=BIG)
    assert validate_batches(ctrl, max_batch_size=BIG, allow_control=True)


def test_garbage_record_lengths() -> None:
    b = bytearray(encode_batch(recs(2)))
    b[BATCH_HEADER_SIZE] = 0x7E  # first record claims 63 bytes: INVALID_RECORD, as Kafka 4.4
    with pytest.raises(InvalidRecordError):
        validate_batches(_recrc(b), max_batch_size=BIG)


def test_assign_offsets_in_place_keeps_crc() -> None:
    b1, b2 = encode_batch(recs(3)), encode_batch(recs(2))
    buf = bytearray(b1 + b2)
    hs = validate_batches(buf, max_batch_size=BIG)
    assert assign_offsets_in_place(buf, hs, 100, 7, None) == 105
    hs2 = validate_batches(buf, max_batch_size=BIG)
    assert [h.base_offset for h in hs2] == [100, 103]
    assert all(h.partition_leader_epoch == 7 for h in hs2)
    assert [r.offset for r in decode_records(buf[len(b1) :])] == [103, 104]


def test_log_append_time_rewrites_crc() -> None:
    buf = bytearray(encode_batch(recs(3)))
    hs = validate_batches(buf, max_batch_size=BIG)
    assign_offsets_in_place(buf, hs, 0, 1, 42)
    (h,) = validate_batches(buf, max_batch_size=BIG)  # CRC still valid
    assert h.timestamp_type == 1 and h.max_timestamp == 42
    assert h.base_timestamp == hs[0].base_timestamp
    assert {r.timestamp for r in decode_records(buf)} == {42}


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_compressed_batches(codec: int) -> None:
    rs = recs(50, 200)
    b = encode_batch(rs, codec=codec)
    (h,) = validate_batches(b, max_batch_size=BIG)
    assert h.codec == codec and h.record_count == 50
    assert [r.value for r in decode_records(b)] == [r.value for r in rs]
