"""One cleaning pass of one log, away from the log's owner: the offset map, the filtering and
the ``.cleaned`` files (storage/cleaner.py selects the log before and installs the result after,
on the log's owner thread).

The pass runs in the broker's cleaner process (server/log_manager/cleaner_process.py: a CleanJob and
the segments' descriptors go there, a CleanResult comes back) or, in tests and tools, in a worker
thread of the caller. It reads segments only through duplicated descriptors of closed segments,
writes only ``<base>.log.cleaned`` (and its indexes) in the partition's directory, and keeps its
reads and writes under ``log.cleaner.io.max.bytes.per.second`` (storage/io_throttle.py).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CorruptRecordError,
    parse_batch_header,
)
from kafkapy.storage.cleaner_filter import filter_batch, scan_batch
from kafkapy.storage.cleaner_txn import CleanedTxnState
from kafkapy.storage.config import LogConfig
from kafkapy.storage.index import OffsetIndex, TimeIndex
from kafkapy.storage.io_throttle import CHECK_INTERVAL_S, Throttler
from kafkapy.storage.segment import CLEANED_SUFFIX, segment_name
from kafkapy.storage.txn_index import AbortedTxn, TransactionIndex

HASH_SIZE = 16
BYTES_PER_ENTRY = HASH_SIZE + 8
LOAD_FACTOR = 0.9
INT32_MAX = 2**31 - 1
_FILES = (".log", ".index", ".timeindex")

TopicPartition = tuple[str, int]


class OffsetMap:
    """Key -> latest offset, with Kafka's SkimpyOffsetMap capacity for a memory size. As in
    Kafka a key is held as its MD5 hash (16 bytes), except that a key of at most 16 bytes is
    held as itself (no longer, and no hashing); hashes are 17 bytes (a zero byte and the
    digest), so a key and another key's hash can never be equal."""

    def __init__(self, memory: int) -> None:
        self.slots = max(1, int(memory * LOAD_FACTOR) // BYTES_PER_ENTRY)
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self._map)

    @staticmethod
    def _hash(key: bytes) -> bytes:
        if len(key) <= HASH_SIZE:
            return key
        return b"\x00" + hashlib.md5(key, usedforsecurity=False).digest()

    @property
    def entries(self) -> dict[bytes, int]:
        """The map itself, keyed by ``slot_key`` (for loops over many records)."""
        return self._map

    slot_key = _hash

    def put(self, key: bytes, offset: int) -> None:
        self._map[key if len(key) <= HASH_SIZE else self._hash(key)] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        return self._map.get(key if len(key) <= HASH_SIZE else self._hash(key), -1)

    def room(self) -> int:
        return self.slots - len(self._map)


@dataclass
class CleanStats:
    topic: str
    partition: int
    first_dirty: int
    end_offset: int
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_kept: int = 0
    tombstones_removed: int = 0
    segments_cleaned: int = 0
    elapsed_s: float = 0.0


@dataclass
class _Group:
    segments: list[Any]  # LogSegment (owner side) or SegmentRef (cleaner process)
    base: int
    paths: dict[str, Path] = field(default_factory=dict)  # ".log" -> X.log.cleaned, ...


@dataclass
class CleanTask:
    """A snapshot of one log taken on the owner thread, cleanable anywhere: in a worker thread
    as it is, in the cleaner process as a CleanJob."""

    tp: TopicPartition
    log: Any  # the PartitionLog on its owner's side; None in the cleaner process
    log_dir: Path
    directory: Path  # the partition's directory, where the ``.cleaned`` files go
    config: LogConfig
    first_dirty: int
    first_uncleanable: int
    segments: list[Any]  # every segment below first_uncleanable (base_offset, size)
    fds: list[int]  # duplicated descriptors of ``segments``, same order
    uppers: list[int]  # base offset of the segment after each of ``segments``
    # producer id -> (last offset of its last data batch or -1, epoch): Kafka's LastRecord
    active_producers: dict[int, tuple[int, int]]
    now_ms: int
    aborted: list[AbortedTxn] = field(default_factory=list)  # overlapping the cleanable range
    txns: CleanedTxnState | None = None  # the filter pass's walk, across groups
    groups: list[_Group] = field(default_factory=list)
    stats: CleanStats | None = None
    min_delete_horizon: int | None = None
    throttle: Throttler | None = None  # log.cleaner.io.max.bytes.per.second


