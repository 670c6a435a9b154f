"""The record walk of the produce path (sans-io): check that a batch's records exactly fill
its records section, with offset deltas 0..n-1 and (for compacted topics) keys, without creating
per-record objects. Kafka's LogValidator parses every record of a produced batch
(``assignOffsetsNonCompressed`` iterates them all, and ``DefaultRecord.readFrom`` refuses a
record whose fields do not fill its length), so the walk is required; it runs natively
(``_speedups.c``, built when a C compiler is available) and falls back to the identical
pure-Python ``_walk_records_py`` otherwise. ``KAFKAPY_PURE_PYTHON=1`` forces the fallback.

Records, each: varint length, int8 attributes, varlong timestampDelta, varint offsetDelta,
varint keyLength (-1 null) + key, varint valueLength + value, varint header count, headers
(varint keyLength + utf-8 key, varint valueLength (-1 null) + value). Varints are zigzag.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from kafkapy.protocol.batch_header import (
    Buffer,
    CorruptRecordError,
    InvalidRecordError,
    RecordBatchError,
)


def read_varint(b: Buffer, pos: int) -> tuple[int, int]:
    """Decode a zigzag varint (up to 64 bits) at pos; return (value, next position)."""
    v = 0
    shift = 0
    while True:
        x = b[pos]
        pos += 1
        v |= (x & 0x7F) << shift
        if x < 0x80:
            return (v >> 1) ^ -(v & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptRecordError("varint is too long")


def _walk_records_py(b: Buffer, pos: int, end: int, count: int, require_keys: bool = False) -> None:
    """Check that ``count`` records with offset deltas 0..count-1 exactly fill b[pos:end]
    (and, with ``require_keys``, that every record has a non-null key). Reads are bounded by
    the whole buffer, not by ``end``: _speedups.c mirrors this function exactly."""
    i = 0
    try:
        while pos < end:
            v = b[pos]
            if v < 0x80:
                pos += 1
                length = (v >> 1) ^ -(v & 1)
            elif b[pos + 1] < 0x80:
                v = (v & 0x7F) | (b[pos + 1] << 7)
                pos += 2
                length = (v >> 1) ^ -(v & 1)
            else:
                length, pos = read_varint(b, pos)
            rec_end = pos + length
            if length < 6 or rec_end > end:
                raise CorruptRecordError(f"invalid record length {length}")
            pos += 1  # attributes
            while b[pos] >= 0x80:  # timestampDelta
                pos += 1
            v = b[pos + 1]
            if v < 0x80:
                pos += 2
                delta = (v >> 1) ^ -(v & 1)
            else:
                delta, pos = read_varint(b, pos + 1)
            if delta != i:
                raise InvalidRecordError(f"record offset delta {delta}, expected {i}")
            v = b[pos]
            if v < 0x80:
                pos += 1
                klen = (v >> 1) ^ -(v & 1)
            else:
                klen, pos = read_varint(b, pos)
            if klen > 0:
                pos += klen
            elif klen < -1:
                raise CorruptRecordError("invalid key length")
            elif klen == -1 and require_keys:
                raise InvalidRecordError("Compacted topic cannot accept message without key.")
            v = b[pos]
            if v < 0x80:
                pos += 1
                vlen = (v >> 1) ^ -(v & 1)
            elif b[pos + 1] < 0x80:
                v = (v & 0x7F) | (b[pos + 1] << 7)
                pos += 2
                vlen = (v >> 1) ^ -(v & 1)
            else:
                vlen, pos = read_varint(b, pos)
            if vlen > 0:
                pos += vlen
            elif vlen < -1:
                raise CorruptRecordError("invalid value length")
            v = b[pos]
            if v == 0:
                pos += 1
            else:
                nh, pos = read_varint(b, pos)
                if nh < 0:
                    raise CorruptRecordError("invalid header count")
                for _ in range(nh):
                    hk, pos = read_varint(b, pos)
                    if hk < 0:
                        raise CorruptRecordError("invalid header key length")
                    pos += hk
                    hv, pos = read_varint(b, pos)
                    if hv > 0:
                        pos += hv
                    elif hv < -1:
                        raise CorruptRecordError("invalid header value length")
            if pos != rec_end:
                raise CorruptRecordError("record fields do not match the record length")
            i += 1
    except IndexError:
        raise CorruptRecordError("truncated record") from None
    if pos != end:
        raise CorruptRecordError("records overrun the batch")
    if i != count:
        raise InvalidRecordError(f"batch declares {count} records but holds {i}")


NativeWalk = Callable[[Buffer, int, int, int, bool], "tuple[int, str] | None"]


def _load_native_walk() -> NativeWalk | None:
    if os.environ.get("KAFKAPY_PURE_PYTHON"):
        return None
    try:
        from kafkapy.protocol._speedups import walk_records
    except ImportError:
        return None
    return walk_records


_native_walk = _load_native_walk()
_WALK_ERRORS: dict[int, type[RecordBatchError]] = {1: CorruptRecordError, 2: InvalidRecordError}


def _walk_records_native(
    b: Buffer, pos: int, end: int, count: int, require_keys: bool = False
) -> None:
    """``_walk_records_py`` in C (kafkapy/protocol/_speedups.c)."""
    err = _native_walk(b, pos, end, count, require_keys)
    if err is not None:
        raise _WALK_ERRORS[err[0]](err[1])


walk_records = _walk_records_py if _native_walk is None else _walk_records_native
NATIVE_WALK = _native_walk is not None
