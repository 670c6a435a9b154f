"""Fetch v12 as a follower speaks it (the replica fetchers' hot path), sans-io.

A follower sends one Fetch request per round and receives up to replica.fetch.response.max.bytes
of record batches back. Going through the generic entity reader would copy the records region
into a new ``bytes`` and build an entity per partition; here the request body is written by hand
and the response is read in place: each partition's records are a ``memoryview`` into the
received frame, so record bytes are copied once in user space (socket to frame buffer) before
they are written to the log.

Request v12 (flexible): replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level,
session_id, session_epoch (KIP-227: replication/fetch_session_handler.py), topics by name with
(partition, current_leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset,
partition_max_bytes), forgotten topics, rack id, and no tagged fields (cluster_id, tag 0, left
null). Response v12: the per-partition tagged fields
(diverging epoch, current leader, snapshot id) are skipped; aborted transactions are skipped (a
follower appends control batches as they are).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from .wire import INT16, INT32, DecodeError, read_uvarint, skip_tagged_fields, uvarint

FETCH_KEY = 1
FETCH_VERSION = 12

_HEAD = struct.Struct(">iiiibii")  # replica, max_wait, min_bytes, max_bytes, iso, session, epoch
_PART = struct.Struct(">iiqiqi")  # partition, leader epoch, offset, last epoch, start, max bytes
_RESP_HEAD = struct.Struct(">ihi")  # throttle, error, session
_PART_HEAD = struct.Struct(">ihqqq")  # index, error, hw, lso, log start
_ABORTED_SIZE = 8 + 8 + 1  # producer id, first offset, empty tagged fields


@dataclass(slots=True)
class FetchPartitionRequest:
    """One partition of a follower's fetch."""

    partition: int
    current_leader_epoch: int
    fetch_offset: int
    log_start_offset: int
    partition_max_bytes: int
    last_fetched_epoch: int = -1


@dataclass(slots=True)
class FetchedPartition:
    """One partition of a Fetch v12 response; ``records`` is a view into the response frame
    (None when the response carries no records)."""

    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    records: memoryview | None


def _compact_string(s: str) -> bytes:
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def encode_replica_fetch(
    replica_id: int,
    max_wait_ms: int,
    min_bytes: int,
    max_bytes: int,
    topics: Sequence[tuple[str, Sequence[FetchPartitionRequest]]],
    *,
    session_id: int = 0,
    session_epoch: int = -1,
    forgotten: Sequence[tuple[str, Sequence[int]]] = (),
) -> bytes:
    """The body of a Fetch v12 request from replica ``replica_id`` (no rack); without a session
    by default (id 0, epoch -1)."""
    out = [_HEAD.pack(replica_id, max_wait_ms, min_bytes, max_bytes, 0, session_id, session_epoch)]
    out.append(uvarint(len(topics) + 1))
    for name, parts in topics:
        out.append(_compact_string(name))
        out.append(uvarint(len(parts) + 1))
        for p in parts:
            out.append(
                _PART.pack(
                    p.partition,
                    p.current_leader_epoch,
                    p.fetch_offset,
                    p.last_fetched_epoch,
                    p.log_start_offset,
                    p.partition_max_bytes,
                )
            )
            out.append(b"\x00")  # partition tagged fields
        out.append(b"\x00")  # topic tagged fields
    out.append(uvarint(len(forgotten) + 1))
    for name, parts in forgotten:
        out.append(_compact_string(name))
        out.append(uvarint(len(parts) + 1))
        out.append(b"".join(INT32.pack(p) for p in parts))
        out.append(b"\x00")  # forgotten topic tagged fields
    out.append(b"\x01")  # rack_id: ""
    out.append(b"\x00")  # request tagged fields
    return b"".join(out)


def _count(buf: memoryview, pos: int, what: str) -> tuple[int, int]:
    """A compact array count, checked against the bytes left (each item takes at least one)."""
    n, pos = read_uvarint(buf, pos)
    if n - 1 > len(buf) - pos:
        raise ValueError(f"{n - 1} {what} in {len(buf) - pos} bytes of a Fetch response")
    return n - 1, pos


def decode_replica_fetch_response(
    buf: memoryview, pos: int = 0
) -> tuple[int, int, list[tuple[str, list[FetchedPartition]]]]:
    """Read a Fetch v12 response body at ``pos`` of ``buf`` (after the response header).

    Returns (top-level error code, session id, [(topic, partitions)]); records are views into
    ``buf``.
    Raises ValueError on a malformed body; every count and length is checked against the bytes
    left before it is used."""
    try:
        return _decode_response(buf, pos)
    except (DecodeError, struct.error) as e:
        raise ValueError(f"malformed Fetch response: {e}") from None


def _decode_response(
    buf: memoryview, pos: int
) -> tuple[int, int, list[tuple[str, list[FetchedPartition]]]]:
    end = len(buf)
    _throttle, error, session = _RESP_HEAD.unpack_from(buf, pos)
    pos += _RESP_HEAD.size
    n_topics, pos = _count(buf, pos, "topics")
    topics: list[tuple[str, list[FetchedPartition]]] = []
    for _ in range(n_topics):
        name_len, pos = read_uvarint(buf, pos)
        if name_len < 1 or pos + name_len - 1 > end:
            raise ValueError("null or truncated topic name in a Fetch response")
        name = bytes(buf[pos : pos + name_len - 1]).decode()
        pos += name_len - 1
        n_parts, pos = _count(buf, pos, "partitions")
        parts: list[FetchedPartition] = []
        for _ in range(n_parts):
            index, err, hw, lso, start = _PART_HEAD.unpack_from(buf, pos)
            pos += _PART_HEAD.size
            n_aborted, pos = _count(buf, pos, "aborted transactions")
            pos += max(n_aborted, 0) * _ABORTED_SIZE
            pos += 4  # preferred read replica
            size, pos = read_uvarint(buf, pos)
            records = None  # null or empty
            if size > 1:
                records_end = pos + size - 1
                if records_end > end:
                    raise ValueError("records run past the end of the Fetch response")
                records = buf[pos:records_end]
                pos = records_end
            pos = skip_tagged_fields(buf, pos)
            parts.append(FetchedPartition(index, err, hw, lso, start, records))
        pos = skip_tagged_fields(buf, pos)
        topics.append((name, parts))
    return error, session, topics


def request_header_v2(api_key: int, version: int, correlation_id: int, client_id: bytes) -> bytes:
    """A flexible request header (v2): key, version, correlation id, client id, no tags."""
    return (
        INT16.pack(api_key)
        + INT16.pack(version)
        + INT32.pack(correlation_id)
        + INT16.pack(len(client_id))
        + client_id
        + b"\x00"
    )
