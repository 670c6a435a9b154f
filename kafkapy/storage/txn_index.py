"""The aborted-transaction index of one segment: ``%020d.txnindex`` (Kafka's TransactionIndex).

One 34-byte entry per transaction aborted by a marker written in this segment, in marker order
(big-endian): version int16 (0), producer id int64, first offset int64 (the transaction's first
batch, possibly in an earlier segment), last offset int64 (the abort marker), last stable offset
int64 (the LSO when the marker was written: the first offset of the earliest other open
transaction, else the marker's offset + 1). read_committed fetches report the entries that
overlap the fetched range so consumers can drop the aborted batches.

The file is created only when the first entry is written (most segments never have one) and is
read back on demand, in chunks, stopping as soon as an entry's last stable offset shows that no
later entry can overlap the range asked for.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from kafkapy.storage.index import CorruptIndexError

ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = ENTRY.size  # 34
CURRENT_VERSION = 0
_READ_CHUNK = ENTRY_SIZE * 1024


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return ENTRY.pack(
            CURRENT_VERSION,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset,
        )


def decode_entries(data: bytes | bytearray | memoryview, where: str = "") -> list[AbortedTxn]:
    """Whole entries of ``data`` (a partial trailing entry is ignored, as Kafka does)."""
    out = []
    for pos in range(0, len(data) - ENTRY_SIZE + 1, ENTRY_SIZE):
        version, pid, first, last, lso = ENTRY.unpack_from(data, pos)
        if version > CURRENT_VERSION:
            raise CorruptIndexError(
                f"unexpected aborted transaction version {version} in transaction index {where}"
            )
        out.append(AbortedTxn(pid, first, last, lso))
    return out


class TransactionIndex:
    """Aborted transactions whose markers are in one segment; the file exists once written."""

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self._fd: int | None = None
        self._size = 0
        self.last_offset: int | None = None
        if path.exists():
            self._open()
            whole = self._size - self._size % ENTRY_SIZE
            if whole != self._size:  # a torn last entry: later appends must stay aligned
                os.ftruncate(self._fd, whole)
                self._size = whole
            tail = self._read(max(whole - ENTRY_SIZE, 0), ENTRY_SIZE)
            try:
                entries = decode_entries(tail, str(path))
            except CorruptIndexError:
                entries = []  # sanity_check() reports it; the segment is then recovered
            if entries:
                self.last_offset = entries[-1].last_offset

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        return self._fd

    def _read(self, pos: int, n: int) -> bytes:
        if self._fd is None or n <= 0:
            return b""
        return os.pread(self._fd, n, pos)

    @property
    def exists(self) -> bool:
        return self._fd is not None

    @property
    def size(self) -> int:
        return self._size if self._fd is not None else 0

    def append(self, txn: AbortedTxn) -> None:
        if self.last_offset is not None and self.last_offset >= txn.last_offset:
            raise ValueError(
                f"The last offset of appended transactions must increase sequentially, but "
                f"{txn.last_offset} is not greater than current last offset {self.last_offset} "
                f"of index {self.path}"
            )
        fd = self._open()
        data = txn.encode()
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], self._size + written)
        self._size += len(data)
        self.last_offset = txn.last_offset

    def entries(self) -> list[AbortedTxn]:
        return decode_entries(self._read(0, self.size), str(self.path))

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """Aborted transactions overlapping [fetch_offset, upper_bound), and whether the search
        is complete (no later segment can hold one that overlaps)."""
        found: list[AbortedTxn] = []
        pos = 0
        size = self.size
        while pos < size:
            chunk = self._read(pos, min(_READ_CHUNK, size - pos))
            if len(chunk) < ENTRY_SIZE:
                break
            for txn in decode_entries(chunk, str(self.path)):
                if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                    found.append(txn)
                if txn.last_stable_offset >= upper_bound:
                    return found, True
            pos += len(chunk) - len(chunk) % ENTRY_SIZE
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose marker is at or after ``offset``."""
        entries = self.entries()
        keep = 0
        for txn in entries:
            if txn.last_offset >= offset:
                break
            keep += 1
        if keep < len(entries) and self._fd is not None:
            os.ftruncate(self._fd, keep * ENTRY_SIZE)
            self._size = keep * ENTRY_SIZE
        self.last_offset = entries[keep - 1].last_offset if keep else None

    def reset(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            self._size = 0
        self.last_offset = None

    def sanity_check(self) -> None:
        for txn in self.entries():
            if txn.last_offset < self.base_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index {self.path} is less than "
                    f"start offset {self.base_offset}"
                )

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def rename(self, target: Path) -> bool:
        """Move the file (if any) to ``target``; the index then refers to it."""
        moved = False
        if self.path.exists():
            os.replace(self.path, target)
            moved = True
        self.path = target
        return moved

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
