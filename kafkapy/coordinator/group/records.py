"""Keys and values of __consumer_offsets records, encoded as protocol_specs/consumer_offsets.json
describes (Kafka's own byte layout: an int16 version, then the fields of that version).

The spec is data; this module interprets it, so the two cannot drift apart. The public helpers
build the records the coordinator writes (offset commits, group metadata, their tombstones) and
parse whatever is read back while loading a partition.
"""

from __future__ import annotations

import json
import struct
import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

from kafkapy.coordinator import record_codec as codec
from kafkapy.coordinator.record_codec import I16 as _I16
from kafkapy.coordinator.record_codec import I32 as _I32
from kafkapy.coordinator.record_codec import I64 as _I64
from kafkapy.coordinator.record_codec import RecordFormatError, parse_versions
from kafkapy.coordinator.record_codec import read_struct as _read_struct
from kafkapy.coordinator.record_codec import write_struct as _write_struct
from kafkapy.specs import spec_path

SPEC_PATH = spec_path("consumer_offsets.json")

__all__ = ["RecordFormatError", "parse_versions"]


@cache
def spec() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text())


# -- keys and values ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    group: str


@dataclass(frozen=True, slots=True)
class OffsetValue:
    offset: int
    leader_epoch: int  # -1: none
    metadata: str
    commit_timestamp: int
    expire_timestamp: int  # -1: none (only value version 1 carries one)


@dataclass(slots=True)
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: list[MemberRecord]


def _encode_key(name: str, values: dict) -> bytes:
    return codec.encode_key(spec(), name, values)


def _encode_value(name: str, values: dict, version: int | None = None) -> bytes:
    return codec.encode_value(spec(), name, values, version)


def _decode_value(name: str, data: bytes) -> dict:
    return codec.decode_value(spec(), name, data)


# Offset commits are the hot records (one key and value per partition per commit): they are
# packed directly in the versions the spec writes (OffsetCommitKey v1, OffsetCommitValue v3 and,
# with an expire timestamp, v1), which tests/test_group_records.py checks against the spec-driven
# writer.
_VALUE_V3 = struct.Struct(">hqi")  # version, offset, leader epoch
_VALUE_V1 = struct.Struct(">hq")  # version, offset
_KEY_V1 = _I16.pack(1)


def _string16(s: str) -> bytes:
    raw = s.encode("utf-8")
    return _I16.pack(len(raw)) + raw


def offset_key(group: str, topic: str, partition: int) -> bytes:
    return _KEY_V1 + _string16(group) + _string16(topic) + _I32.pack(partition)


def offset_key_from_spec(group: str, topic: str, partition: int) -> bytes:
    """``offset_key`` by the spec-driven writer (the reference the fast path is checked
    against)."""
    return _encode_key("OffsetCommitKey", {"group": group, "topic": topic, "partition": partition})


def group_key(group: str) -> bytes:
    return _encode_key("GroupMetadataKey", {"group": group})


def offset_value(v: OffsetValue) -> bytes:
    metadata = _string16(v.metadata or "")
    if v.expire_timestamp >= 0:
        return (
            _VALUE_V1.pack(1, v.offset)
            + metadata
            + _I64.pack(v.commit_timestamp)
            + _I64.pack(v.expire_timestamp)
        )
    return _VALUE_V3.pack(3, v.offset, v.leader_epoch) + metadata + _I64.pack(v.commit_timestamp)


def offset_value_from_spec(v: OffsetValue) -> bytes:
    """``offset_value`` by the spec-driven writer (the reference of the fast path)."""
    values = spec()["values"]["OffsetCommitValue"]
    version = values["write_version_with_expire_timestamp"] if v.expire_timestamp >= 0 else None
    return _encode_value(
        "OffsetCommitValue",
        {
            "offset": v.offset,
            "leader_epoch": v.leader_epoch,
            "metadata": v.metadata,
            "commit_timestamp": v.commit_timestamp,
            "expire_timestamp": v.expire_timestamp,
        },
        version,
    )


def group_value(v: GroupValue) -> bytes:
    return _encode_value(
        "GroupMetadataValue",
        {
            "protocol_type": v.protocol_type,
            "generation": v.generation,
            "protocol": v.protocol,
            "leader": v.leader,
            "current_state_timestamp": v.current_state_timestamp,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "rebalance_timeout": m.rebalance_timeout,
                    "session_timeout": m.session_timeout,
                    "subscription": m.subscription,
                    "assignment": m.assignment,
                }
                for m in v.members
            ],
        },
    )


def decode_key(data: bytes) -> OffsetKey | GroupKey | ConsumerKey | None:
    """The key of a record; None for record kinds this coordinator does not know (share and
    streams groups, transactions)."""
    got = codec.decode_key(spec(), data)
    if got is None:
        return None
    name, values = got
    if name == "OffsetCommitKey":
        return OffsetKey(values["group"], values["topic"], values["partition"])
    if name == "GroupMetadataKey":
        return GroupKey(values["group"])
    return ConsumerKey(name, values["group"], values.get("member_id"))


