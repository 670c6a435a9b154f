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
    OffsetDeltaError,
    RecordBatchError,
    UnreadableRecordsError,
)

WalkStats = tuple[int, int, list[int]]
"""What a successful walk learnt: the smallest and largest timestamp delta, and the indices of
the records without a key (collected only with ``require_keys``)."""


class VarintTooLongError(InvalidRecordError):
    """A varint longer than Kafka allows: 5 bytes for an int, 10 for a long."""


def read_varint(b: Buffer, pos: int) -> tuple[int, int]:
    """Decode a zigzag varlong (at most 10 bytes, 64 bits) at pos; return (value, next
    position). The reference reader's (batch_records.decode_records) varint."""
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


def read_varint32(b: Buffer, pos: int) -> tuple[int, int]:
    """Kafka's ByteUtils.readVarint: a zigzag int in at most 5 bytes (VarintTooLongError past
    them; a 5th byte with bits beyond 32 is refused too, where Kafka drops them)."""
    v = 0
    for shift in (0, 7, 14, 21, 28):
        x = b[pos]
        pos += 1
        if shift == 28:
            if x >= 0x80:
                raise VarintTooLongError("Varint is too long")
            if x & 0x70:
                raise InvalidRecordError("varint overflows an int")
        v |= (x & 0x7F) << shift
        if x < 0x80:
            break
    return (v >> 1) ^ -(v & 1), pos


def read_varlong(b: Buffer, pos: int) -> tuple[int, int]:
    """Kafka's ByteUtils.readVarlong: a zigzag long in at most 10 bytes (VarintTooLongError
    past them; a 10th byte with bits beyond 64 is refused too)."""
    v = 0
    shift = 0
    while True:
        x = b[pos]
        pos += 1
        if shift == 63:
            if x >= 0x80:
                raise VarintTooLongError("Varlong is too long")
            if x & 0x7E:
                raise InvalidRecordError("varlong overflows a long")
        v |= (x & 0x7F) << shift
        if x < 0x80:
            return (v >> 1) ^ -(v & 1), pos
        shift += 7


def _walk_records_py(
    b: Buffer, pos: int, end: int, count: int, require_keys: bool = False
) -> WalkStats:
    """Check that ``count`` records with offset deltas 0..count-1 exactly fill b[pos:end], as
    Kafka 4.4's DefaultRecord.readFrom reads them (ints in at most 5 varint bytes, longs in 10);
    return the smallest and largest timestamp delta and (with ``require_keys``) the indices of
    the keyless records. Errors, as Kafka answers them: a record-length varint over 5 bytes is
    UnreadableRecordsError (Kafka reads it outside its record checks), anything else malformed
    InvalidRecordError (OffsetDeltaError for a wrong offset delta). Reads are bounded by the
    whole buffer, not by ``end``: _speedups.c mirrors this function exactly."""
    i = 0
    lo = hi = 0
    keyless: list[int] = []
    try:
        while pos < end:
            v = b[pos]
            if v < 0x80:
                pos += 1
                length = (v >> 1) ^ -(v & 1)
            else:
                try:
                    length, pos = read_varint32(b, pos)
                except VarintTooLongError:
                    raise UnreadableRecordsError("Varint is too long") from None
            rec_end = pos + length
            if length < 6 or rec_end > end:
                raise InvalidRecordError(f"invalid record length {length}")
            pos += 1  # attributes
            v = b[pos]
            if v < 0x80:
                pos += 1
                ts = (v >> 1) ^ -(v & 1)
            else:
                ts, pos = read_varlong(b, pos)
            if i == 0:
                lo = hi = ts
            elif ts < lo:
                lo = ts
            elif ts > hi:
                hi = ts
            v = b[pos]
            if v < 0x80:
                pos += 1
                delta = (v >> 1) ^ -(v & 1)
            else:
                delta, pos = read_varint32(b, pos)
            if delta != i:
                raise OffsetDeltaError(f"record offset delta {delta}, expected {i}")
            v = b[pos]
            if v < 0x80:
                pos += 1
                klen = (v >> 1) ^ -(v & 1)
            else:
                klen, pos = read_varint32(b, pos)
            if klen > 0:
                pos += klen
            elif klen < -1:
                raise InvalidRecordError("invalid key length")
            elif klen == -1 and require_keys:
                keyless.append(i)
            v = b[pos]
            if v < 0x80:
                pos += 1
                vlen = (v >> 1) ^ -(v & 1)
            else:
                vlen, pos = read_varint32(b, pos)
            if vlen > 0:
                pos += vlen
            elif vlen < -1:
                raise InvalidRecordError("invalid value length")
            v = b[pos]
            if v == 0:
                pos += 1
            else:
                nh, pos = read_varint32(b, pos)
                if nh < 0:
                    raise InvalidRecordError("invalid header count")
                for _ in range(nh):
                    hk, pos = read_varint32(b, pos)
                    if hk < 0:
                        raise InvalidRecordError("invalid header key length")
                    pos += hk
                    hv, pos = read_varint32(b, pos)
                    if hv > 0:
                        pos += hv
                    elif hv < -1:
                        raise InvalidRecordError("invalid header value length")
            if pos != rec_end:
                raise InvalidRecordError("record fields do not match the record length")
            i += 1
    except IndexError:
        raise InvalidRecordError("truncated record") from None
    except VarintTooLongError as e:  # plain INVALID_RECORD inside a record, as the C walk's
        raise InvalidRecordError(str(e)) from None
    if pos != end:
        raise InvalidRecordError("records overrun the batch")
    if i != count:
        raise InvalidRecordError(f"batch declares {count} records but holds {i}")
    return lo, hi, keyless


NativeWalk = Callable[[Buffer, int, int, int, bool], "tuple[int, str] | WalkStats"]


def _load_native_walk() -> NativeWalk | None:
    if os.environ.get("KAFKAPY_PURE_PYTHON"):
        return None
    try:
        from kafkapy.protocol._speedups import walk_records
    except ImportError:
        return None
    return walk_records


_native_walk = _load_native_walk()
_WALK_ERRORS: dict[int, type[RecordBatchError]] = {
    2: InvalidRecordError,
    3: UnreadableRecordsError,
    4: OffsetDeltaError,
}


def _walk_records_native(
    b: Buffer, pos: int, end: int, count: int, require_keys: bool = False
) -> WalkStats:
    """``_walk_records_py`` in C (kafkapy/protocol/_speedups.c): a 3-tuple when the records
    are valid, (kind, message) when not."""
    assert _native_walk is not None
    res = _native_walk(b, pos, end, count, require_keys)
    if len(res) == 2:
        raise _WALK_ERRORS[res[0]](res[1])  # type: ignore[misc]
    return res  # type: ignore[return-value]


walk_records = _walk_records_py if _native_walk is None else _walk_records_native
NATIVE_WALK = _native_walk is not None
