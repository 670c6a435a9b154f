"""Leader epoch history of one partition (Kafka's LeaderEpochFileCache), persisted to the
partition's ``leader-epoch-checkpoint`` on every change."""

from __future__ import annotations

import bisect
from pathlib import Path

from kafkapy.storage.checkpoints import read_epoch_checkpoint, write_epoch_checkpoint

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    """Ordered (epoch, start_offset) entries; both columns strictly increase."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[tuple[int, int]] = read_epoch_checkpoint(path)

    def _save(self) -> None:
        write_epoch_checkpoint(self.path, self.entries)

    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (no-op unless it is new)."""
        if epoch < 0:
            return
        if self.entries and self.entries[-1][0] == epoch and self.entries[-1][1] <= start_offset:
            return
        kept = [(e, o) for e, o in self.entries if e < epoch and o < start_offset]
        kept.append((epoch, start_offset))
        self.entries = kept
        self._save()

    def epoch_for_offset(self, offset: int) -> int:
        """Epoch of the leader that wrote ``offset`` (-1 if before every entry)."""
        i = bisect.bisect_right([o for _, o in self.entries], offset)
        return self.entries[i - 1][0] if i else UNDEFINED_EPOCH

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) as LeaderEpochFileCache.endOffsetFor."""
        if requested == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.entries[-1][0] == requested:
            return requested, log_end_offset
        epochs = [e for e, _ in self.entries]
        hi = bisect.bisect_right(epochs, requested)
        if hi == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        higher_start = self.entries[hi][1]
        if hi == 0:
            return requested, higher_start
        return self.entries[hi - 1][0], higher_start

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop entries starting at or after ``end_offset`` (log truncated there)."""
        kept = [(e, o) for e, o in self.entries if o < end_offset]
        if kept != self.entries:
            self.entries = kept
            self._save()

    def truncate_from_start(self, start_offset: int) -> None:
        """Log start moved: drop earlier entries, clamp the one covering ``start_offset``."""
        i = bisect.bisect_right([o for _, o in self.entries], start_offset)
        if i == 0:
            return
        kept = self.entries[i - 1 :]
        epoch, off = kept[0]
        kept[0] = (epoch, max(off, start_offset))
        if kept != self.entries:
            self.entries = kept
            self._save()
