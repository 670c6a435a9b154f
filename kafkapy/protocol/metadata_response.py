"""Metadata response writer (versions 0-13), sans-io.

Written by hand, as the Fetch response is, because a Metadata response is mostly the same bytes
again and again: each topic's partition list changes only when a leader, ISR, epoch, replica set
or the set of live brokers does. The writer is split so the server can cache the expensive part:
``encode_topic_head`` encodes a topic up to and including its partition array (what only
metadata changes can change), ``encode_topic_tail`` what may differ per request (the authorized
operations, v8+, and the tagged fields), and ``encode_metadata_response`` the envelope around
the topic entries. Tagged fields are never set, so every tagged section is empty.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .wire import INT16, INT32, array_len, string, uvarint

FLEXIBLE_FROM = 9
NOT_REQUESTED = -(2**31)  # "authorized operations not requested"
ZERO_UUID = uuid.UUID(int=0)
_NULL_COMPACT = b"\x00"
_NULL_LEGACY = INT16.pack(-1)


class PartitionMetadata(NamedTuple):
    error_code: int
    partition: int
    leader: int
    leader_epoch: int
    replicas: Sequence[int]
    isr: Sequence[int]
    offline: Sequence[int]


class BrokerMetadata(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None


def _nullable_string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return _NULL_COMPACT if flexible else _NULL_LEGACY
    return string(value, flexible)


def _int32_array(values: Sequence[int], flexible: bool) -> bytes:
    return array_len(len(values), flexible) + b"".join(INT32.pack(v) for v in values)


def encode_topic_head(
    version: int,
    error_code: int,
    name: str | None,
    topic_id: uuid.UUID | None,
    is_internal: bool,
    partitions: Iterable[PartitionMetadata],
) -> bytes:
    """A topic entry from its error code through its partition array."""
    flexible = version >= FLEXIBLE_FROM
    out = bytearray(INT16.pack(error_code))
    out += _nullable_string(name, flexible)
    if version >= 10:
        out += (topic_id or ZERO_UUID).bytes
    if version >= 1:
        out += b"\x01" if is_internal else b"\x00"
    parts = list(partitions)
    out += array_len(len(parts), flexible)
    for p in parts:
        out += INT16.pack(p.error_code) + INT32.pack(p.partition) + INT32.pack(p.leader)
        if version >= 7:
            out += INT32.pack(p.leader_epoch)
        out += _int32_array(p.replicas, flexible)
        out += _int32_array(p.isr, flexible)
        if version >= 5:
            out += _int32_array(p.offline, flexible)
        if flexible:
            out += b"\x00"
    return bytes(out)


def encode_topic_tail(version: int, authorized_operations: int = NOT_REQUESTED) -> bytes:
    """What follows a topic's partition array: authorized operations (v8+), tagged fields."""
    if version >= FLEXIBLE_FROM:
        return INT32.pack(authorized_operations) + b"\x00"
    if version >= 8:
        return INT32.pack(authorized_operations)
    return b""


def encode_metadata_response(
    version: int,
    brokers: Iterable[BrokerMetadata],
    cluster_id: str | None,
    controller_id: int,
    topics: Sequence[bytes],
    *,
    cluster_authorized_operations: int = NOT_REQUESTED,
    error_code: int = 0,
    throttle_ms: int = 0,
) -> bytes:
    """The response body; ``topics`` are whole encoded topic entries (head + tail)."""
    flexible = version >= FLEXIBLE_FROM
    out = bytearray()
    if version >= 3:
        out += INT32.pack(throttle_ms)
    bl = list(brokers)
    out += array_len(len(bl), flexible)
    for b in bl:
        out += INT32.pack(b.node_id) + string(b.host, flexible) + INT32.pack(b.port)
        if version >= 1:
            out += _nullable_string(b.rack, flexible)
        if flexible:
            out += b"\x00"
    if version >= 2:
        out += _nullable_string(cluster_id, flexible)
    if version >= 1:
        out += INT32.pack(controller_id)
    out += uvarint(len(topics) + 1) if flexible else INT32.pack(len(topics))
    out += b"".join(topics)
    if 8 <= version <= 10:
        out += INT32.pack(cluster_authorized_operations)
    if version >= 13:
        out += INT16.pack(error_code)
    if flexible:
        out += b"\x00"
    return bytes(out)
