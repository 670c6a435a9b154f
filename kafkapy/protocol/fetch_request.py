"""Fetch request reader (versions 4-18), sans-io.

Every consumer and follower sends Fetch requests all the time, most of them with nothing new to
return (long polls), so the request is read by hand, as Produce is, rather than by kio's generic
reader behind the bounds guard. The reader is bounded the same way: every length and count is
checked against the bytes left (protocol/wire.py's readers), unknown tagged fields are skipped
(KIP-482), a truncated body raises ``DecodeError`` (the server closes the connection).

Layout (Kafka's FetchRequest schema; flexible from v12)::

    replica_id int32 (v4-14), max_wait_ms int32, min_bytes int32, max_bytes int32,
    isolation_level int8, session_id int32 (v7+), session_epoch int32 (v7+),
    [topic: name string (v4-12) | topic_id uuid (v13+),
     [partition: index int32, current_leader_epoch int32 (v9+), fetch_offset int64,
      last_fetched_epoch int32 (v12+), log_start_offset int64 (v5+), partition_max_bytes int32]],
    forgotten_topics_data (v7+) [topic: name | topic_id, [partition int32]], rack_id string (v11+)
    tagged: cluster_id (tag 0, v12+), replica_state (tag 1, v15+: replica_id int32,
    replica_epoch int64); per partition replica_directory_id (tag 0, v17+) and the follower's
    high_watermark (tag 1, v18+), both skipped: they serve KRaft replication only

Attribute names follow kio's entities (``topic``, ``topic_id``, ``partitions``, ``partition``,
``fetch_offset`` ...), so code written for either reads both; the zero topic id reads as None,
as kio reads it.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

from .wire import (
    DecodeError,
    need,
    read_array_len,
    read_string,
    read_uvarint,
    skip_tags,
)

MIN_VERSION = 4
MAX_VERSION = 18
FLEXIBLE_FROM = 12
TOPIC_IDS_FROM = 13
ZERO_UUID_BYTES = bytes(16)

_HEAD_V4 = struct.Struct(">iiiib")  # replica_id, max_wait_ms, min_bytes, max_bytes, isolation
_HEAD_V7 = struct.Struct(">iiiibii")  # ... session_id, session_epoch
_HEAD_V15 = struct.Struct(">iiibii")  # v15+: no replica_id
_REPLICA_STATE = struct.Struct(">iq")
_P_V4 = struct.Struct(">iqi")  # partition, fetch_offset, partition_max_bytes
_P_V5 = struct.Struct(">iqqi")  # partition, fetch_offset, log_start_offset, max_bytes
_P_V9 = struct.Struct(">iiqqi")  # partition, current_leader_epoch, fetch_offset, log_start, max
_P_V12 = struct.Struct(">iiqiqi")  # ... last_fetched_epoch between fetch_offset and log_start


@dataclass(slots=True)
class FetchPartition:
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1


@dataclass(slots=True)
class FetchTopic:
    topic: str | None  # None from v13 (topics by id)
    topic_id: uuid.UUID | None  # None up to v12, and for the zero id
    partitions: list[FetchPartition] = field(default_factory=list)


@dataclass(slots=True)
class ForgottenTopic:
    topic: str | None
    topic_id: uuid.UUID | None
    partitions: list[int]


@dataclass(slots=True)
class ReplicaState:
    replica_id: int = -1
    replica_epoch: int = -1


@dataclass(slots=True)
class FetchRequest:
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int = 0
    session_epoch: int = -1
    topics: list[FetchTopic] = field(default_factory=list)
    forgotten_topics_data: list[ForgottenTopic] = field(default_factory=list)
    rack_id: str = ""
    replica_state: ReplicaState | None = None  # v15+, when the follower sent it
    cluster_id: str | None = None


def _topic_id(buf, pos: int, n: int) -> tuple[uuid.UUID | None, int]:
    end = need(pos, 16, n)
    raw = bytes(buf[pos:end])
    return (None if raw == ZERO_UUID_BYTES else uuid.UUID(bytes=raw)), end


def _partition(buf, pos: int, n: int, version: int) -> tuple[FetchPartition, int]:
    if version >= 12:
        end = need(pos, _P_V12.size, n)
        p, cle, off, lfe, start, mx = _P_V12.unpack_from(buf, pos)
        return FetchPartition(p, off, mx, cle, lfe, start), end
    if version >= 9:
        end = need(pos, _P_V9.size, n)
        p, cle, off, start, mx = _P_V9.unpack_from(buf, pos)
        return FetchPartition(p, off, mx, cle, -1, start), end
    if version >= 5:
        end = need(pos, _P_V5.size, n)
        p, off, start, mx = _P_V5.unpack_from(buf, pos)
        return FetchPartition(p, off, mx, -1, -1, start), end
    end = need(pos, _P_V4.size, n)
    p, off, mx = _P_V4.unpack_from(buf, pos)
    return FetchPartition(p, off, mx), end


def _request_tags(buf, pos: int, n: int, req: FetchRequest, version: int) -> int:
    """The request's tagged fields: cluster_id (0) and, from v15, replica_state (1)."""
    count, pos = read_uvarint(buf, pos)
    if count * 2 > n - pos:
        raise DecodeError(f"{count} tagged fields in {n - pos} bytes")
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        end = need(pos, size, n)
        if tag == 0:
            cluster_id, at = read_string(buf, pos, end, True, True)
            if at != end:
                raise DecodeError("cluster_id tag longer than its string")
            req.cluster_id = cluster_id
        elif tag == 1 and version >= 15:
            if size < _REPLICA_STATE.size:
                raise DecodeError("replica_state tag too short")
            replica_id, epoch = _REPLICA_STATE.unpack_from(buf, pos)
            at = skip_tags(buf, pos + _REPLICA_STATE.size, end)
            if at != end:
                raise DecodeError("replica_state tag longer than its fields")
            req.replica_state = ReplicaState(replica_id, epoch)
        pos = end  # unknown tags are skipped
    return pos


