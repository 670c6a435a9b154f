"""PartitionLog: append, roll, read semantics, timestamps, epochs, recovery, idempotence."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import (
    InvalidProducerEpochError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
)
from kafkapy.storage.log import PartitionLog

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
T0 = 1_700_000_000_000


def batch(n: int = 3, ts: int = T0, size: int = 100, **kw) -> bytes:
    rs = [Record(0, ts + i, b"k", bytes(size), []) for i in range(n)]
    return encode_batch(rs, **kw)


def open_log(tmp: Path, recover: bool = False, **cfg) -> PartitionLog:
    return PartitionLog.open(tmp, "t", 0, TID, LogConfig(**cfg), recover=recover)


def offsets_of(data: bytes) -> list[int]:
    out = []
    for pos, h in iter_batches(data):
        out += [r.offset for r in decode_records(data[pos : pos + h.size])]
    return out


def test_append_assigns_offsets_and_reads_back(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    r1 = log.append_as_leader(batch(3), leader_epoch=0, now_ms=T0)
    r2 = log.append_as_leader(batch(2) + batch(4), leader_epoch=0, now_ms=T0)
    assert (r1.base_offset, r1.last_offset, r2.base_offset, r2.last_offset) == (0, 2, 3, 8)
    assert r1.log_append_time_ms == -1 and not r1.duplicate
    assert log.log_end_offset == log.high_watermark == 9
    assert offsets_of(log.read_bytes(0, 10**6)) == list(range(9))
    assert (tmp_path / "t-0" / "00000000000000000000.log").exists()
    assert (tmp_path / "t-0" / "partition.metadata").read_text() == (
        "version: 0\ntopic_id: EjRWeBI0VngSNFZ4EjRWeA\n"
    )
    log.close()


def test_read_semantics(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    sizes = []
    for _ in range(4):
        b = batch(5)
        sizes.append(len(b))
        log.append_as_leader(b, leader_epoch=0, now_ms=T0)
    # mid-batch offset returns the whole containing batch
    d = log.read(7, 10**6)
    assert d.regions[0].position == sizes[0] and d.size == sum(sizes[1:])
    assert offsets_of(log.read_bytes(7, 10**6))[0] == 5
    # KIP-74: at least one whole batch even over max_bytes
    d = log.read(0, 10)
    assert d.size == sizes[0] and len(d.regions) == 1
    assert log.read(0, 10, min_one_batch=False).size == 0
    # max_bytes stops at whole batches
    assert log.read(0, sizes[0] + sizes[1] + 5).size == sizes[0] + sizes[1]
    # max_offset is exclusive (high watermark)
    assert offsets_of(log.read_bytes(0, 10**6, max_offset=10)) == list(range(10))
    assert log.read(10, 10**6, max_offset=10).size == 0
    assert log.read(20, 10**6).size == 0
    for bad in (-1, 21):
        with pytest.raises(OffsetOutOfRangeError) as e:
            log.read(bad, 100)
        assert e.value.error_code == 1
    log.close()


def test_roll_by_size_index_and_reads_across_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=2000, index_interval_bytes=300)
    for _ in range(30):
        log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    assert len(log.segments) > 3
    names = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert names[0] == "00000000000000000000.log"
    assert names[1] == f"{log.segments[1].base_offset:020d}.log"
    assert all(s.size <= 2000 for s in log.segments)
    assert len(log.segments[0].offset_index) > 0
    for off in range(60):
        data = log.read_bytes(off, 300)
        assert off in offsets_of(data)
    idx = (tmp_path / "t-0" / "00000000000000000000.index").read_bytes()
    assert len(idx) == 8 * len(log.segments[0].offset_index)
    log.close()


def test_roll_by_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_ms=1000)
    log.append_as_leader(batch(1, ts=T0), leader_epoch=0, now_ms=T0)
    log.append_as_leader(batch(1, ts=T0 + 500), leader_epoch=0, now_ms=T0)
    assert len(log.segments) == 1
    log.append_as_leader(batch(1, ts=T0 + 1500), leader_epoch=0, now_ms=T0)
    assert [s.base_offset for s in log.segments] == [0, 2]
    log.close()


def test_timestamp_lookup_and_max_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=1500, index_interval_bytes=200)
    for i in range(20):
        log.append_as_leader(batch(3, ts=T0 + i * 10), leader_epoch=0, now_ms=T0)
    # batch i holds offsets 3i..3i+2 with timestamps T0+10i .. T0+10i+2
    assert log.offset_for_timestamp(T0) == (0, T0)
    assert log.offset_for_timestamp(T0 + 51) == (16, T0 + 51)
    assert log.offset_for_timestamp(T0 + 53) == (18, T0 + 60)
    assert log.offset_for_timestamp(T0 + 10_000) is None
    assert log.max_timestamp() == (T0 + 192, 59)
    log.close()
    log = open_log(tmp_path)
    assert log.offset_for_timestamp(T0 + 53) == (18, T0 + 60)
    assert log.max_timestamp() == (T0 + 192, 59)
    log.close()


def test_max_timestamp_out_of_order(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.max_timestamp() == (-1, -1)
    rs = [Record(0, T0 + 5, None, b"a"), Record(0, T0 + 50, None, b"b"), Record(0, T0, None, b"c")]
    log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    log.append_as_leader(encode_batch(rs), leader_epoch=0, now_ms=T0)
    assert log.max_timestamp() == (T0 + 50, 3)
    log.close()


def test_log_append_time(tmp_path: Path) -> None:
    log = open_log(tmp_path, message_timestamp_type="LogAppendTime")
    r = log.append_as_leader(batch(3), leader_epoch=0, now_ms=T0 + 999)
    assert r.log_append_time_ms == T0 + 999
    data = log.read_bytes(0, 10**6)
    assert {x.timestamp for x in decode_records(data)} == {T0 + 999}
    assert log.max_timestamp() == (T0 + 999, 0)
    log.close()


def test_leader_epochs(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    assert log.latest_epoch() == -1 and log.end_offset_for_epoch(0) == (-1, -1)
    log.append_as_leader(batch(2), leader_epoch=1, now_ms=T0)
    log.append_as_leader(batch(2), leader_epoch=1, now_ms=T0)
    log.append_as_leader(batch(3), leader_epoch=3, now_ms=T0)
    log.append_as_leader(batch(1), leader_epoch=5, now_ms=T0)
    assert log.latest_epoch() == 5
    assert log.end_offset_for_epoch(5) == (5, 8)
    assert log.end_offset_for_epoch(1) == (1, 4)
    assert log.end_offset_for_epoch(2) == (1, 4)
    assert log.end_offset_for_epoch(3) == (3, 7)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(6) == (-1, -1)
    assert log.end_offset_for_epoch(-1) == (-1, -1)
    assert [log.epoch_for_offset(o) for o in (0, 3, 4, 6, 7, 100)] == [1, 1, 3, 3, 5, 5]
    assert (tmp_path / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n3\n1 0\n3 4\n5 7\n"
    log.close()
    log = open_log(tmp_path)
    assert log.end_offset_for_epoch(3) == (3, 7)
    log.close()


def test_recovery_truncates_torn_tail(tmp_path: Path) -> None:
    log = open_log(tmp_path, index_interval_bytes=100)
    for _ in range(10):
        log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    log.close()
    path = tmp_path / "t-0" / "00000000000000000000.log"
    full = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(full - 7)  # half of the last batch
    log = open_log(tmp_path, recover=True)
    assert log.log_end_offset == 18
    assert path.stat().st_size < full - 7
    assert offsets_of(log.read_bytes(0, 10**6)) == list(range(18))
    r = log.append_as_leader(batch(1), leader_epoch=0, now_ms=T0)
    assert r.base_offset == 18
    log.close()


def test_recovery_after_corrupt_batch_and_missing_indexes(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=1500, index_interval_bytes=100)
    for _ in range(20):
        log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    n_segments = len(log.segments)
    log.close()
    d = tmp_path / "t-0"
    for p in list(d.glob("*.index")) + list(d.glob("*.timeindex")):
        p.unlink()
    log = open_log(tmp_path)  # not even flagged for recovery: missing indexes force rebuild
    assert len(log.segments) == n_segments and log.log_end_offset == 40
    assert all(s.offset_index.path.exists() for s in log.segments)
    assert offsets_of(log.read_bytes(25, 10**6))[0] <= 25
    assert log.offset_for_timestamp(T0 + 1) == (1, T0 + 1)
    log.close()
    # flip a byte in the middle segment: it and everything after are dropped
    mid = sorted(d.glob("*.log"))[1]
    data = bytearray(mid.read_bytes())
    data[-3] ^= 0xFF
    mid.write_bytes(bytes(data))
    log = open_log(tmp_path, recover=True)
    assert len(log.segments) == 2
    assert log.log_end_offset < 40
    assert offsets_of(log.read_bytes(0, 10**6))[0] == 0
    log.close()


def test_delete_records_before(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=1500)
    for _ in range(20):
        log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    first_bases = [s.base_offset for s in log.segments]
    assert log.delete_records_before(first_bases[2] + 1) == first_bases[2] + 1
    assert log.segments[0].base_offset == first_bases[2]
    assert not (tmp_path / "t-0" / f"{first_bases[0]:020d}.log").exists()
    with pytest.raises(OffsetOutOfRangeError):
        log.read(first_bases[2], 100)
    assert offsets_of(log.read_bytes(first_bases[2] + 1, 10**6))[0] <= first_bases[2] + 1
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(41)
    assert log.delete_records_before(-1) == 40
    assert log.read(40, 100).size == 0
    log.close()


def test_idempotent_dedupe_order_and_fencing_survive_reopen(tmp_path: Path) -> None:
    log = open_log(tmp_path)

    def p(seq: int, n: int = 2, epoch: int = 0) -> bytes:
        return batch(n, producer_id=7, producer_epoch=epoch, base_sequence=seq)

    log.append_as_leader(batch(1), leader_epoch=0, now_ms=T0)
    a = log.append_as_leader(p(0), leader_epoch=0, now_ms=T0)
    b = log.append_as_leader(p(2), leader_epoch=0, now_ms=T0)
    assert (a.base_offset, b.base_offset) == (1, 3)
    dup = log.append_as_leader(p(0), leader_epoch=0, now_ms=T0)
    assert dup.duplicate and (dup.base_offset, dup.last_offset) == (1, 2)
    assert log.log_end_offset == 5
    with pytest.raises(OutOfOrderSequenceError) as e:
        log.append_as_leader(p(9), leader_epoch=0, now_ms=T0)
    assert e.value.error_code == 45
    log.close()
    os.remove(tmp_path / "t-0" / "00000000000000000000.index")  # state comes from headers
    for recover in (False, True):
        log = open_log(tmp_path, recover=recover)
        dup = log.append_as_leader(p(2), leader_epoch=0, now_ms=T0)
        assert dup.duplicate and dup.base_offset == 3
        with pytest.raises(OutOfOrderSequenceError):
            log.append_as_leader(p(5), leader_epoch=0, now_ms=T0)
        log.close()
    log = open_log(tmp_path)
    assert log.append_as_leader(p(0, epoch=1), leader_epoch=0, now_ms=T0).base_offset == 5
    with pytest.raises(InvalidProducerEpochError) as e2:
        log.append_as_leader(p(4), leader_epoch=0, now_ms=T0)
    assert e2.value.error_code == 47
    with pytest.raises(OutOfOrderSequenceError):
        log.append_as_leader(p(3, epoch=2), leader_epoch=0, now_ms=T0)
    # an unknown producer may start anywhere (Kafka: its state may have been retained away)
    other = batch(1, producer_id=8, producer_epoch=0, base_sequence=17)
    assert not log.append_as_leader(other, leader_epoch=0, now_ms=T0).duplicate
    log.close()
    log = open_log(tmp_path)
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(p(2), leader_epoch=0, now_ms=T0)
    log.close()


def test_sequence_wraps_at_int32_max(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    mx = 2**31 - 1
    log.append_as_leader(
        batch(2, producer_id=1, producer_epoch=0, base_sequence=mx - 1), leader_epoch=0, now_ms=T0
    )
    r = log.append_as_leader(
        batch(2, producer_id=1, producer_epoch=0, base_sequence=0), leader_epoch=0, now_ms=T0
    )
    assert not r.duplicate and r.base_offset == 2
    log.close()


def test_new_log_writes_its_topic_id_before_its_first_record(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    d = tmp_path / "t-0"
    # created without the fsync'd partition.metadata (the broker writes it in the background)
    # and without index files (made with the segment's first batch, as Kafka's LazyIndex)
    assert log.metadata_pending == TID
    assert not (d / "partition.metadata").exists()
    assert not list(d.glob("*.index")) and not list(d.glob("*.timeindex"))
    log.append_as_leader(batch(2), leader_epoch=0, now_ms=T0)
    assert log.metadata_pending is None
    assert (d / "partition.metadata").read_text().endswith("EjRWeBI0VngSNFZ4EjRWeA\n")
    assert (d / "00000000000000000000.index").exists()
    assert (d / "00000000000000000000.timeindex").exists()
    log.close()
    again = open_log(tmp_path)  # loads (no recovery needed) and keeps the records
    assert again.log_end_offset == 2 and again.metadata_pending is None
    again.close()


def test_follower_append_writes_the_topic_id_first(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    leader = open_log(tmp_path / "leader")
    leader.append_as_leader(batch(3), leader_epoch=4, now_ms=T0)
    log.append_as_follower(leader.read_bytes(0, 10**6), now_ms=T0)
    assert (tmp_path / "t-0" / "partition.metadata").exists()
    assert log.log_end_offset == 3
    leader.close()
    log.close()


def test_background_flush_and_close_write_the_topic_id(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.flush_metadata_file()  # what the broker's background flusher calls
    assert (tmp_path / "t-0" / "partition.metadata").exists() and log.metadata_pending is None
    log.close()
    other = PartitionLog.open(tmp_path, "u", 0, TID, LogConfig(), recover=False)
    other.close()  # never flushed, never appended to: closing writes it
    assert (tmp_path / "u-0" / "partition.metadata").exists()


def test_empty_new_log_reopens_empty(tmp_path: Path) -> None:
    open_log(tmp_path).close()
    log = open_log(tmp_path, recover=True)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)
    assert log.append_as_leader(batch(1), leader_epoch=0, now_ms=T0).base_offset == 0
    log.close()