# -- consumer-protocol (KIP-848) group records ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerKey:
    """A key of a consumer-protocol group record: ``kind`` is the spec's key name."""

    kind: str
    group: str
    member_id: str | None = None


GROUP_EPOCH = "ConsumerGroupMetadataKey"
PARTITION_METADATA = "ConsumerGroupPartitionMetadataKey"
MEMBER_METADATA = "ConsumerGroupMemberMetadataKey"
TARGET_EPOCH = "ConsumerGroupTargetAssignmentMetadataKey"
TARGET_MEMBER = "ConsumerGroupTargetAssignmentMemberKey"
CURRENT_ASSIGNMENT = "ConsumerGroupCurrentMemberAssignmentKey"
MEMBER_KINDS = (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER_METADATA)  # tombstone order
GROUP_KINDS = (TARGET_EPOCH, PARTITION_METADATA, GROUP_EPOCH)


def consumer_key(kind: str, group: str, member_id: str | None = None) -> bytes:
    values = {"group": group}
    if member_id is not None:
        values["member_id"] = member_id
    return _encode_key(kind, values)


def consumer_value(kind: str, values: dict) -> bytes:
    return _encode_value(spec()["keys"][kind]["value"], values)


def decode_consumer_value(kind: str, data: bytes) -> dict:
    return _decode_value(spec()["keys"][kind]["value"], data)


def topic_partitions(assignment: dict[uuid.UUID, set[int]]) -> list[dict]:
    return [
        {"topic_id": t, "partitions": sorted(ps)}
        for t, ps in sorted(assignment.items(), key=lambda kv: str(kv[0]))
        if ps
    ]


def assignment_from(items: list[dict] | None) -> dict[uuid.UUID, set[int]]:
    return {i["topic_id"]: set(i["partitions"]) for i in items or () if i["partitions"]}


def decode_offset_value(data: bytes) -> OffsetValue:
    d = _decode_value("OffsetCommitValue", data)
    return OffsetValue(
        d["offset"],
        d["leader_epoch"] if d["leader_epoch"] is not None else -1,
        d["metadata"] or "",
        d["commit_timestamp"],
        d["expire_timestamp"] if d["expire_timestamp"] is not None else -1,
    )


def decode_group_value(data: bytes) -> GroupValue:
    d = _decode_value("GroupMetadataValue", data)
    return GroupValue(
        d["protocol_type"] or "",
        d["generation"],
        d["protocol"],
        d["leader"],
        d["current_state_timestamp"],
        [
            MemberRecord(
                m["member_id"],
                m["group_instance_id"],
                m["client_id"],
                m["client_host"],
                m["rebalance_timeout"],
                m["session_timeout"],
                m["subscription"] or b"",
                m["assignment"] or b"",
            )
            for m in d["members"]
        ],
    )


def subscribed_topics(metadata: bytes) -> set[str] | None:
    """The topics of a 'consumer' protocol subscription; None if it does not parse."""
    buf = memoryview(metadata)
    try:
        pos = 2  # int16 version
        (n,) = _I32.unpack_from(buf, pos)
        pos += 4
        if n < 0:
            return None
        topics = set()
        for _ in range(n):
            (size,) = _I16.unpack_from(buf, pos)
            pos += 2
            if size < 0 or pos + size > len(buf):
                return None
            topics.add(bytes(buf[pos : pos + size]).decode("utf-8"))
            pos += size
        return topics
    except (struct.error, UnicodeDecodeError):
        return None


# -- the 'consumer' embedded protocol (JoinGroup metadata, SyncGroup assignments) --------------


def encode_embedded(name: str, values: dict, version: int) -> bytes:
    """A consumer_protocol message (Subscription or Assignment) at ``version``, with its int16
    version header (clamped to the highest version the spec lists)."""
    entry = spec()["consumer_protocol"][name]
    version = min(max(version, 0), parse_versions(entry["versions"])[1])
    out = bytearray(_I16.pack(version))
    _write_struct(out, entry["fields"], entry.get("structs", {}), version, False, values)
    return bytes(out)


def decode_embedded(name: str, data: bytes) -> tuple[int, dict]:
    """(version, fields) of a consumer_protocol message; a version above the highest listed is
    read as the highest. Raises RecordFormatError on bytes that do not decode."""
    entry = spec()["consumer_protocol"][name]
    buf = memoryview(data)
    if len(buf) < 2:
        raise RecordFormatError(f"{name} too short")
    (version,) = _I16.unpack_from(buf, 0)
    if version < 0:
        raise RecordFormatError(f"unsupported {name} version {version}")
    read_as = min(version, parse_versions(entry["versions"])[1])
    values, _ = _read_struct(buf, 2, entry["fields"], entry.get("structs", {}), read_as, False)
    return version, values
