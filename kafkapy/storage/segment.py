"""One log segment: ``%020d.log`` holding record batches as appended, with its sparse
``.index`` and ``.timeindex``, and its ``.txnindex`` of aborted transactions (created only when
one is written). Synchronous file I/O; the .log fd stays open for sendfile (Kafka's LogSegment).

Indexes are loaded lazily, as Kafka's LazyIndex does: a segment opened from disk opens its .log
only; its offset and time indexes are read (and checked against the log) on first use — a
lookup, an append, a truncation, or asking for its next offset or largest timestamp — and its
transaction index is opened on first use. Opening a log of many segments thus reads the indexes
of the last one only (storage/log_loader.py); ``load`` and ``recover`` are the eager forms.
An index found corrupt on first use is rebuilt from the log then (``recover``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from crc32c import crc32c

from kafkapy import clock
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    CorruptRecordError,
    Record,
    decode_records,
    parse_batch_header,
)
from kafkapy.storage import faults
from kafkapy.storage.index import CorruptIndexError, OffsetIndex, TimeIndex
from kafkapy.storage.txn_index import TransactionIndex

log = logging.getLogger("kafkapy.storage.segment")
# one lazy load at a time: a log may be read from a worker thread (txn_service reads its log in
# one) while the event loop uses it, and a half-read index must not be looked up
_LAZY_LOAD = threading.Lock()

_SCAN_CHUNK = 16384
_RECOVER_CHUNK = 1 << 20
_MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD
_INT32_MAX = 2**31 - 1

# suffixes of a segment's files on their way out (Kafka's LogFileUtils): ``.deleted`` waits for
# file.delete.delay.ms, ``.cleaned`` is being written by the cleaner, ``.swap`` is written
# completely and replaces the segments it covers (storage/log_loader.py finishes the job)
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"


def segment_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"




class LogSegment:
    """Append-only batches plus indexes for offsets [base_offset, next_offset)."""

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        segment_index_bytes: int,
        create: bool = False,
        now_ms: int | None = None,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.log_path = directory / segment_name(base_offset, ".log")
        if create and faults.ACTIVE:
            faults.check_create(self.log_path)
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        self.fd = os.open(self.log_path, flags, 0o644)
        self.size = os.fstat(self.fd).st_size
        self._offset_index = OffsetIndex(
            directory / segment_name(base_offset, ".index"), base_offset, segment_index_bytes // 8
        )
        self._time_index = TimeIndex(
            directory / segment_name(base_offset, ".timeindex"),
            base_offset,
            segment_index_bytes // 12,
        )
        self._txn_index_path = directory / segment_name(base_offset, ".txnindex")
        self._txn_index: TransactionIndex | None = None  # opened on first use
        # a new segment's index files are created with its first batch (as Kafka's LazyIndex
        # creates them on first use): a segment holding data always has both
        self._indexes_pending = create
        # whether the offset and time indexes are in memory (and the four fields below known):
        # a new segment has nothing to read; one opened from disk reads them on first use
        self._indexes_loaded = create
        self._next_offset = base_offset
        self._max_timestamp = -1
        self._offset_of_max_timestamp = base_offset
        self._first_batch_timestamp: int | None = None
        self._first_batch_timestamp_known = create
        self.created_ms = clock.now_ms() if now_ms is None else now_ms
        self._bytes_since_index = 0
        self.closed = False

    # ---- lazily loaded state ---------------------------------------------------------------

    @property
    def indexes_loaded(self) -> bool:
        """Whether the offset and time indexes have been read (or built) yet."""
        return self._indexes_loaded

    def _ensure_indexes(self) -> None:
        """Read the indexes on first use; a corrupt one is rebuilt from the log."""
        if self._indexes_loaded:
            return
        with _LAZY_LOAD:
            if self._indexes_loaded:
                return
            try:
                self._read_indexes()
            except (CorruptIndexError, CorruptRecordError) as e:
                log.warning("rebuilding the indexes of segment=%s error=%s", self.log_path, e)
                self.recover()

    @property
    def offset_index(self) -> OffsetIndex:
        self._ensure_indexes()
        return self._offset_index

    @property
    def time_index(self) -> TimeIndex:
        self._ensure_indexes()
        return self._time_index

    @property
    def txn_index(self) -> TransactionIndex:
        if self._txn_index is None:
            self._txn_index = TransactionIndex(self._txn_index_path, self.base_offset)
        return self._txn_index

    @property
    def next_offset(self) -> int:
        self._ensure_indexes()
        return self._next_offset

    @property
    def max_timestamp(self) -> int:
        """The largest timestamp of the batches (-1: none)."""
        self._ensure_indexes()
        return self._max_timestamp

    @property
    def offset_of_max_timestamp(self) -> int:
        self._ensure_indexes()
        return self._offset_of_max_timestamp

    @property
    def first_batch_timestamp(self) -> int | None:
        """The largest timestamp of the first batch (segment.ms counts from it); None: empty."""
        if not self._first_batch_timestamp_known:
            self._load_first_timestamp()
        return self._first_batch_timestamp

    # ---- loading -------------------------------------------------------------------------

    def indexes_present(self) -> bool:
        return self._offset_index.path.exists() and self._time_index.path.exists()

    def sanity_check(self) -> None:
        """What opening a trusted segment checks without reading its offset and time indexes
        (Kafka's LogSegment.sanityCheck): both index files present when it holds data, and its
        transaction index (if any) sane. CorruptIndexError when it needs a recover()."""
        if self.size and not self.indexes_present():
            raise CorruptIndexError(f"{self.log_path}: index files missing")
        if self._txn_index is not None or self._txn_index_path.exists():
            self.txn_index.sanity_check()

    def load(self) -> None:
        """Trust the files (clean shutdown): read indexes now, find the next offset.

        Raises CorruptIndexError / CorruptRecordError when something needs a recover()."""
        self.sanity_check()
        self._read_indexes()
        self._load_first_timestamp()

    def _read_indexes(self) -> None:
        """Read the offset and time indexes, check them against the log, find the next offset
        after the last indexed batch (CorruptIndexError / CorruptRecordError: recover)."""
        idx, tidx = self._offset_index, self._time_index
        idx.load()
        tidx.load()
        if idx.keys and idx.values[-1] >= max(self.size, 1):
            raise CorruptIndexError(f"{idx.path}: entry beyond the log end")
        for i in {0, len(idx) - 1} if len(idx) else ():  # the entries point at their batches
            head = os.pread(self.fd, BATCH_HEADER_SIZE, idx.values[i])
            h = parse_batch_header(head) if len(head) == BATCH_HEADER_SIZE else None
            if h is None or h.magic != MAGIC or h.last_offset != idx.keys[i]:
                raise CorruptIndexError(f"{idx.path}: entry {i} does not point at its batch")
        last_offset, pos = idx.lookup(2**63 - 1)
        next_offset = self.base_offset
        for _, h in self.iter_headers(pos):
            next_offset = h.next_offset
        if next_offset == self.base_offset and idx.keys:
            raise CorruptIndexError(f"{idx.path}: entries past the log")
        self._next_offset = next_offset
        values = tidx.values
        if values and not (self.base_offset <= min(values) and max(values) < next_offset):
            raise CorruptIndexError(f"{tidx.path}: entries outside the segment")
        self._max_timestamp, self._offset_of_max_timestamp = tidx.last_entry()
        self._indexes_loaded = True  # last: only whole indexes are used without the lock

    def _load_first_timestamp(self) -> None:
        self._first_batch_timestamp_known = True
        self._first_batch_timestamp = None
        if self.size >= BATCH_HEADER_SIZE:
            self._first_batch_timestamp = parse_batch_header(
                os.pread(self.fd, BATCH_HEADER_SIZE, 0)
            ).max_timestamp

    def recover(self) -> tuple[int, list[BatchHeader]]:
        """Validate every batch (framing, magic, CRC, offsets), truncate a torn or corrupt tail,
        rebuild both indexes. Returns (bytes truncated, headers of the valid batches)."""
        self._offset_index.reset()
        self._time_index.reset()
        self._max_timestamp = -1
        self._offset_of_max_timestamp = self.base_offset
        self._bytes_since_index = 0
        headers: list[BatchHeader] = []
        pos = 0
        valid = 0
        expected = self.base_offset
        buf = b""
        buf_pos = 0
        while pos + BATCH_HEADER_SIZE <= self.size:
            off = pos - buf_pos
            if off + BATCH_HEADER_SIZE > len(buf):
                buf = os.pread(self.fd, max(_RECOVER_CHUNK, BATCH_HEADER_SIZE), pos)
                buf_pos, off = pos, 0
            h = parse_batch_header(buf, off)
            if h.magic != MAGIC or h.batch_length < _MIN_BATCH_LENGTH:
                break
            if pos + h.size > self.size or h.base_offset < expected:
                break
            if h.last_offset - self.base_offset > _INT32_MAX or h.last_offset_delta < 0:
                break
            if off + h.size > len(buf):
                buf = os.pread(self.fd, max(_RECOVER_CHUNK, h.size), pos)
                buf_pos, off = pos, 0
                if len(buf) < h.size:
                    break
            if crc32c(memoryview(buf)[off + CRC_START : off + h.size]) != h.crc:
                break
            self._index_batch(pos, h.last_offset, h.max_timestamp, h.size)
            headers.append(h)
            expected = h.next_offset
            pos += h.size
            valid = pos
        truncated = self.size - valid
        if truncated:
            os.ftruncate(self.fd, valid)
            self.size = valid
        self._next_offset = expected
        self._indexes_loaded = True
        self._load_first_timestamp()
        return truncated, headers

    # ---- appending -----------------------------------------------------------------------

    def _index_batch(self, pos: int, last_offset: int, max_ts: int, size: int) -> None:
        if max_ts > self._max_timestamp:
            self._max_timestamp = max_ts
            self._offset_of_max_timestamp = last_offset
        if self._bytes_since_index > self.index_interval_bytes:
            self._offset_index.append(last_offset, pos)
            self._time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
            self._bytes_since_index = 0
        self._bytes_since_index += size

    def append(self, data: bytes | bytearray | memoryview, batches: Sequence[tuple]) -> None:
        """Append whole batches; ``batches`` holds (last_offset, max_timestamp, size) each."""
        self._ensure_indexes()
        pos = self.size
        if self._indexes_pending:
            self.create_index_files()
        view = memoryview(data)
        written = 0
        while written < len(view):
            chunk = view[written:]
            if faults.ACTIVE:
                chunk = chunk[: faults.writable(self.log_path, len(chunk))]
            written += os.write(self.fd, chunk)
        if self.first_batch_timestamp is None and batches:
            self._first_batch_timestamp = batches[0][1]
        for last_offset, max_ts, size in batches:
            self._index_batch(pos, last_offset, max_ts, size)
            pos += size
        self.size = pos
        if batches:
            self._next_offset = batches[-1][0] + 1

    def can_hold(self, last_offset: int) -> bool:
        """Whether ``last_offset`` fits a 4-byte relative offset and the indexes have room."""
        return (
            last_offset - self.base_offset <= _INT32_MAX
            and not self.offset_index.is_full
            and not self.time_index.is_full
        )

    def create_index_files(self) -> None:
        """Create the (empty) index files of a new segment if they are not there yet."""
        if self._indexes_pending:
            self._offset_index.path.touch()
            self._time_index.path.touch()
            self._indexes_pending = False

    def on_become_inactive(self) -> None:
        """Kafka appends the segment's largest timestamp to the time index on roll."""
        self.time_index.maybe_append(
            self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True
        )

    # ---- reading -------------------------------------------------------------------------

    def iter_headers(
        self, start: int = 0, end: int | None = None
    ) -> Iterator[tuple[int, BatchHeader]]:
        """Yield (position, header) of the batches in [start, end)."""
        end = self.size if end is None else end
        pos = start
        buf = b""
        buf_pos = start
        while pos < end:
            if end - pos < BATCH_HEADER_SIZE:
                raise CorruptRecordError(f"{self.log_path}: truncated batch at {pos}")
            off = pos - buf_pos
            if off + BATCH_HEADER_SIZE > len(buf):
                buf = os.pread(self.fd, min(_SCAN_CHUNK, end - pos), pos)
                buf_pos, off = pos, 0
            h = parse_batch_header(buf, off)
            if h.batch_length < _MIN_BATCH_LENGTH or pos + h.size > end:
                raise CorruptRecordError(f"{self.log_path}: bad batch at {pos}")
            yield pos, h
            pos += h.size

    def find_batch(self, offset: int) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= ``offset``."""
        _, pos = self.offset_index.lookup(offset)
        for p, h in self.iter_headers(pos):
            if h.last_offset >= offset:
                return p, h
        return None

    def read_region(
        self, offset: int, max_bytes: int, max_offset: int | None, min_one_batch: bool
    ) -> tuple[int, int] | None:
        """(position, length) of whole batches from the one containing ``offset``; None if
        no batch in this segment qualifies. ``length`` may be 0 (nothing fits)."""
        found = self.find_batch(offset)
        if found is None:
            return None
        start, first = found
        if max_offset is not None and first.last_offset >= max_offset:
            return start, 0
        if first.size > max_bytes:
            return (start, first.size) if min_one_batch else (start, 0)
        length = first.size
        for _, h in self.iter_headers(start + first.size):
            if length + h.size > max_bytes:
                break
            if max_offset is not None and h.last_offset >= max_offset:
                break
            length += h.size
        return start, length

    def read_batch(self, pos: int, size: int) -> bytes:
        return os.pread(self.fd, size, pos)

    def records_of(self, pos: int, h: BatchHeader) -> list[Record]:
        return decode_records(self.read_batch(pos, h.size))

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with ts >= target and offset >= start."""
        _, ts_offset = self.time_index.lookup(timestamp)
        _, pos = self.offset_index.lookup(max(ts_offset, starting_offset))
        for p, h in self.iter_headers(pos):
            if h.max_timestamp >= timestamp and h.last_offset >= starting_offset:
                for r in self.records_of(p, h):
                    if r.timestamp >= timestamp and r.offset >= starting_offset:
                        return r.offset, r.timestamp
        return None

    # ---- maintenance ---------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop the batch containing ``offset`` and all later ones (Kafka's truncateTo)."""
        found = self.find_batch(offset)
        if found is None:
            return
        pos, _ = found
        os.ftruncate(self.fd, pos)
        self.size = pos
        self.txn_index.truncate_to(offset)
        self.recover()

    def flush(self) -> None:
        if faults.ACTIVE:
            faults.check_sync(self.log_path)
        os.fsync(self.fd)
        self._offset_index.flush()  # nothing to sync in an index not read or written yet
        self._time_index.flush()
        if self._txn_index is not None:
            self._txn_index.flush()

    def files_to_sync(self) -> list[tuple[int, str]]:
        """Duplicates of the descriptors a flush must fsync, with their paths (the caller
        closes them: storage/flush.py)."""
        out = [(os.dup(self.fd), str(self.log_path))]
        for index in (self._offset_index, self._time_index):
            fd = index.dup_fd()
            if fd is not None:
                out.append((fd, str(index.path)))
        return out

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._offset_index.close()
        self._time_index.close()
        if self._txn_index is not None:
            self._txn_index.close()
        os.close(self.fd)

    def largest_timestamp(self) -> int:
        """Kafka's LogSegment.largestTimestamp: the largest record timestamp, else the file's
        last-modified time (retention by time compares it with retention.ms)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return int(os.stat(self.log_path).st_mtime * 1000)

    def rename_to_deleted(self, suffix: str) -> list[Path]:
        """Close the segment and rename its files with ``suffix`` (asynchronous deletion);
        returns the renamed paths."""
        self.close()
        out = []
        for p in (
            self.log_path,
            self._offset_index.path,
            self._time_index.path,
            self._txn_index_path,
        ):
            target = p.with_name(p.name + suffix)
            try:
                os.replace(p, target)
            except FileNotFoundError:
                continue
            out.append(target)
        return out

    def delete(self) -> None:
        self.close()
        self.log_path.unlink(missing_ok=True)
        self._offset_index.delete()
        self._time_index.delete()
        self._txn_index_path.unlink(missing_ok=True)
