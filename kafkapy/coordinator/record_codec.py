"""A codec for the records of Kafka's internal topics, driven by a declarative spec.

Kafka writes the keys and values of __consumer_offsets and __transaction_state as an int16
schema version followed by the fields of that version (its "data" message schemas). The
project describes those schemas as data in protocol_specs/ (consumer_offsets.json,
transaction_state.json); this module interprets a spec's field lists, so the specs and the
bytes cannot drift apart. The field notation is documented in the specs' ``$comment``.
"""

from __future__ import annotations

import struct
import uuid
from functools import cache
from typing import Any

from kafkapy.protocol.wire import DecodeError, read_uvarint, uvarint

I8 = struct.Struct(">b")
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
FIXED = {"int8": I8, "int16": I16, "int32": I32, "int64": I64}


@cache
def parse_versions(spec: str) -> tuple[int, int]:
    """'N' -> (N, N); 'N+' -> (N, 32767); 'N-M' -> (N, M)."""
    if spec.endswith("+"):
        return int(spec[:-1]), 32767
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


def in_versions(version: int, spec: str) -> bool:
    lo, hi = parse_versions(spec)
    return lo <= version <= hi


class RecordFormatError(DecodeError):
    """An internal-topic record key or value that does not decode with its spec."""


# -- generic struct codec ----------------------------------------------------------------------


def _flexible_len(out: bytearray, n: int, flexible: bool, fixed: struct.Struct) -> None:
    out += uvarint(n + 1) if flexible else fixed.pack(n)


def _write_value(out: bytearray, f: dict, v: Any, structs: dict, version: int, flex: bool) -> None:
    """One field's value (not its tag header)."""
    t = f["type"]
    if t in FIXED:
        out += FIXED[t].pack(v)
    elif t == "uuid":
        out += v.bytes
    elif t in ("[]int32", "[]string"):
        items = v or []
        _flexible_len(out, len(items), flex, I32)
        for item in items:
            if t == "[]int32":
                out += I32.pack(item)
            else:
                raw = item.encode("utf-8")
                _flexible_len(out, len(raw), flex, I16)
                out += raw
    elif t in ("string", "bytes"):
        if v is None:
            if not f.get("nullable"):
                raise ValueError(f"field {f['name']} is not nullable")
            out += uvarint(0) if flex else (I16 if t == "string" else I32).pack(-1)
            return
        raw = v.encode("utf-8") if t == "string" else bytes(v)
        if t == "string" and not flex and len(raw) > 32767:
            raise ValueError(f"string field {f['name']} longer than 32767 bytes")
        _flexible_len(out, len(raw), flex, I16 if t == "string" else I32)
        out += raw
    elif t.startswith("[]"):
        if v is None and f.get("nullable"):
            out += uvarint(0) if flex else I32.pack(-1)
            return
        items = v or []
        _flexible_len(out, len(items), flex, I32)
        for item in items:
            write_struct(out, structs[t[2:]], structs, version, flex, item)
    elif t in structs:  # a single struct: only as a tagged field (see write_struct)
        write_struct(out, structs[t], structs, version, flex, v)
    else:  # pragma: no cover - the spec test guards the types
        raise ValueError(f"unknown field type {t}")


def write_struct(
    out: bytearray, fields: list[dict], structs: dict, version: int, flexible: bool, values: dict
) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not in_versions(version, f["versions"]):
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
    """An array's item count (negative: null), refused above the bytes left (each item takes
    one byte or more): the bytes may come from a client (JoinGroup metadata, SyncGroup
    assignments)."""
    n, pos = _read_len(buf, pos, flexible, I32)
    if n > len(buf) - pos:
        raise RecordFormatError(f"array {name} of {n} items in {len(buf) - pos} bytes")
    return n, pos


