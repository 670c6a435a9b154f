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

from kafkapy.protocol.wire import DecodeError, read_uvarint, skip_tagged_fields, uvarint
from kafkapy.specs import spec_path

SPEC_PATH = spec_path("consumer_offsets.json")

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_FIXED = {"int8": _I8, "int16": _I16, "int32": _I32, "int64": _I64}


def parse_versions(spec: str) -> tuple[int, int]:
    """'N' -> (N, N); 'N+' -> (N, 32767); 'N-M' -> (N, M)."""
    if spec.endswith("+"):
        return int(spec[:-1]), 32767
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


def _in(version: int, spec: str) -> bool:
    lo, hi = parse_versions(spec)
    return lo <= version <= hi


@cache
def spec() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text())


class RecordFormatError(DecodeError):
    """A __consumer_offsets key or value that does not decode with the spec."""


# -- generic struct codec ----------------------------------------------------------------------


def _write_struct(
    out: bytearray, fields: list[dict], structs: dict, version: int, flexible: bool, values: dict
) -> None:
    for f in fields:
        if "tagged" in f or not _in(version, f["versions"]):
            continue  # kafkapy writes no tagged fields
        t = f["type"]
        v = values.get(f["name"], f.get("default"))
        if t in _FIXED:
            out += _FIXED[t].pack(v)
        elif t == "uuid":
            out += v.bytes
        elif t in ("[]int32", "[]string"):
            items = v or []
            out += uvarint(len(items) + 1) if flexible else _I32.pack(len(items))
            for item in items:
                if t == "[]int32":
                    out += _I32.pack(item)
                else:
                    raw = item.encode("utf-8")
                    out += uvarint(len(raw) + 1) if flexible else _I16.pack(len(raw))
                    out += raw
        elif t in ("string", "bytes"):
            if v is None:
                if not f.get("nullable"):
                    raise ValueError(f"field {f['name']} is not nullable")
                out += uvarint(0) if flexible else _I16.pack(-1)
                continue
            raw = v.encode("utf-8") if t == "string" else bytes(v)
            if flexible:
                out += uvarint(len(raw) + 1)
            elif t == "string":
                if len(raw) > 32767:
                    raise ValueError(f"string field {f['name']} longer than 32767 bytes")
                out += _I16.pack(len(raw))
            else:
                out += _I32.pack(len(raw))
            out += raw
        elif t.startswith("[]"):
            sub = structs[t[2:]]
            items = v or []
            out += uvarint(len(items) + 1) if flexible else _I32.pack(len(items))
            for item in items:
                _write_struct(out, sub, structs, version, flexible, item)
        else:  # pragma: no cover - the spec test guards the types
            raise ValueError(f"unknown field type {t}")
    if flexible:
        out += uvarint(0)  # no tagged fields


def _read_struct(
    buf: memoryview, pos: int, fields: list[dict], structs: dict, version: int, flexible: bool
) -> tuple[dict, int]:
    values: dict[str, Any] = {}
    try:
        for f in fields:
            name = f["name"]
            if "tagged" in f or not _in(version, f["versions"]):
                values[name] = f.get("default")
                continue  # tagged fields are skipped with the tag section
            t = f["type"]
            if t in _FIXED:
                st = _FIXED[t]
                (values[name],) = st.unpack_from(buf, pos)
                pos += st.size
            elif t == "uuid":
                if pos + 16 > len(buf):
                    raise RecordFormatError(f"truncated field {name}")
                values[name] = uuid.UUID(bytes=bytes(buf[pos : pos + 16]))
                pos += 16
            elif t in ("[]int32", "[]string"):
                if flexible:
                    n, pos = read_uvarint(buf, pos)
                    n -= 1
                else:
                    (n,) = _I32.unpack_from(buf, pos)
                    pos += 4
                items: list[Any] = []
                for _ in range(max(n, 0)):
                    if t == "[]int32":
                        (x,) = _I32.unpack_from(buf, pos)
                        pos += 4
                        items.append(x)
                    else:
                        if flexible:
                            size, pos = read_uvarint(buf, pos)
                            size -= 1
                        else:
                            (size,) = _I16.unpack_from(buf, pos)
                            pos += 2
                        if size < 0 or pos + size > len(buf):
                            raise RecordFormatError(f"bad string in {name}")
                        items.append(bytes(buf[pos : pos + size]).decode("utf-8"))
                        pos += size
                values[name] = items
            elif t in ("string", "bytes"):
                if flexible:
                    n, pos = read_uvarint(buf, pos)
                    n -= 1
                elif t == "string":
                    (n,) = _I16.unpack_from(buf, pos)
                    pos += 2
                else:
                    (n,) = _I32.unpack_from(buf, pos)
                    pos += 4
                if n < 0:
                    values[name] = None
                    continue
                if pos + n > len(buf):
                    raise RecordFormatError(f"truncated field {name}")
                raw = bytes(buf[pos : pos + n])
                pos += n
                values[name] = raw.decode("utf-8") if t == "string" else raw
            elif t.startswith("[]"):
                if flexible:
                    n, pos = read_uvarint(buf, pos)
                    n -= 1
                else:
                    (n,) = _I32.unpack_from(buf, pos)
                    pos += 4
                items = []
                for _ in range(max(n, 0)):
                    item, pos = _read_struct(buf, pos, structs[t[2:]], structs, version, flexible)
                    items.append(item)
                values[name] = items
            else:
                raise RecordFormatError(f"unknown field type {t}")
        if flexible:
            pos = skip_tagged_fields(buf, pos)
    except (struct.error, UnicodeDecodeError) as e:
        raise RecordFormatError(str(e)) from None
    return values, pos


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
    k = spec()["keys"][name]
    version = k["write_version"]
    out = bytearray(_I16.pack(version))
    _write_struct(out, k["fields"], {}, version, False, values)
    return bytes(out)


def _encode_value(name: str, values: dict, version: int | None = None) -> bytes:
    v = spec()["values"][name]
    version = v["write_version"] if version is None else version
    flexible = _in(version, v["flexible"])
    out = bytearray(_I16.pack(version))
    _write_struct(out, v["fields"], v.get("structs", {}), version, flexible, values)
    return bytes(out)


def _decode_value(name: str, data: bytes) -> dict:
    v = spec()["values"][name]
    buf = memoryview(data)
    if len(buf) < 2:
        raise RecordFormatError(f"{name} too short")
    (version,) = _I16.unpack_from(buf, 0)
    if not _in(version, v["versions"]):
        raise RecordFormatError(f"unknown {name} version {version}")
    flexible = _in(version, v["flexible"])
    values, _ = _read_struct(buf, 2, v["fields"], v.get("structs", {}), version, flexible)
    return values


def offset_key(group: str, topic: str, partition: int) -> bytes:
    return _encode_key("OffsetCommitKey", {"group": group, "topic": topic, "partition": partition})


def group_key(group: str) -> bytes:
    return _encode_key("GroupMetadataKey", {"group": group})


def offset_value(v: OffsetValue) -> bytes:
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
    buf = memoryview(data)
    if len(buf) < 2:
        raise RecordFormatError("key too short")
    (version,) = _I16.unpack_from(buf, 0)
    for name, k in spec()["keys"].items():
        if _in(version, k["key_versions"]):
            values, _ = _read_struct(buf, 2, k["fields"], {}, version, False)
            if name == "OffsetCommitKey":
                return OffsetKey(values["group"], values["topic"], values["partition"])
            if name == "GroupMetadataKey":
                return GroupKey(values["group"])
            return ConsumerKey(name, values["group"], values.get("member_id"))
    return None


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