def _iter_file_batches(fd: int, size: int):
    """(position, header, bytes) of every batch of a segment file, via pread."""
    pos = 0
    while pos + BATCH_HEADER_SIZE <= size:
        head = os.pread(fd, BATCH_HEADER_SIZE, pos)
        h = parse_batch_header(head)
        data = head if h.size == BATCH_HEADER_SIZE else os.pread(fd, h.size, pos)
        if len(data) < h.size:
            return
        yield pos, h, data
        pos += h.size


def _write_txn_index(path: Path, base: int, entries: list[AbortedTxn]) -> None:
    """The cleaned segment's aborted transactions, in marker order."""
    index = TransactionIndex(path, base)
    try:
        for txn in entries:
            index.append(txn)
        index.flush()
    finally:
        index.close()


def prepare_task(task: CleanTask, dedupe_buffer_size: int) -> CleanTask:
    """Build the offset map and write the cleaned groups as ``.cleaned`` files."""
    t0 = time.monotonic()
    stats = CleanStats(task.tp[0], task.tp[1], task.first_dirty, task.first_dirty)
    task.stats = stats
    omap = OffsetMap(dedupe_buffer_size)
    end = _build_offset_map(task, omap)
    stats.end_offset = end
    segs = []
    for i, seg in enumerate(task.segments):
        if seg.base_offset < end:
            segs.append((seg, task.fds[i]))
    task.txns = CleanedTxnState.of(task.aborted)
    for group in _group_segments(task, segs):
        _clean_group(task, group, omap)
    stats.elapsed_s = time.monotonic() - t0
    return task


def _build_offset_map(task: CleanTask, omap: OffsetMap) -> int:
    """Map the dirty range's keys; returns the offset where the map stops (exclusive)."""
    end = task.first_dirty
    throttle = task.throttle
    txns = CleanedTxnState.of([t for t in task.aborted if t.last_offset >= task.first_dirty])
    for seg, fd in zip(task.segments, task.fds, strict=True):
        for _, h, data in _iter_file_batches(fd, seg.size):
            if throttle is not None:
                throttle.maybe_throttle(h.size)
            if h.last_offset < task.first_dirty:
                continue
            if h.base_offset >= task.first_uncleanable:
                omap.latest_offset = end - 1
                return end
            if h.is_control:
                txns.on_control_batch(h, data)
                end = h.next_offset
                continue
            if txns.on_batch(h) or h.records_count == 0:  # aborted: keys not mapped
                end = h.next_offset
                continue
            if h.records_count > omap.room() and len(omap):
                omap.latest_offset = end - 1
                return end
            try:
                scanned = scan_batch(h, data)[2]
            except ValueError as e:
                raise CorruptRecordError(f"batch at offset {h.base_offset}: {e}") from None
            base, first = h.base_offset, task.first_dirty
            entries, slot_key = omap.entries, OffsetMap.slot_key
            for rec in scanned:
                key = rec[2]
                if key is not None and base + rec[0] >= first:
                    entries[key if len(key) <= HASH_SIZE else slot_key(key)] = base + rec[0]
                    omap.latest_offset = base + rec[0]
            end = h.next_offset
    omap.latest_offset = end - 1
    return end


def _group_segments(task: CleanTask, segs: list[tuple[Any, int]]):
    """Consecutive segments whose sizes sum within segment.bytes and whose offsets fit a
    4-byte relative offset (Kafka's groupSegmentsBySize)."""
    max_size = task.config.segment_bytes
    i = 0
    while i < len(segs):
        group = [segs[i]]
        size = segs[i][0].size
        j = i + 1
        while j < len(segs):
            seg = segs[j][0]
            last = task.uppers[j] - 1
            if size + seg.size > max_size or last - group[0][0].base_offset > INT32_MAX:
                break
            group.append(segs[j])
            size += seg.size
            j += 1
        yield group
        i = j


