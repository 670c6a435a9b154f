"""The read path of a partition log (mixed into PartitionLog): fetches, offset lookups by
timestamp, the largest timestamp, and the leader-epoch lookups (Kafka's LocalLog.read,
UnifiedLog.fetchOffsetByTimestamp and UnifiedLog.endOffsetForEpoch).

A fetch is answered with FileRegions (storage/file_region.py) of whole batches, sent with
sendfile without being read into Python. Reads do not change the log; read_committed reads,
bounded by the last stable offset, are in storage/log_transactions.py.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Any

from kafkapy.storage.errors import OffsetOutOfRangeError
from kafkapy.storage.file_region import FileRegion
from kafkapy.storage.io_guard import storage_io
from kafkapy.storage.leader_epoch import LeaderEpochCache
from kafkapy.storage.segment import LogSegment


@dataclass
class FetchData:
    regions: list[FileRegion]  # consecutive whole batches, in order
    size: int  # sum of lengths


class LogReads:
    """Methods PartitionLog gets for reading; see the module docstring."""

    # the PartitionLog state they read (set by PartitionLog.__init__)
    segments: list[LogSegment]
    _bases: list[int]  # base offsets of ``segments``
    log_start_offset: int
    log_end_offset: int
    epoch_cache: LeaderEpochCache

    def _segment_at(self, offset: int) -> int:
        """Index in ``segments`` of the segment holding ``offset`` (0 below the first)."""
        return max(bisect.bisect_right(self._bases, offset) - 1, 0)

    @storage_io("reading")
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

    def read_bytes(self, offset: int, max_bytes: int, **kw: Any) -> bytes:
        """Convenience for tests and tools: the bytes ``read`` would send."""
        data = self.read(offset, max_bytes, **kw)
        return b"".join(os.pread(r.fileno, r.length, r.position) for r in data.regions)

    @storage_io("searching timestamps in")
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
