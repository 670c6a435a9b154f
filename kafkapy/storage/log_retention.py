"""Retention and deletion of a partition log's segments (mixed into PartitionLog): Kafka's
UnifiedLog.deleteOldSegments / deleteSegments / deleteRecords, and the asynchronous removal of
``.deleted`` files that Kafka's LogManager schedules.

- *Retention* (``delete_old_segments``, run by the LogManager): with the delete policy, the
  oldest closed segments whose largest timestamp is older than retention.ms, then those over
  retention.bytes; with any policy, the segments wholly below the log start offset.
- *DeleteRecords* (``delete_records_before``) moves the log start offset and deletes the
  segments that fall wholly below it.
- *Deletion* never takes the active segment nor one holding offsets at or past the high
  watermark. A deleted segment's files (and its producer snapshot) are renamed ``.deleted`` and
  unlinked after file.delete.delay.ms (``purge_deleted_files``): fetches in flight keep their own
  descriptors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafkapy import clock
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import OffsetOutOfRangeError
from kafkapy.storage.io_guard import storage_io
from kafkapy.storage.leader_epoch import LeaderEpochCache
from kafkapy.storage.segment import DELETED_SUFFIX, LogSegment


class LogRetention:
    """Methods PartitionLog gets for retention and deletion; see the module docstring."""

    # the PartitionLog state they use (set by PartitionLog.__init__)
    config: LogConfig
    segments: list[LogSegment]
    _bases: list[int]  # base offsets of ``segments``
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    epoch_cache: LeaderEpochCache
    # renamed ``.deleted`` files and the time (ms) after which they are removed
    pending_deletes: list[tuple[int, list[Path]]]
    # renames the producer snapshot of a deleted segment (storage/log_transactions.py)
    _snapshot_for_deleted_segment: Callable[[LogSegment], list[Path]]

    @storage_io("deleting records of")
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

    def _deletable_prefix(self, predicate: Callable[[LogSegment, int], bool]) -> list[LogSegment]:
        """Oldest closed segments, in order, while ``predicate(segment, its upper offset)``
        holds. The active segment is never deleted, nor a segment holding offsets at or past
        the high watermark."""
        out: list[LogSegment] = []
        for i, seg in enumerate(self.segments[:-1]):
            upper = self.segments[i + 1].base_offset
            if upper > self.high_watermark or not predicate(seg, upper):
                break
            out.append(seg)
        return out

    @storage_io("deleting segments of")
    def delete_segments(self, victims: list[LogSegment], now_ms: int | None = None) -> int:
        """Remove a prefix of segments from the log; files are renamed ``.deleted`` and removed
        after file.delete.delay.ms (in-flight fetches hold their own descriptors). Advances the
        log start offset to the first remaining segment."""
        if not victims:
            return 0
        assert victims == self.segments[: len(victims)], "only a prefix of segments is deleted"
        now = clock.now_ms() if now_ms is None else now_ms
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

    @storage_io("removing deleted segments of")
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

    @storage_io("applying retention to")
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
