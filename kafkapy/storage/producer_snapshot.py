"""Producer state snapshots: ``%020d.snapshot`` files in Kafka's format (sans-io codec plus
file helpers).

A snapshot holds the producer state of a partition as of the offset in its name (every batch
below that offset applied), so opening a log replays only the batches after the latest snapshot
instead of the whole log. Layout (big-endian, Kafka's ProducerStateManager schema version 1)::

    version int16 (1) | crc uint32 (CRC32C of everything after this field) |
    entries: int32 count, then per producer:
      producer_id int64 | epoch int16 | last_sequence int32 | last_offset int64 |
      offset_delta int32 | timestamp int64 | coordinator_epoch int32 |
      current_txn_first_offset int64

``last_sequence``/``last_offset``/``offset_delta`` describe the producer's last data batch
(-1/-1/0 when it has none); ``current_txn_first_offset`` is -1 when no transaction is open.
Only the last batch is kept, so after a restart a retry of an older one of the last five
batches is no longer recognised (as in Kafka). A file whose version is not 1 or whose CRC does
not match is corrupt: it is deleted and an older snapshot (or a full replay) is used instead.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

from kafkapy.storage.producer_state import BatchMetadata, ProducerEntry

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
_HEAD = struct.Struct(">hI")
_COUNT = struct.Struct(">i")
_ENTRY = struct.Struct(">qhiqiqiq")
ENTRIES_OFFSET = _HEAD.size  # 6: the CRC covers the bytes from here
INT32_MAX = 2**31 - 1


class CorruptSnapshotError(ValueError):
    """A snapshot file that cannot be trusted (version, CRC, truncated)."""


@dataclass(frozen=True, slots=True)
class SnapshotFile:
    offset: int
    path: Path


def snapshot_name(offset: int) -> str:
    return f"{offset:020d}{SNAPSHOT_SUFFIX}"


def _decrement_sequence(sequence: int, decrement: int) -> int:
    """Kafka's DefaultRecordBatch.decrementSequence (sequences wrap at Int32.MAX)."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def encode_snapshot(entries: list[ProducerEntry]) -> bytes:
    """The bytes of a snapshot holding ``entries`` (written in producer id order)."""
    body = bytearray(_COUNT.pack(len(entries)))
    for e in sorted(entries, key=lambda x: x.producer_id):
        if e.batches:
            last = e.batches[-1]
            seq, offset = last.last_seq, last.last_offset
            delta = last.last_offset - last.first_offset
        else:
            seq, offset, delta = -1, -1, 0
        body += _ENTRY.pack(
            e.producer_id,
            e.epoch,
            seq,
            offset,
            delta,
            e.last_timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
    return _HEAD.pack(SNAPSHOT_VERSION, crc32c(body)) + bytes(body)


def decode_snapshot(data: bytes) -> list[ProducerEntry]:
    """The producer entries of a snapshot; CorruptSnapshotError if it cannot be trusted."""
    if len(data) < ENTRIES_OFFSET + _COUNT.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes is truncated")
    version, crc = _HEAD.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    computed = crc32c(memoryview(data)[ENTRIES_OFFSET:])
    if crc != computed:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. "
            f"Computed crc: {computed}"
        )
    (count,) = _COUNT.unpack_from(data, ENTRIES_OFFSET)
    pos = ENTRIES_OFFSET + _COUNT.size
    if count < 0 or pos + count * _ENTRY.size != len(data):
        raise CorruptSnapshotError(f"snapshot declares {count} entries in {len(data)} bytes")
    out = []
    for pid, epoch, seq, offset, delta, ts, coord_epoch, txn_first in _ENTRY.iter_unpack(
        memoryview(data)[pos:]
    ):
        entry = ProducerEntry(
            pid,
            epoch,
            last_timestamp=ts,
            coordinator_epoch=coord_epoch,
            current_txn_first_offset=txn_first if txn_first >= 0 else -1,
        )
        if offset >= 0:
            entry.batches.append(
                BatchMetadata(_decrement_sequence(seq, delta), seq, offset - delta, offset)
            )
        out.append(entry)
    return out


def list_snapshots(directory: Path) -> list[SnapshotFile]:
    """The snapshot files of a partition directory, by offset."""
    out = []
    for p in directory.glob("*" + SNAPSHOT_SUFFIX):
        stem = p.name[: -len(SNAPSHOT_SUFFIX)]
        if len(stem) == 20 and stem.isdigit() and p.is_file():
            out.append(SnapshotFile(int(stem), p))
    return sorted(out, key=lambda s: s.offset)


def write_snapshot(
    directory: Path, offset: int, entries: list[ProducerEntry], *, sync: bool
) -> Path:
    """Write a snapshot as of ``offset`` (through a temporary file, renamed into place)."""
    path = directory / snapshot_name(offset)
    tmp = path.with_name(path.name + ".tmp")
    data = encode_snapshot(entries)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def read_snapshot(path: Path) -> list[ProducerEntry]:
    return decode_snapshot(path.read_bytes())
