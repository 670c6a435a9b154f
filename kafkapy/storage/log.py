"""One partition's log: ordered segments, append as leader, reads, offset lookups, recovery,
producer state and leader-epoch history. Directory ``<log.dir>/<topic>-<partition>/``.
Transactions (markers, last stable offset, aborted-transaction indexes, producer snapshots)
are in storage/log_transactions.py.

The topic id is recorded in ``partition.metadata`` as Kafka's UnifiedLog does: a new log records
it and the file is written (tmp, fsync, rename) later — by the broker's background flusher
soon after, and before the log's first append at the latest (``flush_metadata_file``) — so that
creating many partitions does not wait for one fsync per partition, while no record is ever on
disk in a directory without its topic id.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafkapy.protocol.record_batch import (
    CONTROL_BIT,
    CRC_START,
    TRANSACTIONAL_BIT,
    BatchHeader,
    CorruptRecordError,
    RecordBatchError,
    RecordTooLargeError,
    assign_offsets_in_place,
    crc32c,
    decode_records,
    encode_batch,
    iter_batches,
    parse_batch_header,
    validate_batches,
)
from kafkapy.storage.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA,
    read_partition_metadata,
    write_partition_metadata,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import (
    InconsistentTopicIdError,
    KafkaStorageError,
    OffsetOutOfRangeError,
)
from kafkapy.storage.file_region import FileRegion
from kafkapy.storage.flush import FlushJob
from kafkapy.storage.index import CorruptIndexError
from kafkapy.storage.io_guard import storage_io as _storage_io
from kafkapy.storage.leader_epoch import LeaderEpochCache
from kafkapy.storage.log_transactions import TransactionalLog
from kafkapy.storage.producer_state import ProducerStateManager
from kafkapy.storage.segment import LogSegment, segment_name

ZERO_UUID = uuid.UUID(int=0)
LONG_MAX = 2**63 - 1
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"


class InvalidTimestampError(RecordBatchError):
    """INVALID_TIMESTAMP: a CreateTime timestamp outside message.timestamp.before/after.max.ms."""

    error_code = 32


__all__ = [
    "AppendResult",
    "FetchData",
    "LogConfig",
    "PartitionLog",
    "partition_dir_name",
]


@dataclass
class AppendResult:
    base_offset: int  # first offset assigned (or of the original append for a duplicate)
    last_offset: int
    log_append_time_ms: int  # -1 unless LogAppendTime
    log_start_offset: int
    duplicate: bool = False


@dataclass
class FetchData:
    regions: list[FileRegion]  # consecutive whole batches, in order
    size: int  # sum of lengths


EMPTY_FETCH_SIZE = 0


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def _scan_next_offset(data: bytes, base: int) -> int:
    """Offset after the last whole batch of ``data`` (``base`` if none)."""
    next_offset = base
    try:
        for _, h in iter_batches(data):
            next_offset = h.next_offset
    except CorruptRecordError:
        pass
    return next_offset


def _writable(records: bytes | bytearray | memoryview) -> bool:
    return isinstance(records, bytearray) or (
        isinstance(records, memoryview) and not records.readonly
    )


def _segment_bases(directory: Path) -> list[int]:
    bases = []
    for p in directory.glob("*.log"):
        stem = p.stem
        if len(stem) == 20 and stem.isdigit():
            bases.append(int(stem))
    return sorted(bases)


class PartitionLog(TransactionalLog):
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
        # what fetchers see (the four offsets/flags below) changes only with ``stamp``: a fetch
        # session skips a partition whose stamp is the one it last answered with
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
        self._last_flush_ms = int(time.time() * 1000)
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

    @property
    def offline(self) -> bool:
        return self._offline

    @offline.setter
    def offline(self, value: bool) -> None:
        if value != self._offline:
            self._offline = value
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
            log._load(recover, recovery_point, log_start_offset)
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

    def _finish_interrupted_operations(self) -> None:
        """Complete or roll back what a crash interrupted (Kafka's LogLoader rules):
        ``.deleted`` files are removed, ``.cleaned`` files (an unfinished cleaning) are dropped,
        a ``.log.swap`` (a cleaned segment written completely) replaces the segments whose
        offsets it covers and becomes a segment; its indexes are rebuilt (the ``.txnindex`` by
        the producer-state replay, as for any recovered segment)."""
        d = self.directory
        for stray in d.glob("*" + DELETED_SUFFIX):
            stray.unlink(missing_ok=True)
        for stray in d.glob("*" + CLEANED_SUFFIX):
            stray.unlink(missing_ok=True)
        for x in (".index", ".timeindex", ".txnindex"):
            for stray in d.glob(f"*{x}.swap"):
                stray.unlink(missing_ok=True)
        for swap in sorted(d.glob("*.log" + SWAP_SUFFIX)):
            stem = swap.name[:20]
            if not stem.isdigit():
                swap.unlink()
                continue
            base = int(stem)
            next_offset = _scan_next_offset(swap.read_bytes(), base)
            for other in _segment_bases(d):
                if other == base or base <= other < next_offset:
                    for suffix in (".log", ".index", ".timeindex", ".txnindex"):
                        (d / segment_name(other, suffix)).unlink(missing_ok=True)
            for suffix in (".index", ".timeindex", ".txnindex"):
                (d / segment_name(base, suffix)).unlink(missing_ok=True)
            os.replace(swap, d / segment_name(base, ".log"))

    def _start_empty(self, offset: int) -> None:
        """A log in a directory just created: one empty segment starting at ``offset``."""
        self.segments, self._bases = [self._new_segment(offset, create=True)], [offset]
        self.log_start_offset = self.log_end_offset = offset
        self.high_watermark = self.recovery_point = offset
        self.take_producer_snapshot(sync=False)  # as _load (only ever writes one above 0)

    def _load(self, recover: bool, recovery_point: int, log_start_offset: int) -> None:
        for stray in self.directory.glob("*.tmp"):
            stray.unlink()
        self._finish_interrupted_operations()
        bases = _segment_bases(self.directory)
        for p in list(self.directory.glob("*.index")) + list(self.directory.glob("*.timeindex")):
            if p.stem.isdigit() and int(p.stem) not in bases:
                p.unlink()  # orphan index without its log
        segments: list[LogSegment] = []
        recovered: list[LogSegment] = []
        for i, base in enumerate(bases):
            seg = self._new_segment(base, create=False)
            segments.append(seg)
            covers_unflushed = i + 1 == len(bases) or bases[i + 1] > recovery_point
            truncated = 0
            if recover and covers_unflushed:
                truncated, _ = seg.recover()
                recovered.append(seg)
            else:
                try:
                    seg.load()
                except (CorruptIndexError, CorruptRecordError):
                    truncated, _ = seg.recover()
                    recovered.append(seg)
            if truncated and i + 1 < len(bases):
                for later in bases[i + 1 :]:  # Kafka drops everything after a corrupt batch
                    self._new_segment(later, create=False).delete()
                break
        if not segments:
            segments.append(self._new_segment(max(log_start_offset, 0), create=True))
        self.segments = segments
        self._bases = [s.base_offset for s in segments]
        self.log_end_offset = segments[-1].next_offset
        self.log_start_offset = min(
            max(log_start_offset, segments[0].base_offset), self.log_end_offset
        )
        self.high_watermark = self.log_end_offset
        self.epoch_cache.truncate_from_end(self.log_end_offset)
        self.epoch_cache.truncate_from_start(self.log_start_offset)
        self._load_producer_state(recovered)
        if recover:
            self.flush()
        self.recovery_point = self.log_end_offset
        self.take_producer_snapshot(sync=False)

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
        headers = validate_batches(
            records, max_batch_size=cfg.max_message_bytes, require_keys=cfg.compact
        )
        if not cfg.log_append_time:
            self._check_timestamps(records, headers, now_ms)
        dup = self.producer_state.check(headers, verification_guard, coordinator)
        if dup is not None:
            return AppendResult(
                dup.first_offset, dup.last_offset, -1, self.log_start_offset, duplicate=True
            )
        target = cfg.target_codec
        if target is not None and any(h.codec != target for h in headers):
            buf, headers = self._recompress(records, headers, target)
        else:
            buf = records if _writable(records) else bytearray(records)
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
        headers = []
        for bpos, h in iter_batches(view):
            if crc32c(view[bpos + CRC_START : bpos + h.size]) != h.crc:
                raise CorruptRecordError("record batch CRC mismatch in a fetched batch")
            headers.append(h)
        pos = 0
        start = None
        kept: list[BatchHeader] = []
        for h in headers:
            if h.next_offset <= self.log_end_offset:
                pos += h.size
                continue
            if start is None:
                if h.base_offset != self.log_end_offset:
                    raise CorruptRecordError(
                        f"follower append at {h.base_offset} does not continue the log end "
                        f"offset {self.log_end_offset}"
                    )
                start = pos
            kept.append(h)
            pos += h.size
        if not kept or start is None:
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

    def _check_timestamps(self, records, headers: list[BatchHeader], now_ms: int) -> None:
        """CreateTime timestamps must lie in [now - before.max.ms, now + after.max.ms]."""
        before = self.config.message_timestamp_before_max_ms
        after = self.config.message_timestamp_after_max_ms
        lo = now_ms - before if before < LONG_MAX else None
        hi = now_ms + after if after < LONG_MAX else None
        if lo is None and hi is None:
            return
        pos = 0
        for h in headers:
            check_all = lo is not None and (h.base_timestamp < lo or h.last_offset_delta > 0)
            if check_all or (hi is not None and h.max_timestamp > hi):
                for r in decode_records(memoryview(records)[pos : pos + h.size]):
                    ts = r.timestamp
                    if ts >= 0 and ((lo is not None and ts < lo) or (hi is not None and ts > hi)):
                        raise InvalidTimestampError(
                            f"Timestamp {ts} of message with offset {r.offset} is out of range. "
                            f"The timestamp should be within [{lo if lo is not None else -1}, "
                            f"{hi if hi is not None else LONG_MAX}]"
                        )
            pos += h.size

    def _recompress(
        self, records, headers: list[BatchHeader], codec: int
    ) -> tuple[bytearray, list[BatchHeader]]:
        """Rewrite batches whose codec differs from the topic's (Kafka's LogValidator):
        records, timestamps and producer fields kept, offsets assigned later, new CRC."""
        out = bytearray()
        new_headers = []
        pos = 0
        for h in headers:
            raw = memoryview(records)[pos : pos + h.size]
            pos += h.size
            if h.codec == codec or h.is_control:
                out += raw
                new_headers.append(h)
                continue
            batch = encode_batch(
                decode_records(raw),
                codec=codec,
                producer_id=h.producer_id,
                producer_epoch=h.producer_epoch,
                base_sequence=h.base_sequence,
                is_transactional=h.is_transactional,
            )
            if len(batch) > self.config.max_message_bytes:
                raise RecordTooLargeError(
                    f"recompressed batch of {len(batch)} bytes exceeds "
                    f"{self.config.max_message_bytes}"
                )
            out += batch
            new_headers.append(parse_batch_header(batch))
        return out, new_headers

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
        self._last_flush_ms = int(time.time() * 1000) if now_ms is None else now_ms
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

    # ---- I/O errors ----------------------------------------------------------------------

    def io_failed(self, what: str, error: OSError) -> KafkaStorageError:
        """An I/O error: this log (and its directory) go offline; the error to raise."""
        self.offline = True
        where = f"{self.topic}-{self.partition}"
        if self.on_io_error is not None:
            self.on_io_error(self.directory.parent, f"{what} {where}", error)
        return KafkaStorageError(
            f"Error while {what} {where} in dir {self.directory.parent}: "
            f"{error.strerror or error}"
        )

    def offline_error(self) -> KafkaStorageError:
        return KafkaStorageError(
            f"{self.topic}-{self.partition} is offline: log directory {self.directory.parent} "
            f"failed"
        )

    # ---- reading -------------------------------------------------------------------------

    def _segment_at(self, offset: int) -> int:
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    @_storage_io("reading")
    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> FetchData:
        """Whole batches from the one containing ``offset``, below ``max_offset``, within
        ``max_bytes`` (but at least one batch when ``min_one_batch``, KIP-74)."""
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {offset} not in [{self.log_start_offset}, {self.log_end_offset}]"
            )
        limit = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        if offset >= limit:
            return FetchData([], 0)
        for seg in self.segments[self._segment_at(offset) :]:
            region = seg.read_region(offset, max_bytes, limit, min_one_batch)
            if region is None:
                continue
            pos, length = region
            if length == 0:
                break
            return FetchData([FileRegion(seg.fd, pos, length)], length)
        return FetchData([], 0)

    def read_bytes(self, offset: int, max_bytes: int, **kw) -> bytes:
        """Convenience for tests and tools: the bytes ``read`` would send."""
        import os

        data = self.read(offset, max_bytes, **kw)
        return b"".join(os.pread(r.fileno, r.length, r.position) for r in data.regions)

    @_storage_io("searching timestamps in")
    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= ``timestamp_ms``."""
        for seg in self.segments:
            if seg.max_timestamp >= timestamp_ms:
                found = seg.find_offset_by_timestamp(timestamp_ms, self.log_start_offset)
                if found is not None:
                    return found
        return None

    def max_timestamp(self) -> tuple[int, int]:
        """(timestamp, offset) of the record with the largest timestamp; (-1, -1) if none."""
        best: LogSegment | None = None
        for seg in self.segments:
            if seg.size and (best is None or seg.max_timestamp > best.max_timestamp):
                best = seg
        if best is None or best.max_timestamp < 0:
            return -1, -1
        found = best.find_batch(best.offset_of_max_timestamp)
        if found is not None:
            for r in best.records_of(*found):
                if r.timestamp == best.max_timestamp:
                    return r.timestamp, r.offset
        return best.max_timestamp, best.offset_of_max_timestamp

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) per LeaderEpochFileCache.endOffsetFor; (-1, -1) if unknown."""
        return self.epoch_cache.end_offset_for(epoch, self.log_end_offset)

    def latest_epoch(self) -> int:
        return self.epoch_cache.latest_epoch()

    def epoch_for_offset(self, offset: int) -> int:
        """Leader epoch that wrote ``offset`` (ListOffsets returns it with the offset)."""
        return self.epoch_cache.epoch_for_offset(offset)

    # ---- maintenance ---------------------------------------------------------------------

    @_storage_io("deleting records of")
    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start to ``offset`` (-1 = high watermark), deleting
        segments that lie wholly below it. Returns the new low watermark."""
        if offset == -1:
            offset = self.high_watermark
        if offset < 0 or offset > self.high_watermark:
            raise OffsetOutOfRangeError(
                f"offset {offset} is beyond the high watermark {self.high_watermark}"
            )
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            self.epoch_cache.truncate_from_start(offset)
            self.delete_log_start_breached_segments()
        return self.log_start_offset

    # ---- retention -----------------------------------------------------------------------

    def _deletable_prefix(self, predicate) -> list[LogSegment]:
        """Oldest closed segments, in order, while ``predicate(segment)`` holds. The active
        segment is never deleted, nor a segment holding offsets at or past the high watermark."""
        out: list[LogSegment] = []
        for i, seg in enumerate(self.segments[:-1]):
            upper = self.segments[i + 1].base_offset
            if upper > self.high_watermark or not predicate(seg, upper):
                break
            out.append(seg)
        return out

    @_storage_io("deleting segments of")
    def delete_segments(self, victims: list[LogSegment], now_ms: int | None = None) -> int:
        """Remove a prefix of segments from the log; files are renamed ``.deleted`` and removed
        after file.delete.delay.ms (in-flight fetches hold their own descriptors). Advances the
        log start offset to the first remaining segment."""
        if not victims:
            return 0
        assert victims == self.segments[: len(victims)], "only a prefix of segments is deleted"
        now = int(time.time() * 1000) if now_ms is None else now_ms
        del self.segments[: len(victims)]
        del self._bases[: len(victims)]
        self._schedule_deletion(victims, now)
        new_start = self.segments[0].base_offset
        if new_start > self.log_start_offset:
            self.log_start_offset = min(new_start, self.log_end_offset)
            self.epoch_cache.truncate_from_start(self.log_start_offset)
        return len(victims)

    def _schedule_deletion(self, victims: list[LogSegment], now_ms: int) -> None:
        """Rename the segments' files ``.deleted``; they are unlinked after file.delete.delay.ms
        (at once when it is 0)."""
        renamed: list[Path] = []
        for seg in victims:
            renamed += seg.rename_to_deleted(DELETED_SUFFIX)
            renamed += self._snapshot_for_deleted_segment(seg)
        self.pending_deletes.append((now_ms + self.config.file_delete_delay_ms, renamed))
        if self.config.file_delete_delay_ms <= 0:
            self.purge_deleted_files(now_ms)

    @_storage_io("removing deleted segments of")
    def purge_deleted_files(self, now_ms: int) -> int:
        """Unlink ``.deleted`` files whose delay has passed; returns how many were removed."""
        removed = 0
        keep = []
        for due, paths in self.pending_deletes:
            if due <= now_ms:
                for p in paths:
                    p.unlink(missing_ok=True)
                    removed += 1
            else:
                keep.append((due, paths))
        self.pending_deletes = keep
        return removed

    def delete_log_start_breached_segments(self, now_ms: int | None = None) -> int:
        """Segments wholly below the log start offset (moved by DeleteRecords)."""
        start = self.log_start_offset
        return self.delete_segments(
            self._deletable_prefix(lambda seg, upper: upper <= start), now_ms
        )

    @_storage_io("applying retention to")
    def delete_old_segments(self, now_ms: int) -> int:
        """Kafka's deleteOldSegments: with the delete policy, segments past retention.ms (by
        their largest timestamp) then those over retention.bytes; with any policy, segments
        below the log start offset. Returns the number of segments deleted."""
        cfg = self.config
        deleted = 0
        if cfg.delete and cfg.retention_ms >= 0:
            limit = cfg.retention_ms

            def expired(seg: LogSegment, _upper: int) -> bool:
                return now_ms - seg.largest_timestamp() > limit

            deleted += self.delete_segments(self._deletable_prefix(expired), now_ms)
        if cfg.delete and cfg.retention_bytes >= 0:
            excess = self.size_in_bytes() - cfg.retention_bytes

            def over(seg: LogSegment, _upper: int) -> bool:
                nonlocal excess
                if excess - seg.size >= 0:
                    excess -= seg.size
                    return True
                return False

            deleted += self.delete_segments(self._deletable_prefix(over), now_ms)
        deleted += self.delete_log_start_breached_segments(now_ms)
        return deleted

    def size_in_bytes(self) -> int:
        return sum(seg.size for seg in self.segments)

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
        now = int(time.time() * 1000) if now_ms is None else now_ms
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
