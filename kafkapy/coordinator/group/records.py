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

from kafkapy.protocol.wire import DecodeError, read_uvarint, uvarint
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


def _flexible_len(out: bytearray, n: int, flexible: bool, fixed: struct.Struct) -> None:
    out += uvarint(n + 1) if flexible else fixed.pack(n)


def _write_value(out: bytearray, f: dict, v: Any, structs: dict, version: int, flex: bool) -> None:
    """One field's value (not its tag header)."""
    t = f["type"]
    if t in _FIXED:
        out += _FIXED[t].pack(v)
    elif t == "uuid":
        out += v.bytes
    elif t in ("[]int32", "[]string"):
        items = v or []
        _flexible_len(out, len(items), flex, _I32)
        for item in items:
            if t == "[]int32":
                out += _I32.pack(item)
            else:
                raw = item.encode("utf-8")
                _flexible_len(out, len(raw), flex, _I16)
                out += raw
    elif t in ("string", "bytes"):
        if v is None:
            if not f.get("nullable"):
                raise ValueError(f"field {f['name']} is not nullable")
            out += uvarint(0) if flex else (_I16 if t == "string" else _I32).pack(-1)
            return
        raw = v.encode("utf-8") if t == "string" else bytes(v)
        if t == "string" and not flex and len(raw) > 32767:
            raise ValueError(f"string field {f['name']} longer than 32767 bytes")
        _flexible_len(out, len(raw), flex, _I16 if t == "string" else _I32)
        out += raw
    elif t.startswith("[]"):
        items = v or []
        _flexible_len(out, len(items), flex, _I32)
        for item in items:
            _write_struct(out, structs[t[2:]], structs, version, flex, item)
    elif t in structs:  # a single struct: only as a tagged field (see _write_struct)
        _write_struct(out, structs[t], structs, version, flex, v)
    else:  # pragma: no cover - the spec test guards the types
        raise ValueError(f"unknown field type {t}")


def _write_struct(
    out: bytearray, fields: list[dict], structs: dict, version: int, flexible: bool, values: dict
) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not _in(version, f["versions"]):
            continue
        v = values.get(f["name"], f.get("default"))
        if "tagged" in f:
            if flexible and v is not None:  # tagged fields are written when not null
                data = bytearray(uvarint(1) if f.get("nullable") else b"")
                _write_value(data, f, v, structs, version, flexible)
                tagged.append((f["tagged"], bytes(data)))
            continue
        _write_value(out, f, v, structs, version, flexible)
    if flexible:
        out += uvarint(len(tagged))
        for tag, data in sorted(tagged):
            out += uvarint(tag) + uvarint(len(data)) + data


def _read_len(buf: memoryview, pos: int, flexible: bool, fixed: struct.Struct) -> tuple[int, int]:
    if flexible:
        n, pos = read_uvarint(buf, pos)
        return n - 1, pos
    (n,) = fixed.unpack_from(buf, pos)
    return n, pos + fixed.size


def _read_count(buf: memoryview, pos: int, flexible: bool, name: str) -> tuple[int, int]:
    """An array's item count (0 for null), refused above the bytes left (each item takes one
    byte or more): the bytes may come from a client (JoinGroup metadata, SyncGroup
    assignments)."""
    n, pos = _read_len(buf, pos, flexible, _I32)
    if n > len(buf) - pos:
        raise RecordFormatError(f"array {name} of {n} items in {len(buf) - pos} bytes")
    return max(n, 0), pos


def _read_value(
    buf: memoryview, pos: int, f: dict, structs: dict, version: int, flexible: bool
) -> tuple[Any, int]:
    t, name = f["type"], f["name"]
    if t in _FIXED:
        st = _FIXED[t]
        return st.unpack_from(buf, pos)[0], pos + st.size
    if t == "uuid":
        if pos + 16 > len(buf):
            raise RecordFormatError(f"truncated field {name}")
        return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16
    if t in ("[]int32", "[]string"):
        n, pos = _read_count(buf, pos, flexible, name)
        items: list[Any] = []
        for _ in range(n):
            if t == "[]int32":
                items.append(_I32.unpack_from(buf, pos)[0])
                pos += 4
                continue
            size, pos = _read_len(buf, pos, flexible, _I16)
            if size < 0 or pos + size > len(buf):
                raise RecordFormatError(f"bad string in {name}")
            items.append(bytes(buf[pos : pos + size]).decode("utf-8"))
            pos += size
        return items, pos
    if t in ("string", "bytes"):
        n, pos = _read_len(buf, pos, flexible, _I16 if t == "string" else _I32)
        if n < 0:
            return None, pos
        if pos + n > len(buf):
            raise RecordFormatError(f"truncated field {name}")
        raw = bytes(buf[pos : pos + n])
        return (raw.decode("utf-8") if t == "string" else raw), pos + n
    if t.startswith("[]"):
        n, pos = _read_count(buf, pos, flexible, name)
        items = []
        for _ in range(n):
            item, pos = _read_struct(buf, pos, structs[t[2:]], structs, version, flexible)
            items.append(item)
        return items, pos
    if t in structs:
        return _read_struct(buf, pos, structs[t], structs, version, flexible)
    raise RecordFormatError(f"unknown field type {t}")


def _read_struct(
    buf: memoryview, pos: int, fields: list[dict], structs: dict, version: int, flexible: bool
) -> tuple[dict, int]:
    values: dict[str, Any] = {}
    by_tag: dict[int, dict] = {}
    try:
        for f in fields:
            name = f["name"]
            if "tagged" in f or not _in(version, f["versions"]):
                values[name] = f.get("default")
                if "tagged" in f and _in(version, f["versions"]):
                    by_tag[f["tagged"]] = f
                continue
            values[name], pos = _read_value(buf, pos, f, structs, version, flexible)
        if flexible:
            count, pos = read_uvarint(buf, pos)
            for _ in range(count):
                tag, pos = read_uvarint(buf, pos)
                size, pos = read_uvarint(buf, pos)
                end = pos + size
                if end > len(buf):
                    raise RecordFormatError("truncated tagged field")
                f = by_tag.get(tag)
                if f is not None:  # unknown tags are skipped
                    start = pos
                    if f.get("nullable"):
                        present, start = read_uvarint(buf, start)
                        if present <= 0:
                            pos = end
                            continue
                    values[f["name"]], _ = _read_value(
                        buf[:end], start, f, structs, version, flexible
                    )
                pos = end
    except (struct.error, UnicodeDecodeError, DecodeError) as e:
        if isinstance(e, RecordFormatError):
            raise
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
