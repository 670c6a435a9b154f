"""One partition's log (Kafka's UnifiedLog with its LocalLog): ordered segments, append as
leader and as follower, roll, flush, truncation, producer state and leader-epoch history.
Directory ``<log.dir>/<topic>-<partition>/``. PartitionLog is assembled from one module per job:

- storage/log_loader.py: opening an existing directory, recovery (Kafka's LogLoader);
- storage/log_validator.py: the checks and conversions of appended batches (LogValidator);
- storage/log_read.py: fetches and offset lookups (LocalLog.read, fetchOffsetByTimestamp);
- storage/log_retention.py: retention, DeleteRecords, deletion of segments (deleteOldSegments);
- storage/log_transactions.py: markers, last stable offset, aborted-transaction indexes,
  read_committed reads, producer snapshots;
- storage/io_guard.py: the offline state and what an I/O error does;
- storage/segment.py: one segment and its lazily loaded indexes (LogSegment).

The topic id is recorded in ``partition.metadata`` as Kafka's UnifiedLog does: a new log records
it and the file is written (tmp, fsync, rename) later — by the broker's background flusher
soon after, and before the log's first append at the latest (``flush_metadata_file``) — so that
creating many partitions does not wait for one fsync per partition, while no record is ever on
disk in a directory without its topic id.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafkapy import clock
from kafkapy.protocol.record_batch import (
    CONTROL_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    assign_offsets_in_place,
)
from kafkapy.storage.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA,
    read_partition_metadata,
    write_partition_metadata,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import InconsistentTopicIdError, KafkaStorageError
from kafkapy.storage.flush import FlushJob
from kafkapy.storage.io_guard import LogIOGuard
from kafkapy.storage.io_guard import storage_io as _storage_io
from kafkapy.storage.leader_epoch import LeaderEpochCache
from kafkapy.storage.log_loader import load_log
from kafkapy.storage.log_read import LogReads
from kafkapy.storage.log_retention import LogRetention
from kafkapy.storage.log_transactions import TransactionalLog
from kafkapy.storage.log_validator import (
    batches_to_append_as_follower,
    prepare_for_leader,
    validate_for_leader,
)
from kafkapy.storage.producer_state import ProducerStateManager
from kafkapy.storage.segment import LogSegment

ZERO_UUID = uuid.UUID(int=0)
LONG_MAX = 2**63 - 1

__all__ = ["AppendResult", "PartitionLog", "partition_dir_name"]


@dataclass
class AppendResult:
    base_offset: int  # first offset assigned (or of the original append for a duplicate)
    last_offset: int
    log_append_time_ms: int  # -1 unless LogAppendTime
    log_start_offset: int
    duplicate: bool = False


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


class PartitionLog(LogReads, LogRetention, TransactionalLog, LogIOGuard):
    """Kafka's UnifiedLog for one local replica (single-writer, synchronous).

    Every method that reads or writes files is guarded (``_storage_io``): after an I/O error the
    log's directory is offline (storage/log_dir_failure.py) and so is this log, which then
    refuses everything with KafkaStorageError. Flushes (flush.messages, flush.ms) are not done
    by appends: the caller asks ``flush_due`` and runs the fsync half of a flush wherever it
    likes (storage/flush.py).
    """

    def __init__(
        self, directory: Path, topic: str, partition: int, topic_id: uuid.UUID, config: LogConfig
    ) -> None:
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.topic_id = topic_id
        self.config = config
        self.segments: list[LogSegment] = []
        self._bases: list[int] = []
        # what fetchers see (the three offsets below, and ``offline``: storage/io_guard.py)
        # changes only with ``stamp``: a fetch session skips a partition whose stamp is the one
        # it last answered with
        self.stamp = 0
        self._log_start_offset = 0
        self._log_end_offset = 0
        self._high_watermark = 0
        self._offline = False
        self.recovery_point = 0
        self.producer_state = ProducerStateManager()
        # set once a transactional batch is seen: until then the LSO is the high watermark
        self.has_transactions = False
        self.epoch_cache = LeaderEpochCache(directory / LEADER_EPOCH_CHECKPOINT)
        self._unflushed_messages = 0
        self._last_flush_ms = clock.now_ms()
        self._truncations = 0  # a flush started before a truncation does not move the point
        # I/O errors: the LogManager's handler (takes the directory offline) and the state
        self.on_io_error: Callable[[Path, str, OSError], None] | None = None
        # renamed ``.deleted`` files and the time (ms) after which they are removed
        self.pending_deletes: list[tuple[int, list[Path]]] = []
        self.cleaning = False  # the log cleaner holds a snapshot of this log's segments
        # True: every append moves the high watermark (a lone replica). Replication turns it off
        # and advances the high watermark itself (min log end offset of the ISR).
        self.auto_high_watermark = True
        # a topic id recorded but not yet in partition.metadata (see flush_metadata_file)
        self.metadata_pending: uuid.UUID | None = None
        self._metadata_lock = threading.Lock()

    # ---- what fetchers see: every change moves ``stamp`` ------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @log_start_offset.setter
    def log_start_offset(self, value: int) -> None:
        if value != self._log_start_offset:
            self._log_start_offset = value
            self.stamp += 1

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @log_end_offset.setter
    def log_end_offset(self, value: int) -> None:
        if value != self._log_end_offset:
            self._log_end_offset = value
            self.stamp += 1

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, value: int) -> None:
        if value != self._high_watermark:
            self._high_watermark = value
            self.stamp += 1

    @_storage_io("writing the topic id of")
    def flush_metadata_file(self) -> None:
        """Write the recorded topic id to ``partition.metadata`` if it is not there yet (any
        thread: the background flusher or the first append, whichever comes first)."""
        if self.metadata_pending is None:
            return
        with self._metadata_lock:
            topic_id = self.metadata_pending
            if topic_id is not None:
                write_partition_metadata(self.directory / PARTITION_METADATA, topic_id)
                self.metadata_pending = None

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        log_dir: Path,
        topic: str,
        partition: int,
        topic_id: uuid.UUID | None,
        config: LogConfig,
        *,
        recover: bool,
        recovery_point: int = 0,
        log_start_offset: int = 0,
    ) -> PartitionLog:
        """Open (creating if needed) ``log_dir/<topic>-<partition>``. With ``recover`` every
        segment holding offsets at or after ``recovery_point`` is validated and its indexes
        rebuilt; a torn or corrupt tail is truncated."""
        directory = Path(log_dir) / partition_dir_name(topic, partition)
        try:
            directory.mkdir(parents=True)
        except FileExistsError:
            fresh = False
        else:
            fresh = True  # nothing to read, recover or clean up in a directory just made
        meta_path = directory / PARTITION_METADATA
        stored = None if fresh else read_partition_metadata(meta_path)
        if topic_id is None:
            topic_id = stored or ZERO_UUID
        elif stored is not None and stored != topic_id and stored != ZERO_UUID:
            raise InconsistentTopicIdError(
                f"{directory}: topic id {stored} on disk, {topic_id} requested"
            )
        log = cls(directory, topic, partition, topic_id, config)
        if stored != topic_id and topic_id != ZERO_UUID:
            log.metadata_pending = topic_id  # written by flush_metadata_file
        if fresh:
            log._start_empty(max(log_start_offset, 0))
        else:
            load_log(
                log,
                recover=recover,
                recovery_point=recovery_point,
                log_start_offset=log_start_offset,
            )
        return log

    def _new_segment(
        self, base_offset: int, *, create: bool, now_ms: int | None = None
    ) -> LogSegment:
        return LogSegment(
            self.directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            segment_index_bytes=self.config.segment_index_bytes,
            create=create,
            now_ms=now_ms,
        )

    def _start_empty(self, offset: int) -> None:
        """A log in a directory just created: one empty segment starting at ``offset``."""
        self.segments, self._bases = [self._new_segment(offset, create=True)], [offset]
        self.log_start_offset = self.log_end_offset = offset
        self.high_watermark = self.recovery_point = offset
        self.take_producer_snapshot(sync=False)  # as load_log (only ever writes one above 0)

    # ---- appending -----------------------------------------------------------------------

    @property
    def active_segment(self) -> LogSegment:
        return self.segments[-1]

    @_storage_io("appending records to")
    def append_as_leader(
        self,
        records: bytes | bytearray | memoryview,
        *,
        leader_epoch: int,
        now_ms: int,
        verification_guard: object | None = None,
        coordinator: bool = False,
    ) -> AppendResult:
        """Validate, deduplicate, stamp offsets/epoch (and LogAppendTime), append.

        A bytearray or writable memoryview (Produce passes a slice of the received request) is
        stamped and appended in place, without a copy; anything else is copied once.
        ``verification_guard``: for a producer's first transactional batch here, the guard of
        its KIP-890 verification (producer_state.start_verification) or SKIP_VERIFICATION.
        ``coordinator``: written by a coordinator for a producer (no sequence checks)."""
        if self.metadata_pending is not None:
            self.flush_metadata_file()
        cfg = self.config
        headers = validate_for_leader(records, cfg, now_ms, f"{self.topic}-{self.partition}")
        dup = self.producer_state.check(headers, verification_guard, coordinator)
        if dup is not None:
            return AppendResult(
                dup.first_offset, dup.last_offset, -1, self.log_start_offset, duplicate=True
            )
        buf, headers = prepare_for_leader(records, headers, cfg)
        append_time = now_ms if cfg.log_append_time else None
        first = self.log_end_offset
        next_offset = assign_offsets_in_place(buf, headers, first, leader_epoch, append_time)
        return self._append(buf, headers, first, next_offset, leader_epoch, append_time, now_ms)

    @_storage_io("appending fetched records to")
    def append_as_follower(self, records: bytes | bytearray | memoryview, *, now_ms: int) -> int:
        """Append batches fetched from the leader as they are: offsets, leader epochs and
        timestamps kept. Batches ending at or below the log end offset are skipped; a gap before
        the first new batch is refused. Returns the number of bytes appended."""
        if self.metadata_pending is not None:
            self.flush_metadata_file()
        view = memoryview(records)
        start, kept = batches_to_append_as_follower(view, self.log_end_offset)
        if not kept:
            return 0
        appended = 0
        # one _append per run of batches with the same leader epoch, so the cache stays exact;
        # each run is written from the caller's buffer (no copy)
        i = 0
        while i < len(kept):
            j = i
            epoch = kept[i].partition_leader_epoch
            size = 0
            while j < len(kept) and kept[j].partition_leader_epoch == epoch:
                size += kept[j].size
                j += 1
            run = kept[i:j]
            chunk = view[start + appended : start + appended + size]
            if epoch >= 0 and epoch > self.epoch_cache.latest_epoch():
                self.epoch_cache.assign(epoch, run[0].base_offset)
            self._append(chunk, run, run[0].base_offset, run[-1].next_offset, -1, None, now_ms)
            appended += size
            i = j
        return appended

    def update_config(self, config: LogConfig) -> None:
        """Apply a changed topic/broker config to the open log (takes effect at once)."""
        self.config = config
        for seg in self.segments:
            seg.index_interval_bytes = config.index_interval_bytes

    def _append(
        self,
        buf: bytearray | memoryview,
        headers: list[BatchHeader],
        first: int,
        next_offset: int,
        leader_epoch: int,
        append_time: int | None,
        now_ms: int,
    ) -> AppendResult:
        batches = []
        offset = first
        max_ts = -1
        records = 0
        for h in headers:
            ts = h.max_timestamp if append_time is None else append_time
            max_ts = max(max_ts, ts)
            batches.append((offset + h.last_offset_delta, ts, h.size))
            offset += h.last_offset_delta + 1
            records += h.records_count
        seg = self._maybe_roll(len(buf), next_offset - 1, max_ts, now_ms)
        seg.append(buf, batches)
        offset = first
        state = self.producer_state
        pos = 0
        for h in headers:
            if h.producer_id >= 0:
                if h.attributes & (CONTROL_BIT | TRANSACTIONAL_BIT):
                    self._apply_transactional_batch(seg, h, offset, buf, pos)
                else:
                    state.update(h, offset)
            offset += h.last_offset_delta + 1
            pos += h.size
        if leader_epoch >= 0 and leader_epoch != self.epoch_cache.latest_epoch():
            self.epoch_cache.assign(leader_epoch, first)
        self.log_end_offset = next_offset
        if self.auto_high_watermark:
            self.high_watermark = next_offset
        self._unflushed_messages += records
        return AppendResult(
            first,
            next_offset - 1,
            -1 if append_time is None else append_time,
            self.log_start_offset,
        )

    def _maybe_roll(self, size: int, last_offset: int, max_ts: int, now_ms: int) -> LogSegment:
        seg = self.active_segment
        if seg.size == 0:
            return seg
        if seg.first_batch_timestamp is not None and seg.first_batch_timestamp >= 0:
            waited = max_ts - seg.first_batch_timestamp
        else:
            waited = now_ms - seg.created_ms
        if (
            seg.size > self.config.segment_bytes - size
            or waited > self.config.segment_ms
            or not seg.can_hold(last_offset)
        ):
            return self.roll(now_ms)
        return seg

    @_storage_io("rolling a segment of")
    def roll(self, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset."""
        old = self.active_segment
        if old.size == 0:
            return old
        old.on_become_inactive()
        self.take_producer_snapshot(sync=False)
        seg = self._new_segment(self.log_end_offset, create=True, now_ms=now_ms)
        self.segments.append(seg)
        self._bases.append(seg.base_offset)
        return seg

    # ---- flushing -------------------------------------------------------------------------

    def flush_due(self, now_ms: int) -> bool:
        """Whether flush.messages or flush.ms asks for a flush now."""
        if self.offline or self.log_end_offset <= self.recovery_point:
            return False
        if self._unflushed_messages >= self.config.flush_interval_messages:
            return True
        ms = self.config.flush_interval_ms
        return ms is not None and now_ms - self._last_flush_ms >= ms

    def start_flush(self, now_ms: int | None = None) -> FlushJob | None:
        """The files a flush up to the log end must fsync (None: nothing to flush); run the job
        anywhere, then ``finish_flush`` it here (or ``flush_failed``)."""
        if self.offline:
            raise self.offline_error()
        self._unflushed_messages = 0
        self._last_flush_ms = clock.now_ms() if now_ms is None else now_ms
        if self.log_end_offset <= self.recovery_point:
            return None
        job = FlushJob(self.log_end_offset, self._truncations)
        try:
            for seg in self.segments[self._segment_at(self.recovery_point) :]:
                job.files += seg.files_to_sync()
        except OSError as e:
            job.close()
            raise self.io_failed("flushing", e) from e
        return job

    def finish_flush(self, job: FlushJob) -> None:
        if job.generation == self._truncations:
            self.recovery_point = max(self.recovery_point, min(job.target, self.log_end_offset))

    def flush_failed(self, error: OSError) -> KafkaStorageError:
        return self.io_failed("flushing", error)

    # ---- truncation and closing ----------------------------------------------------------

    @_storage_io("truncating")
    def truncate_to(self, offset: int) -> None:
        """Drop everything at or after ``offset`` (follower truncation). Below the first
        segment the log restarts empty there (Kafka's truncateTo)."""
        if offset >= self.log_end_offset:
            # an epoch entry may start at the log end with nothing written under it (a leader
            # that appended nothing before losing leadership): drop it, as Kafka does
            self.epoch_cache.truncate_from_end(self.log_end_offset)
            return
        if offset < self.segments[0].base_offset:
            self.truncate_fully_and_start_at(offset)
            return
        self.log_start_offset = min(self.log_start_offset, offset)
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            self.segments.pop().delete()
            self._bases.pop()
        self._truncations += 1
        self.active_segment.truncate_to(offset)
        self.log_end_offset = self.active_segment.next_offset
        self.high_watermark = min(self.high_watermark, self.log_end_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self.epoch_cache.truncate_from_end(self.log_end_offset)
        self._load_producer_state()

    @_storage_io("truncating")
    def truncate_fully_and_start_at(self, offset: int, now_ms: int | None = None) -> None:
        """Kafka's truncateFullyAndStartAt: every segment goes (renamed ``.deleted``, removed
        after file.delete.delay.ms) and the log restarts empty at ``offset``, which becomes its
        log start, log end and high watermark. A follower does this when the leader's log start
        offset passed its log end offset."""
        now = clock.now_ms() if now_ms is None else now_ms
        self._truncations += 1
        victims, self.segments, self._bases = self.segments, [], []
        self._schedule_deletion(victims, now)
        seg = self._new_segment(offset, create=True, now_ms=now)
        self.segments, self._bases = [seg], [offset]
        self.log_start_offset = self.log_end_offset = offset
        self.high_watermark = self.recovery_point = offset
        self.epoch_cache.truncate_from_end(-1)  # every entry goes
        self.producer_state.clear()
        self._delete_all_snapshots()
        self._unflushed_messages = 0

    @_storage_io("flushing")
    def flush(self) -> None:
        """fsync every segment holding offsets past the recovery point (here, blocking)."""
        job = self.start_flush()
        if job is not None:
            job.run()
            self.finish_flush(job)

    def abandon_metadata_file(self) -> None:
        """The log is being deleted: its partition.metadata need not be written any more."""
        with self._metadata_lock:
            self.metadata_pending = None

    def close(self) -> None:
        self.stamp += 1  # a closed log is no fetcher's any more
        if self.metadata_pending is not None and not self.offline:
            with contextlib.suppress(KafkaStorageError):  # the directory went offline
                self.flush_metadata_file()
        if self.segments:
            self.active_segment.on_become_inactive()
            # not fsynced: an unreadable snapshot is dropped at open and the batches replayed
            self.take_producer_snapshot(sync=False)
        for seg in self.segments:
            seg.close()

    def delete(self) -> None:
        for seg in self.segments:
            seg.delete()
        self.segments = []
        self.purge_deleted_files(LONG_MAX)