def parse_fetch_request(frame, body_offset: int, version: int) -> FetchRequest:
    """Read a Fetch request body (``frame[body_offset:]``) of ``version``."""
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise DecodeError(f"fetch version {version} is not read here")
    flexible = version >= FLEXIBLE_FROM
    by_id = version >= TOPIC_IDS_FROM
    n = len(frame)
    pos = body_offset
    if version >= 15:
        pos = need(pos, _HEAD_V15.size, n)
        wait, min_b, max_b, iso, sid, sepoch = _HEAD_V15.unpack_from(frame, pos - _HEAD_V15.size)
        req = FetchRequest(-1, wait, min_b, max_b, iso, sid, sepoch)
    elif version >= 7:
        pos = need(pos, _HEAD_V7.size, n)
        rid, wait, min_b, max_b, iso, sid, sepoch = _HEAD_V7.unpack_from(
            frame, pos - _HEAD_V7.size
        )
        req = FetchRequest(rid, wait, min_b, max_b, iso, sid, sepoch)
    else:
        pos = need(pos, _HEAD_V4.size, n)
        rid, wait, min_b, max_b, iso = _HEAD_V4.unpack_from(frame, pos - _HEAD_V4.size)
        req = FetchRequest(rid, wait, min_b, max_b, iso)
    ntopics, pos = read_array_len(frame, pos, n, flexible)
    topics = req.topics
    for _ in range(ntopics):
        if by_id:
            name, (tid, pos) = None, _topic_id(frame, pos, n)
        else:
            tid, (name, pos) = None, read_string(frame, pos, n, flexible, False)
        ft = FetchTopic(name, tid)
        nparts, pos = read_array_len(frame, pos, n, flexible)
        parts = ft.partitions
        for _ in range(nparts):
            fp, pos = _partition(frame, pos, n, version)
            parts.append(fp)
            if flexible:
                pos = skip_tags(frame, pos, n)
        if flexible:
            pos = skip_tags(frame, pos, n)
        topics.append(ft)
    if version >= 7:
        nforgotten, pos = read_array_len(frame, pos, n, flexible)
        for _ in range(nforgotten):
            if by_id:
                name, (tid, pos) = None, _topic_id(frame, pos, n)
            else:
                tid, (name, pos) = None, read_string(frame, pos, n, flexible, False)
            count, pos = read_array_len(frame, pos, n, flexible)
            end = need(pos, 4 * count, n)
            forgotten = list(struct.unpack_from(f">{count}i", frame, pos)) if count else []
            pos = end
            if flexible:
                pos = skip_tags(frame, pos, n)
            req.forgotten_topics_data.append(ForgottenTopic(name, tid, forgotten))
    if version >= 11:
        rack, pos = read_string(frame, pos, n, flexible, False)
        req.rack_id = rack or ""
    if flexible:
        pos = _request_tags(frame, pos, n, req, version)
    if pos != n:
        raise DecodeError(f"{n - pos} bytes after the fetch request body")
    return req

