"""Fetch response writer (versions 4-18; v18's response is v17's), sans-io.

Fetch responses are assembled by hand so that record data never passes through Python: the
writer emits the response as a list of byte strings interleaved with opaque record "regions"
(anything with a `length`), which the server sends from segment files with os.sendfile.
Tagged fields (diverging epoch, current leader, snapshot id, node endpoints) are never set, so
every tagged section is empty.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .wire import INT16, INT32, array_len, bytes_len, string

FLEXIBLE_FROM = 12
TOPIC_IDS_FROM = 13


@dataclass(slots=True)
class PartitionResult:
    partition: int
    error_code: int = 0
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    aborted: list[tuple[int, int]] | None = None  # (producer id, first offset); None = null
    regions: Sequence[Any] = ()  # record data: objects with .length, sent in order
    preferred_read_replica: int = -1
    request: Any = None  # the request partition this answers (bookkeeping, not written)

    @property
    def records_size(self) -> int:
        return sum(r.length for r in self.regions)


@dataclass(slots=True)
class TopicResult:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionResult] = field(default_factory=list)


_PARTITION_V4 = struct.Struct(">ihqq")  # partition, error, high watermark, last stable offset
_PARTITION_V5 = struct.Struct(">ihqqq")  # ... log start offset
_ABORTED = struct.Struct(">qq")  # producer id, first offset
_NULL_ARRAY = {False: INT32.pack(-1), True: b"\x00"}


def encode_fetch_response(
    version: int,
    topics: Sequence[TopicResult],
    *,
    error_code: int = 0,
    session_id: int = 0,
    throttle_ms: int = 0,
) -> list[Any]:
    """Encode a Fetch response body; returns bytes and regions in wire order."""
    flexible = version >= FLEXIBLE_FROM
    v5 = version >= 5
    fixed = _PARTITION_V5 if v5 else _PARTITION_V4
    null_aborted = _NULL_ARRAY[flexible]
    with_replica = version >= 11
    out: list[Any] = []
    buf = bytearray()
    buf += INT32.pack(throttle_ms)
    if version >= 7:
        buf += INT16.pack(error_code)
        buf += INT32.pack(session_id)
    buf += array_len(len(topics), flexible)
    for t in topics:
        if version >= TOPIC_IDS_FROM:
            buf += t.topic_id.bytes
        else:
            buf += string(t.name, flexible)
        buf += array_len(len(t.partitions), flexible)
        for p in t.partitions:
            if v5:
                buf += fixed.pack(
                    p.partition,
                    p.error_code,
                    p.high_watermark,
                    p.last_stable_offset,
                    p.log_start_offset,
                )
            else:
                buf += fixed.pack(
                    p.partition, p.error_code, p.high_watermark, p.last_stable_offset
                )
            if p.aborted is None:
                buf += null_aborted
            else:
                buf += array_len(len(p.aborted), flexible)
                for pid, first in p.aborted:
                    buf += _ABORTED.pack(pid, first)
                    if flexible:
                        buf += b"\x00"
            if with_replica:
                buf += INT32.pack(p.preferred_read_replica)
            regions = p.regions
            size = sum(r.length for r in regions) if regions else 0
            buf += bytes_len(size, flexible)
            if size:
                out.append(bytes(buf))
                buf = bytearray()
                out.extend(regions)
            if flexible:
                buf += b"\x00"  # partition tagged fields
        if flexible:
            buf += b"\x00"  # topic tagged fields
    if flexible:
        buf += b"\x00"  # response tagged fields
    out.append(bytes(buf))
    return out


def _uvarint_size(value: int) -> int:
    n = 1
    while value > 0x7F:
        value >>= 7
        n += 1
    return n


def _len_size(n: int, flexible: bool) -> int:
    """Size of an array or bytes length prefix of ``n``."""
    return _uvarint_size(n + 1) if flexible else 4


def fetch_response_size(version: int, topics: Sequence[TopicResult]) -> int:
    """The size of ``encode_fetch_response(version, topics)``'s body, computed without writing
    it (what a fetch's quota is charged before the response is built)."""
    flexible = version >= FLEXIBLE_FROM
    tags = 1 if flexible else 0
    partition_fixed = (_PARTITION_V5 if version >= 5 else _PARTITION_V4).size
    partition_fixed += 4 if version >= 11 else 0  # preferred read replica
    null_aborted = len(_NULL_ARRAY[flexible])
    aborted_size = _ABORTED.size + tags
    size = 4 + (6 if version >= 7 else 0) + _len_size(len(topics), flexible) + tags
    for t in topics:
        if version >= TOPIC_IDS_FROM:
            size += 16
        else:
            name = len(t.name.encode())
            size += (_uvarint_size(name + 1) if flexible else 2) + name
        size += _len_size(len(t.partitions), flexible) + tags
        for p in t.partitions:
            size += partition_fixed + tags
            if p.aborted is None:
                size += null_aborted
            else:
                size += _len_size(len(p.aborted), flexible) + aborted_size * len(p.aborted)
            regions = p.regions
            records = sum(r.length for r in regions) if regions else 0
            size += _len_size(records, flexible) + records
    return size
