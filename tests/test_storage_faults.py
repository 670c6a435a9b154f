"""Storage faults (issue 12, point 7), in-process: I/O errors during appends, rolls, index and
checkpoint writes and fsyncs take the log directory offline (Kafka's LogDirFailureChannel) and
lose nothing that was written before; flushes split in two halves; corrupt or missing index
files rebuilt at start.

I/O errors come from the storage layer's test-only seam (kafkapy.storage.faults): a filesystem
cannot be made to return EIO on demand. compat_tests/test_storage_faults.py fills a real
size-limited filesystem.
"""

from __future__ import annotations

import errno
import os
import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage import faults
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.log_manager import LogManager

T0 = 1_700_000_000_000
TID = uuid.uuid4()


def batch(n: int = 5, size: int = 100, ts: int = T0) -> bytes:
    return encode_batch([Record(0, ts + i, b"k", bytes([i % 251]) * size) for i in range(n)])


def offsets_of(data: bytes) -> list[int]:
    out = []
    for pos, h in iter_batches(data):
        out += [r.offset for r in decode_records(data[pos : pos + h.size])]
    return out


@pytest.fixture(autouse=True)
def no_faults():
    faults.clear()
    yield
    faults.clear()


def manager(dirs: list[Path], **cfg) -> LogManager:
    m = LogManager(dirs, LogConfig(**cfg))
    m.startup(0, "c")
    return m


def reopen(dirs: list[Path], **cfg) -> LogManager:
    faults.clear()
    return manager(dirs, **cfg)


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
def test_failed_append_takes_the_dir_offline_and_keeps_what_was_written(tmp_path, error):
    a, b = tmp_path / "a", tmp_path / "b"
    m = manager([a, b])
    seen = []
    m.failures.listeners.append(seen.append)
    logs = {p: m.create_log("t", p, TID) for p in range(4)}  # two per directory
    in_a = [p for p, plog in logs.items() if plog.directory.parent == a]
    in_b = [p for p in logs if p not in in_a]
    victim = logs[in_a[0]]
    for _ in range(3):
        victim.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    faults.inject(a, error, after_bytes=300)  # the next batch (~600 bytes) is torn
    with pytest.raises(KafkaStorageError) as info:
        victim.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert info.value.error_code == 56  # KAFKA_STORAGE_ERROR
    assert f"in dir {a}" in str(info.value)
    assert [f.log_dir for f in seen] == [a] and m.online_dirs == [b]
    # every partition in the directory is offline: writes and reads refused
    for p in in_a:
        assert logs[p].offline
        with pytest.raises(KafkaStorageError):
            logs[p].append_as_leader(batch(), leader_epoch=0, now_ms=T0)
        with pytest.raises(KafkaStorageError):
            logs[p].read(0, 1000)
    # the other directory is untouched, and new partitions go there
    for p in in_b:
        logs[p].append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert m.create_log("new", 0, TID).directory.parent == b
    victim.on_io_error(a, "again", OSError(error, "again"))  # a second failure: no new event
    assert len(seen) == 1
    m.shutdown()
    assert (b / ".kafka_cleanshutdown").exists()
    assert not (a / ".kafka_cleanshutdown").exists()  # recovered at the next start
    m2 = reopen([a, b])
    again = m2.get_log("t", in_a[0])
    assert again is not None and again.log_end_offset == 15  # the torn batch is gone
    assert offsets_of(again.read_bytes(0, 10**6)) == list(range(15))
    again.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert offsets_of(again.read_bytes(15, 10**6)) == list(range(15, 20))
    m2.shutdown()


def test_no_online_dir_left(tmp_path):
    m = manager([tmp_path / "a"])
    plog = m.create_log("t", 0, TID)
    faults.inject(tmp_path / "a", errno.EIO)
    with pytest.raises(KafkaStorageError):
        plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert m.online_dirs == []
    with pytest.raises(KafkaStorageError, match="no online log directory"):
        m.create_log("t", 1, TID)
    m.shutdown()  # writes nothing to the failed directory, raises nothing
    assert not (tmp_path / "a" / ".kafka_cleanshutdown").exists()


def test_failed_roll(tmp_path):
    """The new segment file cannot be created: the append that needed the roll fails, the
    log stays as it was (the next start finds it whole)."""
    m = manager([tmp_path], segment_bytes=1500)
    plog = m.create_log("t", 0, TID)
    for _ in range(2):
        plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    size = plog.active_segment.size
    faults.inject(tmp_path, errno.EIO, after_bytes=0)
    with pytest.raises(KafkaStorageError, match="rolling a segment of t-0"):
        plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert len(plog.segments) == 1 and plog.active_segment.size == size
    m.shutdown()
    plog = reopen([tmp_path], segment_bytes=1500).get_log("t", 0)
    assert plog is not None and plog.log_end_offset == 10


