"""Bounds pre-pass over a request body, run before kio's native reader sees it (sans-io).

kio's reader (``_kio_native``, Rust) reserves memory for an array from the count it reads, before
reading the items: a compact array count of 2**32 makes it ask for tens of GiB and the process
aborts (``memory allocation of ... bytes failed``), which no ``except`` can catch. Kafka's own
generated readers refuse such counts first ("Tried to allocate a collection of size N, but there
are only M bytes remaining"). :func:`guard_for` gives, for a kio request schema, a function that
walks a body the way Kafka's reader would and raises before kio could allocate anything:

* an array count above the bytes left in the frame (each item takes at least one byte);
* a null (negative length) array, string or bytes where the schema does not allow null (kio
  returns None for a null non-nullable array, which handlers then trip over; Kafka refuses it:
  "non-nullable field X was serialized as null");
* a string longer than 0x7fff bytes (Kafka's limit, compact strings included);
* a length, count or fixed-width field running past the end of the body; a varint over 5 bytes;
* a tagged-field section with more fields than bytes, or a known tagged field whose value does
  not fill exactly its declared size.

An unknown tagged field raises :class:`UnknownTaggedField`: kio cannot read it (it raises
KeyError where Kafka skips it), so the caller strips unknown tags first
(``tagged_fields.strip_unknown_tags``) and guards the stripped body again.

The walk is compiled: for each schema, Python source that reads exactly that message's layout
(fixed-width runs merged into one addition, varints decoded inline when they fit a byte, arrays
of fixed-width items skipped in one step) is generated and compiled once, so a small request
costs about as much as kio's own decode of it (a closure-per-field walker costs 3-8 times
more). Nothing is allocated in proportion to any count read from the wire.
"""

from __future__ import annotations

import dataclasses
import struct
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

from .tagged_fields import FIXED_WIDTH, MalformedBody, classify, read_uvarint_within

__all__ = ["Guard", "UnknownTaggedField", "guard_for"]

Guard = Callable[[Any, int, int], int]
"""``guard(buf, pos, end)``: check the message at ``buf[pos:end]``; return where it ends."""

MAX_STRING = 0x7FFF  # Kafka refuses longer strings, flexible or not


class UnknownTaggedField(Exception):
    """The body holds a tagged field its schema does not declare (legal: strip it, then read)."""


def _tags(buf: Any, pos: int, end: int, known: dict[int, Guard]) -> int:
    """Check one non-empty tagged-field section; return the position after it."""
    count, pos = read_uvarint_within(buf, pos, end)
    if count * 2 > end - pos:  # every tagged field takes at least 2 bytes (tag and size)
        raise MalformedBody(f"{count} tagged fields in {end - pos} bytes at byte {pos}")
    for _ in range(count):
        tag, pos = read_uvarint_within(buf, pos, end)
        size, pos = read_uvarint_within(buf, pos, end)
        value_end = pos + size
        if value_end > end:
            raise MalformedBody(f"tagged field {tag} truncated at byte {pos}")
        check = known.get(tag)
        if check is None:
            raise UnknownTaggedField(tag)
        if check(buf, pos, value_end) != value_end:
            raise MalformedBody(f"tagged field {tag} at byte {pos} has wrong size")
        pos = value_end
    return pos


def _truncated(pos: int) -> MalformedBody:
    return MalformedBody(f"body truncated at byte {pos}")


def _null(name: str) -> MalformedBody:
    return MalformedBody(f"non-nullable field {name} was serialized as null")


def _too_many(name: str, count: int, left: int) -> MalformedBody:
    return MalformedBody(f"array {name} of {count} items with only {left} bytes left")


def _too_long(name: str, length: int) -> MalformedBody:
    return MalformedBody(f"string field {name} had invalid length {length}")


_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from


