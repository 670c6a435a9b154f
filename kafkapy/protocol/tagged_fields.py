"""Drop unknown tagged fields from a flexible message body, so that kio can decode it (sans-io).

Kafka's rule for flexible versions (KIP-482) is that a reader skips every tagged field whose tag it
does not know. kio's native reader instead raises ``KeyError('Unknown tagged field tag: N')``, at
any nesting level. :func:`strip_unknown_tags` walks the body following the kio dataclass schema of
the message and returns a copy of it in which every tagged-field section keeps only the tags the
schema declares (its count rewritten); all other bytes are copied unchanged. kio then decodes the
copy to exactly the entity it would have produced had the sender not added the unknown tags.

How a field is laid out follows kio's own classification (``kio/serial/_introspect.py`` and
``entity_writer`` in ``kio/serial/_serialize.py``):

* a primitive (``metadata["kafka_type"]``): fixed width, or a string/bytes/records value with a
  compact (flexible) or int16/int32 (legacy) length, -1/0 meaning null;
* a tuple of primitives or of entities: an array, compact (uvarint n+1, 0 = null) in flexible
  entities, int32 length (-1 = null) otherwise;
* an entity (a nested dataclass): its fields in order; ``X | None`` entities carry an int8
  presence marker first (KIP-893), negative meaning null;
* a field with ``metadata["tag"]``: lives in the tagged section at the end of its (flexible)
  entity as uvarint tag, uvarint size, value. Known tags are kept; if a known tag holds a struct
  that itself carried unknown tags, that value is rewritten too and its size updated.

Bytes are never copied one at a time: the walk only moves a position, and the output is the
input's slices between the rewritten tagged sections, so a 1 MiB records field costs one slice.
Every read is bounds-checked and array counts are checked against the bytes left, so truncated or
hostile input raises :class:`MalformedBody` after at most one pass over the input.
"""

from __future__ import annotations

import dataclasses
import struct
import typing
from collections.abc import Callable
from functools import cache
from types import NoneType, UnionType
from typing import Any, Union

from .wire import DecodeError, uvarint

__all__ = [
    "FIXED_WIDTH",
    "MalformedBody",
    "classify",
    "read_uvarint_within",
    "strip_unknown_tags",
]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT8 = struct.Struct(">b")


class MalformedBody(DecodeError, ValueError):
    """The bytes do not follow the message schema (truncated, bad length, bad tagged field)."""


class _Out:
    """Output of a walk: slices of the input between rewritten sections, plus the new sections.

    ``start`` is the first input position not yet emitted; input bytes are emitted lazily, only
    when a rewritten section has to be inserted, or at the end.
    """

    __slots__ = ("chunks", "start")

    def __init__(self, start: int) -> None:
        self.chunks: list[bytes | memoryview] = []
        self.start = start

    def replace(self, buf: memoryview, begin: int, end: int, new: list[bytes | memoryview]) -> None:
        """Emit the input up to ``begin``, then ``new`` in place of the input ``[begin, end)``."""
        if begin > self.start:
            self.chunks.append(buf[self.start : begin])
        self.chunks.extend(new)
        self.start = end

    def finish(self, buf: memoryview, end: int) -> bytes:
        if end > self.start:
            self.chunks.append(buf[self.start : end])
        self.start = end
        return b"".join(self.chunks)


# A walker reads one value starting at ``pos`` (never past ``end``), records any rewrite in
# ``out`` and returns the position after the value.
Walker = Callable[[memoryview, int, int, _Out], int]


def _need(pos: int, n: int, end: int, what: str) -> int:
    new = pos + n
    if n < 0 or new > end:
        raise MalformedBody(f"{what} truncated at byte {pos} (needs {n}, {end - pos} left)")
    return new