def test_failed_index_write(tmp_path):
    """An index entry cannot be written after the batch was: the log goes offline; at the next
    start the segment is recovered and its index rebuilt."""
    m = manager([tmp_path], index_interval_bytes=1)
    plog = m.create_log("t", 0, TID)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    data = len(batch())
    faults.inject(tmp_path, errno.ENOSPC, after_bytes=data + 4)  # the batch, not its entry
    with pytest.raises(KafkaStorageError):
        plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert plog.offline
    m.shutdown()
    plog = reopen([tmp_path], index_interval_bytes=1).get_log("t", 0)
    assert plog is not None and plog.log_end_offset == 15
    for offset in (0, 7, 12):
        assert offsets_of(plog.read_bytes(offset, 1))[0] <= offset


def test_failed_checkpoint_write(tmp_path):
    m = manager([tmp_path / "a", tmp_path / "b"])
    plogs = [m.create_log("t", p, TID) for p in range(2)]
    faults.inject(tmp_path / "a", errno.ENOSPC)
    m.checkpoint()
    assert m.online_dirs == [tmp_path / "b"]
    assert [p.offline for p in plogs] == [p.directory.parent == tmp_path / "a" for p in plogs]
    m.shutdown()


def test_flush_runs_apart_from_appends(tmp_path):
    """start_flush takes the log end; appends go on while the job runs; finish_flush moves the
    recovery point to what was flushed, not further; a truncation meanwhile cancels the move."""
    m = manager([tmp_path], flush_interval_messages=10)
    plog = m.create_log("t", 0, TID)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert not plog.flush_due(T0)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert plog.flush_due(T0)
    job = plog.start_flush()
    assert job is not None and job.target == 10 and not plog.flush_due(T0)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)  # during the fsync
    fds = [fd for fd, _ in job.files]
    job.run()
    for fd in fds:  # the duplicates are closed
        with pytest.raises(OSError):
            os.fstat(fd)
    plog.finish_flush(job)
    assert plog.recovery_point == 10 and plog.log_end_offset == 15
    job = plog.start_flush()
    plog.truncate_to(12)
    job.run()
    plog.finish_flush(job)
    assert plog.recovery_point == 10
    m.shutdown()


def test_flush_interval_ms(tmp_path):
    m = manager([tmp_path], flush_interval_ms=1000)
    plog = m.create_log("t", 0, TID)
    plog.start_flush(now_ms=T0)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert not plog.flush_due(T0 + 999) and plog.flush_due(T0 + 1000)
    m.shutdown()


def test_failed_fsync(tmp_path):
    m = manager([tmp_path])
    plog = m.create_log("t", 0, TID)
    plog.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    job = plog.start_flush()
    faults.inject(tmp_path, errno.EIO)
    with pytest.raises(OSError) as info:
        job.run()
    err = plog.flush_failed(info.value)
    assert err.error_code == 56 and plog.offline and m.online_dirs == []
    assert plog.recovery_point == 0
    m.shutdown()


# ---- index files rebuilt at start ----------------------------------------------------------


def _corrupt_index(path: Path, how: str) -> None:
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:-3])
    elif how == "zeros":
        path.write_bytes(bytes(len(path.read_bytes())))
    elif how == "garbage":
        size = len(path.read_bytes())
        path.write_bytes((b"\x7f\x13\xa5\x01\x00\xfe\x42\x99\x10\x20\x30\x40" * size)[:size])
    elif how == "beyond":  # well-formed entries pointing past the segment
        data = bytearray(path.read_bytes())
        if path.suffix == ".index":
            data[-8:] = (10_000).to_bytes(4, "big") + (9_000_000).to_bytes(4, "big")
        else:
            data[-12:] = (T0 + 10**9).to_bytes(8, "big") + (10_000).to_bytes(4, "big")
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("suffix", [".index", ".timeindex"])
@pytest.mark.parametrize("how", ["missing", "truncated", "zeros", "garbage", "beyond"])
def test_corrupt_or_missing_index_is_rebuilt_at_start(tmp_path, suffix, how):
    cfg = {"segment_bytes": 4000, "index_interval_bytes": 1}
    m = manager([tmp_path], **cfg)
    plog = m.create_log("t", 0, TID)
    for i in range(20):
        plog.append_as_leader(batch(ts=T0 + 10 * i), leader_epoch=0, now_ms=T0)
    assert len(plog.segments) > 2
    m.shutdown()  # clean: the next start trusts what it can check
    first = tmp_path / "t-0" / f"{0:020d}{suffix}"
    _corrupt_index(first, how)
    plog = manager([tmp_path], **cfg).get_log("t", 0)
    assert plog is not None and plog.log_end_offset == 100
    for offset in range(0, 100, 7):
        got = offsets_of(plog.read_bytes(offset, 1))
        assert got[0] <= offset <= got[-1], (offset, got)
    for i in (0, 3, 9, 19):
        assert plog.offset_for_timestamp(T0 + 10 * i) == (5 * i, T0 + 10 * i)
    rebuilt = first.read_bytes()
    size = 8 if suffix == ".index" else 12
    assert rebuilt and len(rebuilt) % size == 0
