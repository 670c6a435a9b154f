"""Sparse segment indexes in Kafka's file format, kept in memory and appended to disk.

* ``.index``: entries of 4-byte offset relative to the segment base + 4-byte file position.
* ``.timeindex``: entries of 8-byte timestamp + 4-byte relative offset.

All integers are big-endian. Files hold exactly the valid entries (no preallocation). The
entries also live in arrays so lookups are an in-memory binary search.
"""

from __future__ import annotations

import abc
import bisect
import os
import struct
from array import array
from pathlib import Path

from kafkapy.storage import faults


class CorruptIndexError(ValueError):
    """The index file is not a whole number of ordered entries; rebuild it."""


class _Index(abc.ABC):
    """Two parallel arrays (search key, value) mirrored to an append-only file."""

    ENTRY: struct.Struct
    KEY_TYPE = "q"

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_entries)
        self.keys = array(self.KEY_TYPE)
        self.values = array("q")
        self._fd: int | None = None

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def is_full(self) -> bool:
        return len(self.keys) >= self.max_entries

    def load(self) -> None:
        """Read the file into memory; CorruptIndexError if it is malformed."""
        data = self.path.read_bytes() if self.path.exists() else b""
        size = self.ENTRY.size
        if len(data) % size:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {size}")
        self.keys = array(self.KEY_TYPE)
        self.values = array("q")
        for a, b in self.ENTRY.iter_unpack(data):
            self._load_entry(a, b)
        self._check()

    @abc.abstractmethod
    def _load_entry(self, a: int, b: int) -> None:
        """Append one decoded file entry (key, value) to the in-memory arrays."""

    def _check(self) -> None:
        keys = self.keys
        for i in range(1, len(keys)):
            if keys[i] <= keys[i - 1]:  # entries are only ever appended with a larger key
                raise CorruptIndexError(f"{self.path}: entries out of order")

    def _write(self, entry: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if faults.ACTIVE:
            faults.check_write(self.path, len(entry))
        os.write(self._fd, entry)

    def _truncate_entries(self, n: int) -> None:
        del self.keys[n:]
        del self.values[n:]
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.ftruncate(self._fd, n * self.ENTRY.size)

    def reset(self) -> None:
        """Drop every entry (before a rebuild)."""
        self._truncate_entries(0)

    def flush(self) -> None:
        if self._fd is not None:
            if faults.ACTIVE:
                faults.check_sync(self.path)
            os.fsync(self._fd)

    def dup_fd(self) -> int | None:
        """A duplicate of the descriptor appends go through (None: nothing written yet)."""
        return os.dup(self._fd) if self._fd is not None else None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


class OffsetIndex(_Index):
    """Maps offsets to .log positions: floor lookup then a short scan of batch headers."""

    ENTRY = struct.Struct(">ii")

    def _load_entry(self, a: int, b: int) -> None:
        self.keys.append(self.base_offset + a)
        self.values.append(b)

    def _check(self) -> None:
        super()._check()
        if self.keys and self.keys[0] < self.base_offset:
            raise CorruptIndexError(f"{self.path}: entry below the base offset")

    @property
    def last_offset(self) -> int:
        return self.keys[-1] if self.keys else self.base_offset

    def append(self, offset: int, position: int) -> None:
        if self.keys and offset <= self.keys[-1]:
            return
        self.keys.append(offset)
        self.values.append(position)
        self._write(self.ENTRY.pack(offset - self.base_offset, position))

    def lookup(self, offset: int) -> tuple[int, int]:
        """Largest entry with offset <= target, else (base_offset, 0)."""
        i = bisect.bisect_right(self.keys, offset)
        if i == 0:
            return self.base_offset, 0
        return self.keys[i - 1], self.values[i - 1]

    def truncate_to(self, offset: int) -> None:
        """Remove entries whose offset is >= ``offset``."""
        self._truncate_entries(bisect.bisect_left(self.keys, offset))


class TimeIndex(_Index):
    """Maps timestamps to offsets; an entry is added only when the timestamp grows."""

    ENTRY = struct.Struct(">qi")

    def _load_entry(self, a: int, b: int) -> None:
        self.keys.append(a)
        self.values.append(self.base_offset + b)

    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry, else (-1, base_offset)."""
        if not self.keys:
            return -1, self.base_offset
        return self.keys[-1], self.values[-1]

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        if not skip_full_check and self.is_full:
            return
        if self.keys and timestamp <= self.keys[-1]:
            return
        if timestamp < 0:
            return
        self.keys.append(timestamp)
        self.values.append(offset)
        self._write(self.ENTRY.pack(timestamp, offset - self.base_offset))

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """Entry with the largest timestamp <= target, else (-1, base_offset)."""
        i = bisect.bisect_right(self.keys, timestamp)
        if i == 0:
            return -1, self.base_offset
        return self.keys[i - 1], self.values[i - 1]

    def truncate_to(self, offset: int) -> None:
        """Remove entries whose offset is >= ``offset``."""
        n = len(self.values)
        while n and self.values[n - 1] >= offset:
            n -= 1
        self._truncate_entries(n)