def _clean_group(task: CleanTask, group: list[tuple[Any, int]], omap) -> None:
    stats = task.stats
    assert stats is not None
    base = group[0][0].base_offset
    d = task.directory
    paths = {suffix: d / (segment_name(base, suffix) + CLEANED_SUFFIX) for suffix in _FILES}
    for p in paths.values():
        p.unlink(missing_ok=True)
    cfg = task.config
    oidx = OffsetIndex(paths[".index"], base, cfg.segment_index_bytes // 8)
    tidx = TimeIndex(paths[".timeindex"], base, cfg.segment_index_bytes // 12)
    oidx.path.touch()
    tidx.path.touch()
    txns = task.txns
    assert txns is not None
    txns.retained = []
    throttle = task.throttle
    fd = os.open(paths[".log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        pos = 0
        since_index = 0
        max_ts, max_ts_offset = -1, base
        for seg, sfd in group:
            for _, h, data in _iter_file_batches(sfd, seg.size):
                stats.bytes_read += h.size
                out = filter_batch(task, h, data, omap)
                if throttle is not None:
                    throttle.maybe_throttle(h.size + (len(out) if out is not None else 0))
                if out is None:
                    continue
                oh = parse_batch_header(out)
                os.write(fd, out)
                if oh.max_timestamp > max_ts:
                    max_ts, max_ts_offset = oh.max_timestamp, oh.last_offset
                if since_index > task.config.index_interval_bytes:
                    oidx.append(oh.last_offset, pos)
                    tidx.maybe_append(max_ts, max_ts_offset)
                    since_index = 0
                since_index += len(out)
                pos += len(out)
                stats.bytes_written += len(out)
        tidx.maybe_append(max_ts, max_ts_offset, skip_full_check=True)
        if txns.retained:
            paths[".txnindex"] = d / (segment_name(base, ".txnindex") + CLEANED_SUFFIX)
            _write_txn_index(paths[".txnindex"], base, txns.retained)
        os.fsync(fd)
        oidx.flush()
        tidx.flush()
    finally:
        os.close(fd)
        oidx.close()
        tidx.close()
    stats.segments_cleaned += len(group)
    task.groups.append(_Group([s for s, _ in group], base, paths))



# ---- the pass in another process ----------------------------------------------------------------


@dataclass(frozen=True)
class SegmentRef:
    """A segment as the cleaner process knows it (its descriptor travels separately)."""

    base_offset: int
    size: int


@dataclass
class CleanJob:
    """What the cleaner process needs of a CleanTask (picklable; the segments' descriptors are
    passed alongside, in the same order)."""

    tp: TopicPartition
    log_dir: Path
    directory: Path
    config: LogConfig
    first_dirty: int
    first_uncleanable: int
    segments: list[SegmentRef]
    uppers: list[int]
    active_producers: dict[int, tuple[int, int]]
    now_ms: int
    aborted: list[AbortedTxn]
    dedupe_buffer_size: int
    io_max_bytes_per_second: float
    io_check_interval_s: float = CHECK_INTERVAL_S


@dataclass
class CleanResult:
    """What a pass produced: the ``.cleaned`` groups (as indexes into the task's segments)."""

    groups: list[tuple[list[int], int, dict[str, Path]]]
    stats: CleanStats
    min_delete_horizon: int | None
    throttled_s: float = 0.0


def job_of(
    task: CleanTask,
    dedupe_buffer_size: int,
    io_max_bytes_per_second: float,
    io_check_interval_s: float = CHECK_INTERVAL_S,
) -> CleanJob:
    return CleanJob(
        tp=task.tp,
        log_dir=task.log_dir,
        directory=task.directory,
        config=task.config,
        first_dirty=task.first_dirty,
        first_uncleanable=task.first_uncleanable,
        segments=[SegmentRef(s.base_offset, s.size) for s in task.segments],
        uppers=list(task.uppers),
        active_producers=dict(task.active_producers),
        now_ms=task.now_ms,
        aborted=list(task.aborted),
        dedupe_buffer_size=dedupe_buffer_size,
        io_max_bytes_per_second=io_max_bytes_per_second,
        io_check_interval_s=io_check_interval_s,
    )


def run_job(job: CleanJob, fds: list[int]) -> CleanResult:
    """The pass of a job (in the cleaner process), over ``fds``."""
    task = CleanTask(
        tp=job.tp,
        log=None,
        log_dir=job.log_dir,
        directory=job.directory,
        config=job.config,
        first_dirty=job.first_dirty,
        first_uncleanable=job.first_uncleanable,
        segments=list(job.segments),
        fds=fds,
        uppers=job.uppers,
        active_producers=job.active_producers,
        now_ms=job.now_ms,
        aborted=job.aborted,
        throttle=Throttler(job.io_max_bytes_per_second, check_interval_s=job.io_check_interval_s),
    )
    prepare_task(task, job.dedupe_buffer_size)
    index = {id(seg): i for i, seg in enumerate(task.segments)}
    assert task.stats is not None
    return CleanResult(
        [([index[id(seg)] for seg in g.segments], g.base, g.paths) for g in task.groups],
        task.stats,
        task.min_delete_horizon,
        task.throttle.slept_s if task.throttle is not None else 0.0,
    )


def apply_result(task: CleanTask, result: CleanResult) -> None:
    """The cleaner process's result, on the owner's task (before LogCleaner.commit)."""
    task.stats = result.stats
    task.min_delete_horizon = result.min_delete_horizon
    task.groups = [_Group([task.segments[i] for i in idxs], base, dict(paths))
                   for idxs, base, paths in result.groups]
