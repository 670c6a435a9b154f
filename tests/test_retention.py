"""Retention (delete policy): by time and size, never the active segment, asynchronous deletion
(.deleted files removed after file.delete.delay.ms), log start offset moves and is checkpointed."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.storage.checkpoints import LOG_START_OFFSET_CHECKPOINT, read_offset_checkpoint
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import OffsetOutOfRangeError
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.log_manager import LogManager

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
T0 = 1_700_000_000_000
HOUR = 3_600_000


def batch(ts: int, n: int = 2, size: int = 200) -> bytes:
    return encode_batch([Record(0, ts, b"k", bytes(size), []) for _ in range(n)])


def filled_log(tmp: Path, segments: int = 5, **cfg) -> PartitionLog:
    """A log with ``segments`` closed segments (one batch each, 1 hour apart) + active one."""
    cfg.setdefault("segment_bytes", 500)
    log = PartitionLog.open(tmp, "t", 0, TID, LogConfig(**cfg), recover=False)
    for i in range(segments + 1):
        log.append_as_leader(batch(T0 + i * HOUR), leader_epoch=0, now_ms=T0 + i * HOUR)
    assert len(log.segments) == segments + 1
    return log


def files(log: PartitionLog, suffix: str) -> list[str]:
    return sorted(p.name for p in log.directory.iterdir() if p.name.endswith(suffix))


def test_retention_by_time_deletes_expired_closed_segments(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=2 * HOUR + 1, file_delete_delay_ms=1000)
    now = T0 + 5 * HOUR
    # segments 0..2 have largest timestamp older than now - 2h
    assert log.delete_old_segments(now) == 3
    assert [s.base_offset for s in log.segments] == [6, 8, 10]
    assert log.log_start_offset == 6
    # files renamed .deleted, removed only after the delay: each segment's .log, .index and
    # .timeindex, and the producer snapshots taken when segments 2 and 4 were rolled (segment
    # 0's roll happened at offset 2: its snapshot is named 2, deleted with segment 2)
    deleted = files(log, ".deleted")
    assert len([n for n in deleted if ".snapshot" not in n]) == 9
    assert [n for n in deleted if ".snapshot" in n] == [
        "00000000000000000002.snapshot.deleted",
        "00000000000000000004.snapshot.deleted",
    ]
    assert log.purge_deleted_files(now + 999) == 0
    assert log.purge_deleted_files(now + 1000) == 11
    assert files(log, ".deleted") == []
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 1000)
    assert log.read(6, 10000).size > 0
    log.close()


def test_retention_never_deletes_active_segment(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=0, file_delete_delay_ms=0)
    assert log.delete_old_segments(T0 + 100 * HOUR) == 5
    assert len(log.segments) == 1
    assert log.log_start_offset == log.active_segment.base_offset == 10
    assert log.log_end_offset == 12
    assert files(log, ".deleted") == []
    log.close()


def test_retention_unlimited_and_compact_only(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=-1)
    assert log.delete_old_segments(T0 + 100 * HOUR) == 0
    log.update_config(LogConfig(segment_bytes=500, retention_ms=0, cleanup_policy=("compact",)))
    assert log.delete_old_segments(T0 + 100 * HOUR) == 0
    log.update_config(LogConfig(segment_bytes=500, retention_ms=0, file_delete_delay_ms=0))
    assert log.delete_old_segments(T0 + 100 * HOUR) == 5
    log.close()


def test_retention_by_size(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=-1, file_delete_delay_ms=0)
    seg_size = log.segments[0].size
    total = log.size_in_bytes()
    # keep at most total - 2.5 segments: 3 segments must go (Kafka deletes while diff >= size)
    log.update_config(
        LogConfig(
            segment_bytes=500,
            retention_ms=-1,
            retention_bytes=total - int(2.5 * seg_size),
            file_delete_delay_ms=0,
        )
    )
    assert log.delete_old_segments(T0) == 2
    assert log.log_start_offset == 4
    log.close()


def test_delete_records_then_segments_below_start_go(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=-1, file_delete_delay_ms=60000)
    assert log.delete_records_before(5) == 5
    # segments [0,2) and [2,4) lie wholly below 5: renamed .deleted at once
    assert [s.base_offset for s in log.segments][0] == 4
    assert len(files(log, ".log.deleted")) == 2
    log.close()
    reopened = PartitionLog.open(tmp_path, "t", 0, TID, LogConfig(), recover=False,
                                 log_start_offset=5)
    assert files(reopened, ".deleted") == []  # removed when the log is loaded
    assert reopened.log_start_offset == 5
    reopened.close()


def test_in_flight_read_survives_deletion(tmp_path: Path) -> None:
    log = filled_log(tmp_path, retention_ms=0, file_delete_delay_ms=0)
    data = log.read(0, 10000)
    fd = os.dup(data.regions[0].fileno)
    try:
        log.delete_old_segments(T0 + 100 * HOUR)
        got = os.pread(fd, data.regions[0].length, data.regions[0].position)
        assert len(got) == data.regions[0].length
    finally:
        os.close(fd)
    log.close()


def test_log_manager_retention_checkpoints_log_start(tmp_path: Path) -> None:
    mgr = LogManager([tmp_path], LogConfig())
    mgr.startup(0, "cluster")
    cfg = LogConfig(segment_bytes=500, retention_ms=HOUR, file_delete_delay_ms=0)
    log = mgr.create_log("t", 0, TID, cfg)
    for i in range(4):
        log.append_as_leader(batch(T0 + i * HOUR), leader_epoch=0, now_ms=T0 + i * HOUR)
    assert mgr.delete_old_segments(T0 + 10 * HOUR) == 3
    starts = read_offset_checkpoint(tmp_path / LOG_START_OFFSET_CHECKPOINT)
    assert starts[("t", 0)] == 6
    mgr.shutdown()
    mgr2 = LogManager([tmp_path], LogConfig())
    mgr2.startup(0, "cluster")
    assert mgr2.get_log("t", 0).log_start_offset == 6
    mgr2.shutdown()
