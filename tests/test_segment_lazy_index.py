"""Segment indexes load lazily (Kafka's LazyIndex): opening a log reads the indexes of its last
segment only; the others are read on first use, and lookups through them stay right."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.storage import index
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.segment import segment_name

TID = uuid.UUID(int=22)
T0 = 1_700_000_000_000
SEGMENTS = 12
BATCHES = 3  # per segment
RECORDS = 4  # per batch


def batch(ts: int) -> bytes:
    return encode_batch([Record(0, ts + i, b"k", bytes(50), []) for i in range(RECORDS)])


def config() -> LogConfig:
    # a roll every BATCHES batches, an index entry for every batch after a segment's first
    return LogConfig(segment_bytes=len(batch(T0)) * BATCHES, index_interval_bytes=0)


def open_log(root: Path, **kw) -> PartitionLog:
    return PartitionLog.open(root, "t", 0, TID, config(), **kw)


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, dict[int, bytes]]:
    """A cleanly closed log of SEGMENTS segments; what ``read_bytes`` answered at each offset."""
    log = open_log(tmp_path, recover=False)
    for n in range(SEGMENTS * BATCHES):
        log.append_as_leader(batch(T0 + 1000 * n), leader_epoch=0, now_ms=T0)
    assert len(log.segments) == SEGMENTS
    reads = {o: log.read_bytes(o, 1) for o in range(log.log_end_offset)}
    log.close()
    return tmp_path, reads


def loaded(log: PartitionLog) -> list[bool]:
    return [s.indexes_loaded for s in log.segments]


def test_open_reads_the_indexes_of_the_last_segment_only(written, monkeypatch) -> None:
    root, _ = written
    read_files: list[str] = []
    real_load = index._Index.load

    def spy(self: index._Index) -> None:
        read_files.append(self.path.name)
        real_load(self)

    monkeypatch.setattr(index._Index, "load", spy)
    log = open_log(root, recover=False)
    last = log.segments[-1].base_offset
    assert loaded(log) == [False] * (SEGMENTS - 1) + [True]
    assert sorted(read_files) == [segment_name(last, ".index"), segment_name(last, ".timeindex")]
    assert log.log_end_offset == SEGMENTS * BATCHES * RECORDS
    log.close()


def test_lookups_are_right_after_a_lazy_load(written, caplog) -> None:
    root, reads = written
    log = open_log(root, recover=False)
    third = log.segments[2]
    offset = third.base_offset + RECORDS + 1  # inside the second batch of the third segment
    assert log.read_bytes(offset, 1) == reads[offset]
    assert third.indexes_loaded and third.offset_index.keys
    assert "rebuilding" not in caplog.text  # read from its file, not rebuilt from the log
    assert loaded(log).count(True) == 2  # that segment and the active one
    assert all(log.read_bytes(o, 1) == data for o, data in reads.items())
    n = 5 * BATCHES + 1  # the second batch of the sixth segment
    assert log.offset_for_timestamp(T0 + 1000 * n) == (n * RECORDS, T0 + 1000 * n)
    log.close()


def test_a_corrupt_index_is_rebuilt_on_first_use(written, caplog) -> None:
    root, reads = written
    path = root / "t-0" / segment_name(BATCHES * RECORDS, ".index")  # the second segment's
    path.write_bytes(path.read_bytes()[:-3])  # not a whole number of entries
    log = open_log(root, recover=False)
    second = log.segments[1]
    assert not second.indexes_loaded  # trusted at open, as Kafka does below the recovery point
    offset = second.base_offset + 2 * RECORDS
    assert log.read_bytes(offset, 1) == reads[offset]
    assert second.indexes_loaded and path.stat().st_size % 8 == 0
    assert "rebuilding the indexes" in caplog.text
    log.close()


def test_missing_index_files_are_rebuilt_at_open(written) -> None:
    root, reads = written
    (root / "t-0" / segment_name(BATCHES * RECORDS, ".timeindex")).unlink()
    log = open_log(root, recover=False)
    assert loaded(log) == [False, True] + [False] * (SEGMENTS - 3) + [True]
    assert all(log.read_bytes(o, 1) == data for o, data in reads.items())
    log.close()


def test_recovery_still_rebuilds_the_unflushed_segments(written) -> None:
    root, reads = written
    end = SEGMENTS * BATCHES * RECORDS
    last = root / "t-0" / segment_name(end - BATCHES * RECORDS, ".log")
    with last.open("ab") as f:
        f.write(b"\x00" * 30)  # a torn batch after an unclean shutdown
    recovery_point = (SEGMENTS - 3) * BATCHES * RECORDS  # the base of the third-last segment
    log = open_log(root, recover=True, recovery_point=recovery_point)
    assert loaded(log) == [False] * (SEGMENTS - 3) + [True] * 3
    assert log.log_end_offset == end and last.stat().st_size == log.segments[-1].size
    assert all(log.read_bytes(o, 1) == data for o, data in reads.items())
    log.close()
