"""The log cleaner: compaction of ``cleanup.policy=compact`` logs (Kafka's LogCleaner, reduced to
one cleaner; synchronous, no trio).

A log is cut in three: the *clean* part (already compacted, up to the offset recorded in the
log dir's ``cleaner-offset-checkpoint``), the *dirty* part (from there up to the first
uncleanable offset: the active segment, or the first segment younger than
``min.compaction.lag.ms``), and the rest. A log is chosen when its dirty ratio
(dirty bytes / (clean + dirty bytes)) exceeds ``min.cleanable.dirty.ratio``, when a dirty
record is older than ``max.compaction.lag.ms``, or when a tombstone's delete horizon has passed;
the dirtiest log goes first.

Cleaning one log:

1. *Offset map*: the dirty records' keys (MD5, 16 bytes, unless shorter) -> latest offset.
   Records are scanned (protocol/record_scan.py), not decoded. Its capacity is what
   ``log.cleaner.dedupe.buffer.size`` holds at Kafka's 24 bytes an entry and load factor 0.9; a
   full map ends the pass early (the rest is cleaned next time).
2. *Filter* (storage/cleaner_filter.py) every segment from the log start up to the map's end,
   in groups that fit one segment: a record stays if it is the latest for its key (or past the
   map's end). Offsets are never changed (gaps), each batch keeps its producer id, epoch, base
   sequence and last offset delta, compressed batches are decompressed, filtered and
   recompressed with their codec.
   Records without a key are dropped. A tombstone (null value) is kept and its batch stamped with
   a delete horizon (now + ``delete.retention.ms``, KIP-534); once the horizon has passed the
   tombstone goes. A batch left without records disappears, except the last batch of a producer
   still known to the log, which is kept empty so its sequence numbers survive (a producer whose
   last entry is a marker keeps that marker, for its epoch).
   Transactions (storage/cleaner_txn.py): cleaning stops at the last stable offset; records of
   aborted transactions go whatever their keys (and never enter the offset map); markers stay
   while data of their transaction does, then get a delete horizon like tombstones and go after
   it; the cleaned segment's ``.txnindex`` keeps the aborted transactions whose marker stays.
3. *Swap*, crash-safe at every step: the group is written to ``<base>.log.cleaned`` (and its
   indexes), renamed ``.swap``, the old segments are renamed ``.deleted`` and the swap files take
   the segment names. After a crash, :meth:`PartitionLog.open` drops ``.cleaned`` files, finishes
   a ``.swap`` (it was complete) and removes ``.deleted`` files.

Heavy work (:meth:`LogCleaner.prepare`) only reads duplicated descriptors of closed segments and
writes ``.cleaned`` files, so it can run in a worker thread; :meth:`LogCleaner.select` and
:meth:`LogCleaner.commit` touch the log and run on the log's owner thread. A failure marks the
partition uncleanable; the others carry on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CorruptRecordError,
    parse_batch_header,
)
from kafkapy.storage.checkpoints import read_offset_checkpoint, write_offset_checkpoint
from kafkapy.storage.cleaner_filter import filter_batch, scan_batch
from kafkapy.storage.cleaner_txn import CleanedTxnState
from kafkapy.storage.config import LogConfig
from kafkapy.storage.index import OffsetIndex, TimeIndex
from kafkapy.storage.log import CLEANED_SUFFIX, DELETED_SUFFIX, SWAP_SUFFIX, PartitionLog
from kafkapy.storage.segment import LogSegment, segment_name
from kafkapy.storage.txn_index import AbortedTxn, TransactionIndex

if TYPE_CHECKING:
    from kafkapy.storage.log_manager import LogManager

log = logging.getLogger("kafkapy.cleaner")

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
DEFAULT_DEDUPE_BUFFER_SIZE = 134217728
HASH_SIZE = 16
BYTES_PER_ENTRY = HASH_SIZE + 8
LOAD_FACTOR = 0.9
INT32_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
_FILES = (".log", ".index", ".timeindex")

TopicPartition = tuple[str, int]


class CleanerAborted(Exception):
    """The log changed under the cleaner (deleted, truncated, segments removed)."""


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
    segments: list[LogSegment]
    base: int
    paths: dict[str, Path] = field(default_factory=dict)  # ".log" -> X.log.cleaned, ...


@dataclass
class CleanTask:
    """A snapshot of one log taken on the owner thread, cleanable from a worker thread."""

    tp: TopicPartition
    log: PartitionLog
    log_dir: Path
    config: LogConfig
    first_dirty: int
    first_uncleanable: int
    segments: list[LogSegment]  # every segment below first_uncleanable
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


@dataclass
class _Cleanable:
    first_dirty: int
    first_uncleanable: int
    clean_bytes: int
    dirty_bytes: int
    must_clean: bool

    @property
    def ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


def cleanable_offsets(log: PartitionLog, first_dirty_cp: int | None, now_ms: int) -> _Cleanable:
    """Kafka's LogCleanerManager.cleanableOffsets and dirty-byte accounting."""
    cfg = log.config
    start = log.log_start_offset
    if first_dirty_cp is None or not start <= first_dirty_cp <= log.log_end_offset:
        first_dirty = start
    else:
        first_dirty = first_dirty_cp
    segs = log.segments
    # never past the last stable offset: every transaction the cleaner meets is decided
    uncleanable = min(log.active_segment.base_offset, log.last_stable_offset)
    closed = segs[:-1]
    must = False
    for i, seg in enumerate(closed):
        upper = segs[i + 1].base_offset
        if upper <= first_dirty or seg.base_offset >= uncleanable:
            continue
        if cfg.min_compaction_lag_ms > 0 and seg.largest_timestamp() > now_ms - (
            cfg.min_compaction_lag_ms
        ):
            uncleanable = seg.base_offset
            break
        fts = seg.first_batch_timestamp
        if cfg.max_compaction_lag_ms < LONG_MAX and fts is not None and fts > 0:
            if now_ms - fts > cfg.max_compaction_lag_ms:
                must = True
    uncleanable = max(uncleanable, first_dirty)
    clean = dirty = 0
    for i, seg in enumerate(segs):
        upper = segs[i + 1].base_offset if i + 1 < len(segs) else log.log_end_offset
        if seg.base_offset >= uncleanable:
            break
        if upper <= first_dirty:
            clean += seg.size
        else:
            dirty += seg.size
    return _Cleanable(first_dirty, uncleanable, clean, dirty, must and dirty > 0)


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


