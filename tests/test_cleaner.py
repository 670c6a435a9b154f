"""Log cleaner: latest value per key, offsets kept, tombstones and their delete horizon,
compressed batches, producer metadata, dirty ratio and lags, dedupe buffer bound, uncleanable
partitions, and a crash injected at each step of a segment swap."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import (
    Record,
    decode_records,
    encode_batch,
    iter_batches,
)
from kafkapy.storage import cleaner_pass
from kafkapy.storage.checkpoints import read_offset_checkpoint
from kafkapy.storage.cleaner import CLEANER_OFFSET_CHECKPOINT, LogCleaner, OffsetMap
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.log_manager import LogManager

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
T0 = 1_700_000_000_000
DAY = 86_400_000


def cfg(**kw) -> LogConfig:
    base = dict(
        segment_bytes=600,
        cleanup_policy=("compact",),
        min_cleanable_dirty_ratio=0.01,
        file_delete_delay_ms=0,
        delete_retention_ms=DAY,
    )
    base.update(kw)
    return LogConfig(**base)


def kv_batch(pairs, ts=T0, codec=0, **kw) -> bytes:
    return encode_batch(
        [Record(0, ts, k, v, []) for k, v in pairs], codec=codec, **kw
    )


def all_batches(log: PartitionLog) -> bytes:
    """Every batch from the log start (read() returns one segment's worth at a time)."""
    out = b""
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read_bytes(offset, 10**8)
        if not data:
            break
        out += data
        for _, h in iter_batches(data):
            offset = h.next_offset
    return out


def all_records(log: PartitionLog) -> list[Record]:
    data = all_batches(log)
    out = []
    for pos, h in iter_batches(data):
        out += decode_records(data[pos : pos + h.size])
    return out


def latest_view(records) -> dict[bytes, bytes | None]:
    out: dict[bytes, bytes | None] = {}
    for r in records:
        out[r.key] = r.value
    return out


@pytest.fixture
def manager(tmp_path: Path):
    mgr = LogManager([tmp_path], LogConfig())
    mgr.startup(0, "cluster")
    yield mgr
    if mgr.logs:
        mgr.shutdown()


def fill(log: PartitionLog, rounds: int = 6, keys: int = 4, codec: int = 0) -> None:
    """``rounds`` updates of ``keys`` keys; offset o holds key o % keys, round o // keys."""
    for r in range(rounds):
        for k in range(keys):
            pairs = [(b"key%d" % k, b"v%d-%d" % (k, r) + bytes(40))]
            log.append_as_leader(kv_batch(pairs, codec=codec), leader_epoch=0, now_ms=T0)


def test_offset_map_capacity_is_kafkas() -> None:
    m = OffsetMap(1000)
    assert m.slots == int(1000 * 0.9) // 24
    m.put(b"a", 3)
    m.put(b"a", 7)
    assert m.get(b"a") == 7 and m.get(b"b") == -1 and len(m) == 1


def test_compaction_keeps_latest_per_key_with_offsets(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    fill(log)
    before = all_records(log)
    leo = log.log_end_offset
    cleaner = LogCleaner(manager)
    stats = cleaner.clean_all(T0)
    assert stats and stats[0].records_kept < stats[0].records_read
    after = all_records(log)
    assert latest_view(after) == latest_view(before)
    assert log.log_end_offset == leo
    # offsets are unchanged: every kept record has the offset it had
    by_offset = {r.offset: r for r in before}
    for r in after:
        assert by_offset[r.offset].value == r.value and by_offset[r.offset].key == r.key
    # in the cleaned part each key appears once
    cleaned_end = cleaner.first_dirty_offset(("t", 0))
    keys = [r.key for r in after if r.offset < cleaned_end]
    assert len(keys) == len(set(keys))
    cp = read_offset_checkpoint(log.directory.parent / CLEANER_OFFSET_CHECKPOINT)
    assert cp[("t", 0)] == cleaned_end
    # reopening from disk gives the same view (indexes written with the cleaned segment)
    manager.shutdown()
    reopened = PartitionLog.open(log.directory.parent, "t", 0, TID, cfg(), recover=True)
    assert [(r.offset, r.value) for r in all_records(reopened)] == [
        (r.offset, r.value) for r in after
    ]
    reopened.close()


def test_tombstones_kept_for_delete_retention_then_removed(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    fill(log, rounds=3)
    log.append_as_leader(kv_batch([(b"key1", None)]), leader_epoch=0, now_ms=T0)
    fill(log, rounds=3, keys=1)  # more data so the tombstone's segment closes
    log.roll(T0)
    cleaner = LogCleaner(manager)
    cleaner.clean_all(T0)
    view = latest_view(all_records(log))
    assert view[b"key1"] is None  # tombstone retained, horizon stamped
    headers = [h for _, h in iter_batches(all_batches(log))]
    stamped = [h for h in headers if h.delete_horizon_ms is not None]
    assert stamped and stamped[0].delete_horizon_ms == T0 + DAY
    # before the horizon nothing changes; after it the tombstone goes
    assert cleaner.clean_once(T0 + DAY - 1) is None
    assert cleaner.clean_once(T0 + DAY + 1) is not None
    view = latest_view(all_records(log))
    assert b"key1" not in view and view[b"key2"] is not None


def test_compressed_batches_recompressed_with_their_codec(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg(segment_bytes=2000))
    for r in range(6):
        pairs = [(b"a", b"a%d" % r), (b"b", b"b%d" % r), (b"c" + bytes([r]), b"x")]
        log.append_as_leader(kv_batch(pairs, codec=4), leader_epoch=0, now_ms=T0)
        log.roll(T0)
    before = latest_view(all_records(log))
    LogCleaner(manager).clean_all(T0)
    data = all_batches(log)
    codecs = {h.codec for _, h in iter_batches(data)}
    assert codecs == {4}
    assert latest_view(all_records(log)) == before
    assert len(all_records(log)) < 18


def test_keyless_records_are_dropped_and_producer_batches_kept(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    # an idempotent producer writes k twice; its last batch is superseded by another producer
    log.append_as_leader(
        kv_batch([(b"k", b"1")], producer_id=7, producer_epoch=0, base_sequence=0),
        leader_epoch=0,
        now_ms=T0,
    )
    log.append_as_leader(
        kv_batch([(b"k", b"2")], producer_id=7, producer_epoch=0, base_sequence=1),
        leader_epoch=0,
        now_ms=T0,
    )
    log.append_as_leader(kv_batch([(b"k", b"3")]), leader_epoch=0, now_ms=T0)
    log.roll(T0)
    log.append_as_leader(kv_batch([(b"z", b"z")]), leader_epoch=0, now_ms=T0)
    LogCleaner(manager).clean_all(T0)
    data = all_batches(log)
    hs = [h for _, h in iter_batches(data)]
    empty = [h for h in hs if h.records_count == 0]
    assert len(empty) == 1 and empty[0].producer_id == 7 and empty[0].base_sequence == 1
    assert empty[0].base_offset == 1 and empty[0].last_offset == 1
    assert [(r.offset, r.value) for r in all_records(log)] == [(2, b"3"), (3, b"z")]
    # the producer's sequence state survives a reopen: its next sequence is accepted
    manager.shutdown()
    reopened = PartitionLog.open(log.directory.parent, "t", 0, TID, cfg(), recover=True)
    res = reopened.append_as_leader(
        kv_batch([(b"k", b"4")], producer_id=7, producer_epoch=0, base_sequence=2),
        leader_epoch=0,
        now_ms=T0,
    )
    assert res.base_offset == 4
    reopened.close()


def test_dirty_ratio_and_compaction_lags(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg(min_cleanable_dirty_ratio=0.5))
    fill(log)
    cleaner = LogCleaner(manager)
    assert cleaner.clean_once(T0) is not None
    assert cleaner.clean_once(T0) is None  # nothing dirty any more
    log.append_as_leader(kv_batch([(b"key0", b"new")]), leader_epoch=0, now_ms=T0)
    log.roll(T0)
    log.append_as_leader(kv_batch([(b"key9", b"x")]), leader_epoch=0, now_ms=T0)
    # below a 0.99 ratio: nothing to do
    log.update_config(cfg(min_cleanable_dirty_ratio=0.99))
    assert cleaner.clean_once(T0) is None
    # max.compaction.lag.ms forces cleaning once dirty records are old enough
    log.update_config(cfg(min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1000))
    assert cleaner.clean_once(T0 + 500) is None
    assert cleaner.clean_once(T0 + 5000) is not None
    # min.compaction.lag.ms keeps young segments dirty
    log.update_config(cfg(min_compaction_lag_ms=DAY))
    for r in range(4):
        log.append_as_leader(kv_batch([(b"key0", b"%d" % r)]), leader_epoch=0, now_ms=T0)
        log.roll(T0)
    assert cleaner.clean_once(T0 + 1000) is None
    assert cleaner.clean_once(T0 + DAY + 1000) is not None


def test_small_dedupe_buffer_cleans_in_several_passes(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    fill(log, rounds=4, keys=20)
    before = latest_view(all_records(log))
    cleaner = LogCleaner(manager, dedupe_buffer_size=24 * 12)
    slots = OffsetMap(24 * 12).slots
    assert slots == 10
    passes = cleaner.clean_all(T0)
    assert len(passes) > 1
    assert all(s.end_offset - s.first_dirty <= slots for s in passes)
    assert latest_view(all_records(log)) == before


def test_failure_marks_partition_uncleanable_others_cleaned(
    manager: LogManager, monkeypatch
) -> None:
    bad = manager.create_log("bad", 0, TID, cfg())
    good = manager.create_log("good", 0, uuid.uuid4(), cfg())
    fill(bad, rounds=8)
    fill(good)
    cleaner = LogCleaner(manager)
    real = cleaner_pass._clean_group

    def broken(task, group, omap):
        if task.tp[0] == "bad":
            raise ValueError("a record the cleaner cannot read")
        return real(task, group, omap)

    monkeypatch.setattr(cleaner_pass, "_clean_group", broken)
    done = cleaner.clean_all(T0)
    assert [s.topic for s in done] == ["good"]
    assert ("bad", 0) in cleaner.uncleanable and not bad.cleaning
    assert not [p for p in bad.directory.iterdir() if p.name.endswith(".cleaned")]


def test_io_error_while_cleaning_takes_the_log_dir_offline(manager: LogManager, monkeypatch):
    """An OSError is the disk's fault, not the log's (Kafka's LogCleaner): the directory goes
    offline, with all its partitions, instead of one partition becoming uncleanable."""
    bad = manager.create_log("bad", 0, TID, cfg())
    other = manager.create_log("other", 0, uuid.uuid4(), cfg())
    fill(bad, rounds=8)
    cleaner = LogCleaner(manager)

    def broken(task, group, omap):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(cleaner_pass, "_clean_group", broken)
    assert cleaner.clean_all(T0) == []
    assert bad.offline and other.offline and not manager.online_dirs
    assert ("bad", 0) not in cleaner.uncleanable and not bad.cleaning


class SimulatedCrash(BaseException):
    pass


STEPS = ["cleaned", "swapped", "deleting", "deleted", "installing", "installed"]


@pytest.mark.parametrize("step", STEPS)
def test_crash_at_each_swap_step_recovers(tmp_path: Path, step: str) -> None:
    mgr = LogManager([tmp_path], LogConfig())
    mgr.startup(0, "cluster")
    log = mgr.create_log("t", 0, TID, cfg(segment_bytes=1200))
    fill(log, rounds=8)
    before = all_records(log)
    expected = latest_view(before)
    leo = log.log_end_offset

    def hook(s: str) -> None:
        if s == step:
            raise SimulatedCrash(s)

    cleaner = LogCleaner(mgr, crash_hook=hook)
    with pytest.raises(SimulatedCrash):
        cleaner.clean_once(T0)
    # the process dies here: no cleanup, descriptors just vanish
    for seg in log.segments:
        if not seg.closed:
            os.close(seg.fd)
    reopened = PartitionLog.open(tmp_path, "t", 0, TID, cfg(), recover=True)
    names = [p.name for p in reopened.directory.iterdir()]
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))], names
    recs = all_records(reopened)
    assert latest_view(recs) == expected
    assert reopened.log_end_offset == leo
    offsets = [r.offset for r in recs]
    assert offsets == sorted(set(offsets))
    by_offset = {r.offset: r.value for r in before}
    assert all(by_offset[r.offset] == r.value for r in recs)
    # the log is usable and cleanable afterwards
    reopened.append_as_leader(kv_batch([(b"key0", b"after")]), leader_epoch=0, now_ms=T0)
    reopened.close()