def _read_value(
    buf: memoryview, pos: int, f: dict, structs: dict, version: int, flexible: bool
) -> tuple[Any, int]:
    t, name = f["type"], f["name"]
    if t in FIXED:
        st = FIXED[t]
        return st.unpack_from(buf, pos)[0], pos + st.size
    if t == "uuid":
        if pos + 16 > len(buf):
            raise RecordFormatError(f"truncated field {name}")
        return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16
    if t in ("[]int32", "[]string"):
        n, pos = _read_count(buf, pos, flexible, name)
        items: list[Any] = []
        for _ in range(max(n, 0)):
            if t == "[]int32":
                items.append(I32.unpack_from(buf, pos)[0])
                pos += 4
                continue
            size, pos = _read_len(buf, pos, flexible, I16)
            if size < 0 or pos + size > len(buf):
                raise RecordFormatError(f"bad string in {name}")
            items.append(bytes(buf[pos : pos + size]).decode("utf-8"))
            pos += size
        return items, pos
    if t in ("string", "bytes"):
        n, pos = _read_len(buf, pos, flexible, I16 if t == "string" else I32)
        if n < 0:
            return None, pos
        if pos + n > len(buf):
            raise RecordFormatError(f"truncated field {name}")
        raw = bytes(buf[pos : pos + n])
        return (raw.decode("utf-8") if t == "string" else raw), pos + n
    if t.startswith("[]"):
        n, pos = _read_count(buf, pos, flexible, name)
        if n < 0 and f.get("nullable"):
            return None, pos
        items = []
        for _ in range(max(n, 0)):
            item, pos = read_struct(buf, pos, structs[t[2:]], structs, version, flexible)
            items.append(item)
        return items, pos
    if t in structs:
        return read_struct(buf, pos, structs[t], structs, version, flexible)
    raise RecordFormatError(f"unknown field type {t}")


def read_struct(
    buf: memoryview, pos: int, fields: list[dict], structs: dict, version: int, flexible: bool
) -> tuple[dict, int]:
    values: dict[str, Any] = {}
    by_tag: dict[int, dict] = {}
    try:
        for f in fields:
            name = f["name"]
            if "tagged" in f or not in_versions(version, f["versions"]):
                values[name] = f.get("default")
                if "tagged" in f and in_versions(version, f["versions"]):
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


# -- whole keys and values ---------------------------------------------------------------------


def encode_key(spec: dict, name: str, values: dict) -> bytes:
    """The key ``name`` of ``spec`` (its ``keys`` table) at its write version."""
    k = spec["keys"][name]
    version = k["write_version"]
    out = bytearray(I16.pack(version))
    write_struct(out, k["fields"], {}, version, False, values)
    return bytes(out)


def encode_value(spec: dict, name: str, values: dict, version: int | None = None) -> bytes:
    """The value ``name`` of ``spec`` (its ``values`` table), at its write version by default."""
    v = spec["values"][name]
    version = v["write_version"] if version is None else version
    flexible = in_versions(version, v["flexible"])
    out = bytearray(I16.pack(version))
    write_struct(out, v["fields"], v.get("structs", {}), version, flexible, values)
    return bytes(out)


def decode_value(spec: dict, name: str, data: bytes) -> dict:
    """The fields of value ``name``, in whichever listed version ``data`` carries."""
    v = spec["values"][name]
    buf = memoryview(data)
    if len(buf) < 2:
        raise RecordFormatError(f"{name} too short")
    (version,) = I16.unpack_from(buf, 0)
    if not in_versions(version, v["versions"]):
        raise RecordFormatError(f"unknown {name} version {version}")
    flexible = in_versions(version, v["flexible"])
    values, _ = read_struct(buf, 2, v["fields"], v.get("structs", {}), version, flexible)
    return values


def decode_key(spec: dict, data: bytes) -> tuple[str, dict] | None:
    """(key name, fields) of a key of ``spec``; None for a key version the spec does not list
    (record kinds another coordinator or a newer Kafka writes)."""
    buf = memoryview(data)
    if len(buf) < 2:
        raise RecordFormatError("key too short")
    (version,) = I16.unpack_from(buf, 0)
    for name, k in spec["keys"].items():
        if in_versions(version, k["key_versions"]):
            values, _ = read_struct(buf, 2, k["fields"], {}, version, False)
            return name, values
    return None
