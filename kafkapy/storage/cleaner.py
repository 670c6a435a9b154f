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

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kafkapy import clock
from kafkapy.storage.checkpoints import read_offset_checkpoint, write_offset_checkpoint
from kafkapy.storage.cleaner_pass import (  # noqa: F401  (OffsetMap: also imported from here)
    CleanStats,
    CleanTask,
    OffsetMap,
    _Group,
    prepare_task,
)
from kafkapy.storage.io_throttle import Throttler
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    SWAP_SUFFIX,
    LogSegment,
    segment_name,
)

if TYPE_CHECKING:
    from kafkapy.storage.log_manager import LogManager

log = logging.getLogger("kafkapy.cleaner")

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
DEFAULT_DEDUPE_BUFFER_SIZE = 134217728
UNLIMITED_IO = 1.7976931348623157e308  # log.cleaner.io.max.bytes.per.second: Double.MaxValue
LONG_MAX = 2**63 - 1

TopicPartition = tuple[str, int]


class CleanerAborted(Exception):
    """The log changed under the cleaner (deleted, truncated, segments removed)."""


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


class LogCleaner:
    """One cleaner for every log of a LogManager."""

    def __init__(
        self,
        manager: LogManager,
        *,
        dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE,
        io_max_bytes_per_second: float = UNLIMITED_IO,
        crash_hook: Callable[[str], None] | None = None,
    ) -> None:
        self.manager = manager
        self.dedupe_buffer_size = dedupe_buffer_size
        self.io_max_bytes_per_second = io_max_bytes_per_second
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
            directory=plog.directory,
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
        """Build the offset map and write the cleaned groups as ``.cleaned`` files (any
        thread; storage/cleaner_pass.py)."""
        task.throttle = Throttler(self.io_max_bytes_per_second)
        return prepare_task(task, self.dedupe_buffer_size)

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
        now = clock.now_ms()
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
        now = clock.now_ms() if now_ms is None else now_ms
        return self._run_one(now)[1]

    def clean_all(self, now_ms: int | None = None, max_passes: int = 100) -> list[CleanStats]:
        """Clean until no log is cleanable; failed logs become uncleanable and are skipped."""
        now = clock.now_ms() if now_ms is None else now_ms
        out = []
        for _ in range(max_passes):
            ran, stats = self._run_one(now)
            if not ran:
                break
            if stats is not None:
                out.append(stats)
        return out