class _Source:
    """Python source of one guard function, built field by field."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.skip = 0  # fixed-width bytes walked over but not yet added to ``pos``
        self.ns = namespace

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def flush(self, depth: int) -> None:
        if self.skip:
            self.emit(depth, f"pos += {self.skip}")
            self.skip = 0

    def length(self, depth: int, kind: str, var: str = "n") -> None:
        """Read a length prefix into ``var``: ``uvarint`` (compact: n + 1), ``int16``, ``int32``."""
        self.flush(depth)
        if kind == "uvarint":
            self.emit(depth, "if pos >= end: raise _truncated(pos)")
            self.emit(depth, f"{var} = buf[pos]")
            self.emit(depth, f"if {var} < 0x80: pos += 1")
            self.emit(depth, f"else: {var}, pos = read_uvarint_within(buf, pos, end)")
            self.emit(depth, f"{var} -= 1")
        else:
            width, reader = (2, "_I16") if kind == "int16" else (4, "_I32")
            self.emit(depth, f"if pos + {width} > end: raise _truncated(pos)")
            self.emit(depth, f"{var} = {reader}(buf, pos)[0]")
            self.emit(depth, f"pos += {width}")

    def const(self, value: Any) -> str:
        name = f"_c{len(self.ns)}"
        self.ns[name] = value
        return name


def _fixed_width(tp: Any, kafka_type: str | None) -> int | None:
    """Encoded size of a value of this type if it never varies (a primitive or a non-flexible
    struct of fixed-width fields), else None."""
    kind, inner, nullable = classify(tp)
    if kind == "primitive":
        return FIXED_WIDTH.get(kafka_type or "")
    if kind != "struct" or nullable or getattr(inner, "__flexible__", False):
        return None
    total = 0
    hints = typing.get_type_hints(inner)
    for f in dataclasses.fields(inner):
        w = _fixed_width(hints[f.name], f.metadata.get("kafka_type"))
        if w is None:
            return None
        total += w
    return total


def _emit_value(
    src: _Source,
    depth: int,
    name: str,
    tp: Any,
    kafka_type: str | None,
    flexible: bool,
    is_tag: bool,
) -> None:
    """Source checking one value of type ``tp`` at ``pos``."""
    kind, inner, nullable = classify(tp)
    if kind == "primitive" and kafka_type in FIXED_WIDTH:
        src.skip += FIXED_WIDTH[kafka_type]
        return
    label = src.const(name)
    if kind == "primitive":
        if kafka_type not in ("string", "bytes", "records"):
            raise MalformedBody(f"kafka type {kafka_type!r} is not supported")
        src.length(depth, "uvarint" if flexible else "int16" if kafka_type == "string" else "int32")
        if kafka_type == "string":
            src.emit(depth, f"if n > {MAX_STRING}: raise _too_long({label}, n)")
        src.emit(depth, "if n > 0: pos += n")
        if not nullable:
            src.emit(depth, f"elif n < 0: raise _null({label})")
        return
    if kind == "struct":
        if nullable and not is_tag:  # KIP-893 presence marker; tagged values are never marked
            src.flush(depth)
            src.emit(depth, "if pos >= end: raise _truncated(pos)")
            src.emit(depth, "pos += 1")
            src.emit(depth, "if buf[pos - 1] < 0x80:")
            _emit_struct(src, depth + 1, inner)
            src.flush(depth + 1)
            src.emit(depth + 1, "pass")
            return
        _emit_struct(src, depth, inner)
        return
    # an array
    src.length(depth, "uvarint" if flexible else "int32")
    src.emit(depth, "if n > 0:")
    src.emit(depth + 1, f"if n > end - pos: raise _too_many({label}, n, end - pos)")
    item_width = _fixed_width(inner, kafka_type)
    if item_width is not None:
        src.emit(depth + 1, f"pos += n * {item_width}")
    else:
        src.emit(depth + 1, "for _ in range(n):")
        _emit_value(src, depth + 2, name, inner, kafka_type, flexible, False)
        src.flush(depth + 2)
    if not (nullable or is_tag):
        src.emit(depth, f"elif n < 0: raise _null({label})")


def _emit_struct(src: _Source, depth: int, cls: type) -> None:
    flexible = bool(getattr(cls, "__flexible__", False))
    hints = typing.get_type_hints(cls)
    tags: dict[int, Guard] = {}
    for f in dataclasses.fields(cls):
        tag = f.metadata.get("tag")
        kafka_type = f.metadata.get("kafka_type")
        if tag is not None:
            tags[int(tag)] = _value_guard(cls, f.name, hints[f.name], kafka_type, flexible)
            continue
        _emit_value(src, depth, f.name, hints[f.name], kafka_type, flexible, False)
    if flexible:
        src.flush(depth)
        known = src.const(tags)
        src.emit(depth, "if pos >= end: raise _truncated(pos)")
        src.emit(depth, f"if buf[pos]: pos = _tags(buf, pos, end, {known})")
        src.emit(depth, "else: pos += 1")


_HELPERS = {
    "read_uvarint_within": read_uvarint_within,
    "_tags": _tags,
    "_truncated": _truncated,
    "_null": _null,
    "_too_many": _too_many,
    "_too_long": _too_long,
    "_I16": _I16,
    "_I32": _I32,
}


def _compile(build: Callable[[_Source], None], name: str) -> Guard:
    ns: dict[str, Any] = dict(_HELPERS)
    src = _Source(ns)
    src.emit(0, "def guard(buf, pos, end):")
    build(src)
    src.flush(1)
    src.emit(1, "if pos > end: raise _truncated(end)")
    src.emit(1, "return pos")
    code = compile("\n".join(src.lines), f"<request guard {name}>", "exec")
    exec(code, ns)
    guard: Guard = ns["guard"]
    guard.__doc__ = "\n".join(src.lines)  # the generated source, for reading and debugging
    return guard


@cache
def _value_guard(owner: type, name: str, tp: Any, kafka_type: str | None, flexible: bool) -> Guard:
    """Guard of one tagged field's value (it fills the whole ``[pos, end)`` of its tag)."""
    return _compile(
        lambda src: _emit_value(src, 1, name, tp, kafka_type, flexible, True),
        f"{owner.__name__}.{name}",
    )


@cache
def guard_for(entity_cls: type) -> Guard:
    """The compiled guard of a kio request entity class (one per API version, cached).

    The guard raises :class:`MalformedBody` when the body cannot be what Kafka's reader accepts,
    :class:`UnknownTaggedField` when it holds a tag the schema does not declare.
    """
    return _compile(lambda src: _emit_struct(src, 1, entity_cls), entity_cls.__name__)