def read_uvarint_within(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """(value, next position) of an unsigned varint that must end before ``end`` and take at
    most 5 bytes (Kafka's limit); MalformedBody otherwise."""
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise MalformedBody(f"unsigned varint truncated at byte {pos}")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise MalformedBody(f"unsigned varint longer than 5 bytes at byte {pos - 5}")


# --- primitives ---------------------------------------------------------------------------------

FIXED_WIDTH = {
    "int8": 1,
    "uint8": 1,
    "bool": 1,
    "int16": 2,
    "uint16": 2,
    "error_code": 2,
    "int32": 4,
    "uint32": 4,
    "timedelta_i32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "timedelta_i64": 8,
    "datetime_i64": 8,
    "uuid": 16,
}


def _fixed(width: int, kafka_type: str) -> Walker:
    def walk(buf: memoryview, pos: int, end: int, out: _Out) -> int:
        return _need(pos, width, end, kafka_type)

    return walk


def _walk_compact_bytes(buf: memoryview, pos: int, end: int, out: _Out) -> int:
    n, pos = read_uvarint_within(buf, pos, end)
    if n == 0:  # null
        return pos
    return _need(pos, n - 1, end, "compact string/bytes")


def _walk_legacy_string(buf: memoryview, pos: int, end: int, out: _Out) -> int:
    _need(pos, 2, end, "string length")
    n = _INT16.unpack_from(buf, pos)[0]
    pos += 2
    if n == -1:
        return pos
    if n < -1:
        raise MalformedBody(f"negative string length {n} at byte {pos - 2}")
    return _need(pos, n, end, "string")


def _walk_legacy_bytes(buf: memoryview, pos: int, end: int, out: _Out) -> int:
    _need(pos, 4, end, "bytes length")
    n = _INT32.unpack_from(buf, pos)[0]
    pos += 4
    if n == -1:
        return pos
    if n < -1:
        raise MalformedBody(f"negative bytes length {n} at byte {pos - 4}")
    return _need(pos, n, end, "bytes")


def _primitive(kafka_type: str, flexible: bool) -> tuple[Walker, int]:
    """Walker and minimum encoded size of one primitive value."""
    width = FIXED_WIDTH.get(kafka_type)
    if width is not None:
        return _fixed(width, kafka_type), width
    if kafka_type in ("string", "bytes", "records"):
        if flexible:
            return _walk_compact_bytes, 1
        if kafka_type == "string":
            return _walk_legacy_string, 2
        return _walk_legacy_bytes, 4
    raise MalformedBody(f"kafka type {kafka_type!r} is not supported")


# --- arrays and structs -------------------------------------------------------------------------


def _array(item: Walker, item_min: int, flexible: bool, fixed_width: int | None) -> Walker:
    """Walker of an array; ``fixed_width`` set means items are skipped as one slice."""

    def walk(buf: memoryview, pos: int, end: int, out: _Out) -> int:
        if flexible:
            n, pos = read_uvarint_within(buf, pos, end)
            count = n - 1  # -1 is null
        else:
            _need(pos, 4, end, "array length")
            count = _INT32.unpack_from(buf, pos)[0]
            pos += 4
            if count < -1:
                raise MalformedBody(f"negative array length {count} at byte {pos - 4}")
        if count <= 0:
            return pos
        if count * item_min > end - pos:
            raise MalformedBody(
                f"array of {count} items truncated at byte {pos} ({end - pos} bytes left)"
            )
        if fixed_width is not None:
            return pos + count * fixed_width
        if item_min == 0:  # items that never occupy any byte: nothing to walk
            return pos
        for _ in range(count):
            pos = item(buf, pos, end, out)
        return pos

    return walk


def _nullable_struct(inner: Walker) -> Walker:
    def walk(buf: memoryview, pos: int, end: int, out: _Out) -> int:
        _need(pos, 1, end, "nullable struct marker")
        if _INT8.unpack_from(buf, pos)[0] < 0:
            return pos + 1
        return inner(buf, pos + 1, end, out)

    return walk


def classify(tp: Any) -> tuple[str, Any, bool]:
    """(kind, inner type, nullable) with kind one of primitive, array, struct (like kio)."""
    nullable = False
    if typing.get_origin(tp) in (UnionType, Union):
        args = [a for a in typing.get_args(tp) if a is not NoneType]
        if len(args) != 1:
            raise MalformedBody(f"unsupported union type {tp!r} in schema")
        tp, nullable = args[0], True
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise MalformedBody(f"unsupported tuple type {tp!r} in schema")
        return "array", args[0], nullable
    if dataclasses.is_dataclass(tp):
        return "struct", tp, nullable
    return "primitive", tp, nullable


def _field_walker(
    entity_cls: type, field: dataclasses.Field[Any], tp: Any, flexible: bool, is_tag: bool
) -> tuple[Walker, int]:
    """Walker and minimum encoded size of one field's value."""
    kind, inner, nullable = classify(tp)
    if entity_cls.__name__ == "RequestHeader" and field.name == "client_id":
        return _walk_legacy_string, 2  # always a legacy string, as in kio and Kafka
    if kind == "primitive":
        return _primitive(field.metadata["kafka_type"], flexible)
    item_kind, item_type, _ = classify(inner) if kind == "array" else (kind, inner, False)
    fixed_width: int | None = None
    if item_kind == "struct":
        item, item_min = _struct_walker(item_type)
    else:
        kafka_type = field.metadata["kafka_type"]
        item, item_min = _primitive(kafka_type, flexible)
        fixed_width = FIXED_WIDTH.get(kafka_type)
    if kind == "array":
        return _array(item, item_min, flexible, fixed_width), 1 if flexible else 4
    if nullable and not is_tag:  # tagged values are never null-marked: absence is null
        return _nullable_struct(item), 1
    return item, item_min


@cache
def _struct_walker(entity_cls: type) -> tuple[Walker, int]:
    """Walker and minimum encoded size of one entity (a kio dataclass)."""
    flexible = bool(getattr(entity_cls, "__flexible__", False))
    hints: dict[str, Any] | None = None
    fields = dataclasses.fields(entity_cls)  # type: ignore[arg-type]
    if any(isinstance(f.type, str) for f in fields):
        hints = typing.get_type_hints(entity_cls)
    body: list[Walker] = []
    tags: dict[int, Walker] = {}
    min_size = 1 if flexible else 0
    for field in fields:
        tp = hints[field.name] if hints is not None else field.type
        tag = field.metadata.get("tag")
        walker, size = _field_walker(entity_cls, field, tp, flexible, tag is not None)
        if tag is None:
            body.append(walker)
            min_size += size
        else:
            if not flexible:
                raise MalformedBody(f"{entity_cls.__name__} has tagged fields but is not flexible")
            tags[int(tag)] = walker
    body_walkers = tuple(body)

    def walk(buf: memoryview, pos: int, end: int, out: _Out) -> int:
        for walker in body_walkers:
            pos = walker(buf, pos, end, out)
        if flexible:
            pos = _tagged_section(tags, buf, pos, end, out)
        return pos

    return walk, min_size


def _tagged_section(
    known: dict[int, Walker], buf: memoryview, pos: int, end: int, out: _Out
) -> int:
    """Walk one tagged-field section; rewrite it in ``out`` if it holds anything to drop."""
    section_start = pos
    count, pos = read_uvarint_within(buf, pos, end)
    if count * 2 > end - pos:  # every tagged field takes at least 2 bytes (tag and size)
        raise MalformedBody(f"{count} tagged fields truncated at byte {pos}")
    kept: list[bytes | memoryview] = []
    n_kept = 0
    rewrite = False
    for _ in range(count):
        field_start = pos
        tag, pos = read_uvarint_within(buf, pos, end)
        size, pos = read_uvarint_within(buf, pos, end)
        value_end = _need(pos, size, end, f"tagged field {tag}")
        walker = known.get(tag)
        if walker is None:
            rewrite = True
        else:
            inner = _Out(pos)
            if walker(buf, pos, value_end, inner) != value_end:
                raise MalformedBody(f"tagged field {tag} at byte {field_start} has wrong size")
            if inner.chunks:  # a struct value that itself held unknown tags
                value = inner.finish(buf, value_end)
                kept += [uvarint(tag), uvarint(len(value)), value]
                rewrite = True
            else:
                kept.append(buf[field_start:value_end])
            n_kept += 1
        pos = value_end
    if rewrite:
        out.replace(buf, section_start, pos, [uvarint(n_kept), *kept])
    return pos


def strip_unknown_tags(entity_cls: type, buf: bytes, offset: int) -> bytes:
    """Return the message of type ``entity_cls`` at ``buf[offset:]`` without unknown tags.

    The result holds exactly the message (bytes after its end are not included), with every
    tagged-field section reduced to the tags the schema of ``entity_cls`` knows. When nothing is
    unknown, the result equals the message's bytes. Raises :class:`MalformedBody` (a
    ``ValueError``) when the bytes do not follow the schema.
    """
    view = memoryview(buf)
    walk, _ = _struct_walker(entity_cls)
    out = _Out(offset)
    end = walk(view, offset, len(view), out)
    return out.finish(view, end)