class LogCleaner:
    """One cleaner for every log of a LogManager."""

    def __init__(
        self,
        manager: LogManager,
        *,
        dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE,
        crash_hook: Callable[[str], None] | None = None,
    ) -> None:
        self.manager = manager
        self.dedupe_buffer_size = dedupe_buffer_size
        self.uncleanable: dict[TopicPartition, str] = {}
        self.delete_horizons: dict[TopicPartition, int] = {}
        self.crash_hook = crash_hook
        self.history: list[CleanStats] = []
        self._checkpoints: dict[Path, dict[TopicPartition, int]] = {}

    # ---- checkpoints ---------------------------------------------------------------------

    def _cp(self, log_dir: Path) -> dict[TopicPartition, int]:
        cp = self._checkpoints.get(log_dir)
        if cp is None:
            try:
                cp = read_offset_checkpoint(log_dir / CLEANER_OFFSET_CHECKPOINT)
            except (OSError, ValueError) as e:
                log.warning("unreadable cleaner checkpoint dir=%s error=%s", log_dir, e)
                cp = {}
            self._checkpoints[log_dir] = cp
        return cp

    def first_dirty_offset(self, tp: TopicPartition) -> int | None:
        d = self.manager._dir_of.get(tp)
        return None if d is None else self._cp(d).get(tp)

    def _write_checkpoint(self, log_dir: Path) -> None:
        cp = self._cp(log_dir)
        live = {tp for tp, d in self.manager._dir_of.items() if d == log_dir}
        for tp in [tp for tp in cp if tp not in live]:
            del cp[tp]
        write_offset_checkpoint(log_dir / CLEANER_OFFSET_CHECKPOINT, cp)

    # ---- choosing a log (owner thread) ---------------------------------------------------

    def select(self, now_ms: int) -> CleanTask | None:
        """The dirtiest cleanable log as a task (segments snapshotted), or None."""
        best: tuple[float, TopicPartition, PartitionLog, _Cleanable] | None = None
        horizon_due: tuple[TopicPartition, PartitionLog, _Cleanable] | None = None
        for tp, plog in list(self.manager.logs.items()):
            if not plog.config.compact or tp in self.uncleanable or plog.cleaning or plog.offline:
                continue
            c = cleanable_offsets(plog, self.first_dirty_offset(tp), now_ms)
            ratio = c.ratio
            if (c.must_clean and c.dirty_bytes > 0) or (
                c.dirty_bytes > 0 and ratio > plog.config.min_cleanable_dirty_ratio
            ):
                score = 2.0 if c.must_clean else ratio
                if best is None or score > best[0]:
                    best = (score, tp, plog, c)
            elif horizon_due is None:
                due = self.delete_horizons.get(tp)
                if due is not None and due <= now_ms:
                    horizon_due = (tp, plog, c)
        if best is not None:
            _, tp, plog, c = best
        elif horizon_due is not None:
            tp, plog, c = horizon_due
            self.delete_horizons.pop(tp, None)
        else:
            return None
        segs = [s for s in plog.segments[:-1] if s.base_offset < c.first_uncleanable]
        if not segs:
            return None
        producers = {
            pid: (e.last_data_offset, e.epoch) for pid, e in plog.producer_state.producers.items()
        }
        aborted = plog.collect_aborted_txns(segs[0].base_offset, c.first_uncleanable)
        plog.cleaning = True
        return CleanTask(
            tp=tp,
            log=plog,
            log_dir=self.manager._dir_of[tp],
            config=plog.config,
            first_dirty=c.first_dirty,
            first_uncleanable=c.first_uncleanable,
            segments=segs,
            fds=[os.dup(s.fd) for s in segs],
            uppers=[plog.segments[i + 1].base_offset for i in range(len(segs))],
            active_producers=producers,
            now_ms=now_ms,
            aborted=aborted,
        )

    # ---- cleaning (any thread) -----------------------------------------------------------

    def prepare(self, task: CleanTask) -> CleanTask:
        """Build the offset map and write the cleaned groups as ``.cleaned`` files."""
        t0 = time.monotonic()
        stats = CleanStats(task.tp[0], task.tp[1], task.first_dirty, task.first_dirty)
        task.stats = stats
        omap = OffsetMap(self.dedupe_buffer_size)
        end = self._build_offset_map(task, omap)
        stats.end_offset = end
        segs = []
        for i, seg in enumerate(task.segments):
            if seg.base_offset < end:
                segs.append((seg, task.fds[i]))
        task.txns = CleanedTxnState.of(task.aborted)
        for group in self._group_segments(task, segs):
            self._clean_group(task, group, omap)
        stats.elapsed_s = time.monotonic() - t0
        return task

    def _build_offset_map(self, task: CleanTask, omap: OffsetMap) -> int:
        """Map the dirty range's keys; returns the offset where the map stops (exclusive)."""
        end = task.first_dirty
        txns = CleanedTxnState.of([t for t in task.aborted if t.last_offset >= task.first_dirty])
        for seg, fd in zip(task.segments, task.fds, strict=True):
            for _, h, data in _iter_file_batches(fd, seg.size):
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

    def _group_segments(self, task: CleanTask, segs: list[tuple[LogSegment, int]]):
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

    def _clean_group(self, task: CleanTask, group: list[tuple[LogSegment, int]], omap) -> None:
        stats = task.stats
        assert stats is not None
        base = group[0][0].base_offset
        d = task.log.directory
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
        fd = os.open(paths[".log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            pos = 0
            since_index = 0
            max_ts, max_ts_offset = -1, base
            for seg, sfd in group:
                for _, h, data in _iter_file_batches(sfd, seg.size):
                    stats.bytes_read += h.size
                    out = filter_batch(task, h, data, omap)
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

    # ---- installing (owner thread) -------------------------------------------------------

    def _hook(self, step: str) -> None:
        if self.crash_hook is not None:
            self.crash_hook(step)

    def commit(self, task: CleanTask) -> CleanStats:
        """Swap the cleaned groups into the log and advance the cleaner checkpoint."""
        plog = task.log
        try:
            if self.manager.logs.get(task.tp) is not plog:
                raise CleanerAborted(f"{task.tp} was deleted while being cleaned")
            for group in task.groups:
                self._swap_group(task, group)
        except Exception:
            self.release(task)
            raise
        self.release(task)
        stats = task.stats
        assert stats is not None
        cp = self._cp(task.log_dir)
        cp[task.tp] = max(stats.end_offset, plog.log_start_offset)
        self._write_checkpoint(task.log_dir)
        if task.min_delete_horizon is not None:
            self.delete_horizons[task.tp] = task.min_delete_horizon
        self.history.append(stats)
        return stats

    def _swap_group(self, task: CleanTask, group: _Group) -> None:
        plog = task.log
        segs = plog.segments
        try:
            i = segs.index(group.segments[0])
        except ValueError:
            raise CleanerAborted(f"{task.tp}: segment {group.base} is gone") from None
        if segs[i : i + len(group.segments)] != group.segments or i + len(group.segments) >= len(
            segs
        ):
            raise CleanerAborted(f"{task.tp}: segments changed while cleaning")
        self._hook("cleaned")
        swap = {
            s: p.with_name(p.name[: -len(CLEANED_SUFFIX)] + SWAP_SUFFIX)
            for s, p in group.paths.items()
        }
        suffixes = [x for x in (".index", ".timeindex", ".txnindex") if x in group.paths]
        suffixes.append(".log")  # the .log swap last: it marks completion
        for suffix in suffixes:
            os.replace(group.paths[suffix], swap[suffix])
        group.paths = {}
        self._hook("swapped")
        renamed: list[Path] = []
        for n, seg in enumerate(group.segments):
            renamed += seg.rename_to_deleted(DELETED_SUFFIX)
            if n == 0:
                self._hook("deleting")
            else:  # a merged segment's producer snapshot goes with it (Kafka's replaceSegments)
                renamed += plog._snapshot_for_deleted_segment(seg)
        self._hook("deleted")
        for suffix in suffixes:
            final = plog.directory / segment_name(group.base, suffix)
            os.replace(swap[suffix], final)
            if suffix == ".index":
                self._hook("installing")
        self._hook("installed")
        cfg = plog.config
        new = LogSegment(
            plog.directory,
            group.base,
            index_interval_bytes=cfg.index_interval_bytes,
            segment_index_bytes=cfg.segment_index_bytes,
        )
        new.load()
        plog.segments[i : i + len(group.segments)] = [new]
        plog._bases[i : i + len(group.segments)] = [group.base]
        now = int(time.time() * 1000)
        plog.pending_deletes.append((now + cfg.file_delete_delay_ms, renamed))
        if cfg.file_delete_delay_ms <= 0:
            plog.purge_deleted_files(now)

    def release(self, task: CleanTask) -> None:
        """Close the task's descriptors, drop unused ``.cleaned`` files, unmark the log."""
        for fd in task.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        task.fds = []
        for group in task.groups:
            for p in group.paths.values():
                p.unlink(missing_ok=True)
            group.paths = {}
        task.log.cleaning = False

    # ---- one pass ------------------------------------------------------------------------

    def fail(self, task: CleanTask, error: BaseException) -> None:
        """A cleaning failed: the partition becomes uncleanable, the others carry on."""
        self.release(task)
        if self.manager.logs.get(task.tp) is not task.log:  # deleted meanwhile: not its fault
            error = CleanerAborted(f"{task.tp} was deleted while being cleaned ({error})")
        if isinstance(error, CleanerAborted):
            log.info("cleaning aborted tp=%s-%d reason=%s", task.tp[0], task.tp[1], error)
            return
        if isinstance(error, OSError):  # the disk failed, not the log: its directory goes offline
            task.log.io_failed("cleaning", error)
            return
        self.uncleanable[task.tp] = f"{type(error).__name__}: {error}"
        log.error(
            "cleaner failed, partition marked uncleanable tp=%s-%d error=%r",
            task.tp[0],
            task.tp[1],
            error,
        )

    def _run_one(self, now_ms: int) -> tuple[bool, CleanStats | None]:
        task = self.select(now_ms)
        if task is None:
            return False, None
        try:
            self.prepare(task)
            return True, self.commit(task)
        except Exception as e:
            self.fail(task, e)
            return True, None

    def clean_once(self, now_ms: int | None = None) -> CleanStats | None:
        """Select, clean and install one log synchronously (tests and tools)."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return self._run_one(now)[1]

    def clean_all(self, now_ms: int | None = None, max_passes: int = 100) -> list[CleanStats]:
        """Clean until no log is cleanable; failed logs become uncleanable and are skipped."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        out = []
        for _ in range(max_passes):
            ran, stats = self._run_one(now)
            if not ran:
                break
            if stats is not None:
                out.append(stats)
        return out
