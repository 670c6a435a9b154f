"""Kafka record batches, magic 2 (sans-io): header parsing, produce validation, in-place
offset assignment, and a reference reader/writer for records.

Batch header layout (big-endian, 61 bytes)::

    @0  baseOffset int64        @8  batchLength int32 (bytes after this field)
    @12 partitionLeaderEpoch int32   @16 magic int8   @17 crc uint32 (CRC32C of @21..end)
    @21 attributes int16 (bits 0-2 codec, bit 3 LogAppendTime, bit 4 transactional, bit 5 control)
    @23 lastOffsetDelta int32   @27 baseTimestamp int64   @35 maxTimestamp int64
    @43 producerId int64   @51 producerEpoch int16   @53 baseSequence int32   @57 recordsCount int32

Records follow from @61, each: varint length, int8 attributes, varlong timestampDelta, varint
offsetDelta, varint keyLength (-1 null) + key, varint valueLength + value, varint header count,
headers (varint keyLength + utf-8 key, varint valueLength (-1 null) + value). Varints are zigzag.

The produce hot path is ``validate_batches`` then ``assign_offsets_in_place``: no per-record
objects are created, only a tight varint walk over the records. Kafka's LogValidator parses every
record of a produced batch (``assignOffsetsNonCompressed`` iterates them all, and
``DefaultRecord.readFrom`` refuses a record whose fields do not fill its length), so the walk is
required; it runs natively (``_speedups.c``, built when a C compiler is available) and falls
back to the identical pure-Python ``_walk_records_py`` otherwise. ``KAFKAPY_PURE_PYTHON=1``
forces the fallback.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from crc32c import crc32c

BATCH_HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
MAGIC = 2
CRC_START = 21
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

CODEC_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40  # KIP-534: baseTimestamp holds the delete horizon of the batch
CREATE_TIME = 0
LOG_APPEND_TIME = 1

DEFAULT_MAX_DECOMPRESSED = 128 * 1024 * 1024

_HEADER = struct.Struct(">qiibIhiqqqhii")
_OFFSET_LEN = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")

Buffer = bytes | bytearray | memoryview


class RecordBatchError(Exception):
    """Base for record-batch errors; ``error_code`` is the Kafka protocol error code."""

    error_code = 2


class CorruptRecordError(RecordBatchError):
    """CORRUPT_MESSAGE: bad CRC, truncated or malformed bytes."""

    error_code = 2


class RecordTooLargeError(RecordBatchError):
    """MESSAGE_TOO_LARGE: a batch is larger than message.max.bytes."""

    error_code = 10


class InvalidRecordError(RecordBatchError):
    """INVALID_RECORD: well-formed bytes that break a record rule."""

    error_code = 87


class UnsupportedMagicError(RecordBatchError):
    """UNSUPPORTED_FOR_MESSAGE_FORMAT: magic other than 2."""

    error_code = 43


@dataclass(frozen=True, slots=True)
class BatchHeader:
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The KIP-534 delete horizon the cleaner stamped on this batch, if any."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_BIT else None

    @property
    def timestamp_type(self) -> int:
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_BIT else CREATE_TIME

    @property
    def record_count(self) -> int:
        return self.records_count

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record, wrapping at Int32.MAX like Kafka."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % 2147483648


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


def parse_batch_header(buf: Buffer, pos: int = 0) -> BatchHeader:
    """Parse the 61-byte header at ``pos``; CorruptRecordError if too short."""
    if len(buf) - pos < BATCH_HEADER_SIZE:
        raise CorruptRecordError("truncated record batch header")
    return BatchHeader(*_HEADER.unpack_from(buf, pos))


def iter_batches(buf: Buffer) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) over concatenated batches; CorruptRecordError on bad framing."""
    n = len(buf)
    pos = 0
    while pos < n:
        h = parse_batch_header(buf, pos)
        if h.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
            raise CorruptRecordError(f"batch length {h.batch_length} is too small")
        if pos + h.size > n:
            raise CorruptRecordError("truncated record batch")
        yield pos, h
        pos += h.size


def _varint(b: Buffer, pos: int) -> tuple[int, int]:
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
                length, pos = _varint(b, pos)
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
                delta, pos = _varint(b, pos + 1)
            if delta != i:
                raise InvalidRecordError(f"record offset delta {delta}, expected {i}")
            v = b[pos]
            if v < 0x80:
                pos += 1
                klen = (v >> 1) ^ -(v & 1)
            else:
                klen, pos = _varint(b, pos)
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
                vlen, pos = _varint(b, pos)
            if vlen > 0:
                pos += vlen
            elif vlen < -1:
                raise CorruptRecordError("invalid value length")
            v = b[pos]
            if v == 0:
                pos += 1
            else:
                nh, pos = _varint(b, pos)
                if nh < 0:
                    raise CorruptRecordError("invalid header count")
                for _ in range(nh):
                    hk, pos = _varint(b, pos)
                    if hk < 0:
                        raise CorruptRecordError("invalid header key length")
                    pos += hk
                    hv, pos = _varint(b, pos)
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


_walk_records = _walk_records_py if _native_walk is None else _walk_records_native
NATIVE_WALK = _native_walk is not None


def _records_section(buf: Buffer, pos: int, h: BatchHeader, limit: int) -> tuple[Buffer, int, int]:
    """Return (bytes, start, end) of the batch's records, decompressed if needed."""
    start = pos + BATCH_HEADER_SIZE
    end = pos + h.size
    if h.codec == 0:
        return buf, start, end
    from kafkapy.protocol import compression

    data = compression.decompress(h.codec, memoryview(buf)[start:end], limit)
    return data, 0, len(data)


def validate_batches(
    buf: Buffer,
    *,
    max_batch_size: int,
    allow_control: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    require_keys: bool = False,
) -> list[BatchHeader]:
    """Validate produced batches as Kafka's LogValidator does; return their headers.
    ``require_keys``: the topic is compacted, records without a key are INVALID_RECORD."""
    n = len(buf)
    if n == 0:
        raise InvalidRecordError("no record batches")
    headers: list[BatchHeader] = []
    pos = 0
    while pos < n:
        if n - pos < 17:
            raise CorruptRecordError("truncated record batch")
        _, batch_length = _OFFSET_LEN.unpack_from(buf, pos)
        magic = buf[pos + 16]
        if magic != MAGIC:
            raise UnsupportedMagicError(f"unsupported record batch magic {magic}")
        if batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
            raise CorruptRecordError(f"batch length {batch_length} is too small")
        size = batch_length + LOG_OVERHEAD
        if size > max_batch_size:
            raise RecordTooLargeError(f"batch of {size} bytes exceeds {max_batch_size}")
        if pos + size > n:
            raise CorruptRecordError("truncated record batch")
        h = BatchHeader(*_HEADER.unpack_from(buf, pos))
        if crc32c(memoryview(buf)[pos + CRC_START : pos + size]) != h.crc:
            raise CorruptRecordError("record batch CRC mismatch")
        count = h.records_count
        if count < 1:
            raise InvalidRecordError("record batch holds no records")
        if h.last_offset_delta != count - 1:
            raise InvalidRecordError("lastOffsetDelta does not match the record count")
        if h.is_control and not allow_control:
            raise InvalidRecordError("clients may not write control batches")
        if h.is_transactional and h.producer_id < 0:
            raise InvalidRecordError("transactional batch without a producer id")
        if h.codec > 4:
            raise CorruptRecordError(f"unknown compression codec {h.codec}")
        data, start, end = _records_section(buf, pos, h, max_decompressed_size)
        _walk_records(data, start, end, count, require_keys)
        headers.append(h)
        pos += size
    return headers


def assign_offsets_in_place(
    buf: bytearray | memoryview,
    headers: Sequence[BatchHeader],
    base_offset: int,
    leader_epoch: int,
    log_append_time_ms: int | None,
) -> int:
    """Stamp offsets and leader epoch (outside the CRC); return the next offset.

    With ``log_append_time_ms`` the batches become LogAppendTime: attributes bit 3 set,
    maxTimestamp replaced, CRC recomputed.
    """
    pos = 0
    offset = base_offset
    for h in headers:
        _INT64.pack_into(buf, pos, offset)
        _INT32.pack_into(buf, pos + 12, leader_epoch)
        if log_append_time_ms is not None:
            _INT16.pack_into(buf, pos + 21, h.attributes | TIMESTAMP_TYPE_BIT)
            _INT64.pack_into(buf, pos + 35, log_append_time_ms)
            crc = crc32c(memoryview(buf)[pos + CRC_START : pos + h.size])
            _UINT32.pack_into(buf, pos + 17, crc)
        offset += h.last_offset_delta + 1
        pos += h.size
    return offset


def decode_records(batch: Buffer) -> list[Record]:
    """Decode every record of one batch (decompressing as needed)."""
    h = parse_batch_header(batch)
    if len(batch) < h.size:
        raise CorruptRecordError("truncated record batch")
    b, pos, end = _records_section(batch, 0, h, DEFAULT_MAX_DECOMPRESSED)
    log_append = h.timestamp_type == LOG_APPEND_TIME
    out: list[Record] = []
    try:
        for _ in range(h.records_count):
            length, pos = _varint(b, pos)
            rec_end = pos + length
            pos += 1
            ts_delta, pos = _varint(b, pos)
            off_delta, pos = _varint(b, pos)
            klen, pos = _varint(b, pos)
            key = None if klen < 0 else bytes(b[pos : pos + klen])
            pos += max(klen, 0)
            vlen, pos = _varint(b, pos)
            value = None if vlen < 0 else bytes(b[pos : pos + vlen])
            pos += max(vlen, 0)
            nh, pos = _varint(b, pos)
            hdrs: list[tuple[str, bytes | None]] = []
            for _ in range(nh):
                hk, pos = _varint(b, pos)
                hkey = bytes(b[pos : pos + hk]).decode("utf-8", "replace")
                pos += hk
                hv, pos = _varint(b, pos)
                hval = None if hv < 0 else bytes(b[pos : pos + hv])
                pos += max(hv, 0)
                hdrs.append((hkey, hval))
            if pos != rec_end or pos > end:
                raise CorruptRecordError("record fields do not match the record length")
            ts = h.max_timestamp if log_append else h.base_timestamp + ts_delta
            out.append(Record(h.base_offset + off_delta, ts, key, value, hdrs))
    except IndexError:
        raise CorruptRecordError("truncated record") from None
    return out


def encode_varint(value: int) -> bytes:
    """Zigzag varint encoding of a signed 64-bit value."""
    v = (value << 1) ^ (value >> 63)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _encode_record(r: Record, offset_delta: int, base_ts: int) -> bytes:
    parts = [b"\x00", encode_varint(r.timestamp - base_ts), encode_varint(offset_delta)]
    for blob in (r.key, r.value):
        if blob is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(blob)))
            parts.append(bytes(blob))
    parts.append(encode_varint(len(r.headers)))
    for hk, hv in r.headers:
        kb = hk.encode("utf-8")
        parts.append(encode_varint(len(kb)))
        parts.append(kb)
        if hv is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(hv)))
            parts.append(bytes(hv))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    codec: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    timestamp_type: int = CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    keep_offsets: bool = False,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """Write one magic-2 batch. Offset deltas are 0..n-1, or ``record.offset - base_offset``
    with ``keep_offsets`` (the cleaner keeps original offsets, leaving gaps). With
    ``delete_horizon_ms`` the batch carries the delete horizon in baseTimestamp (KIP-534) and
    record timestamp deltas are relative to it, so record timestamps are unchanged."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    base_ts = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    max_ts = max(r.timestamp for r in records)
    deltas = [r.offset - base_offset for r in records] if keep_offsets else range(len(records))
    raw = b"".join(_encode_record(r, d, base_ts) for r, d in zip(records, deltas, strict=True))
    if codec:
        from kafkapy.protocol import compression

        raw = compression.compress(codec, raw)
    attributes = codec & CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_BIT
    if is_transactional:
        attributes |= TRANSACTIONAL_BIT
    if is_control:
        attributes |= CONTROL_BIT
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_BIT
    lod = deltas[-1] if last_offset_delta is None else last_offset_delta
    header = bytearray(
        _HEADER.pack(
            base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD + len(raw),
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            lod,
            base_ts,
            max_ts,
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
    )
    batch = header + raw
    _UINT32.pack_into(batch, 17, crc32c(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def encode_empty_batch(h: BatchHeader, *, last_offset_delta: int | None = None) -> bytes:
    """A batch with ``h``'s header fields and no records: what the cleaner keeps when it removes
    every record of a producer's last batch, so the producer's sequence state survives."""
    attributes = h.attributes & ~DELETE_HORIZON_BIT
    lod = h.last_offset_delta if last_offset_delta is None else last_offset_delta
    header = bytearray(
        _HEADER.pack(
            h.base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD,
            h.partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            lod,
            h.max_timestamp,
            h.max_timestamp,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            0,
        )
    )
    _UINT32.pack_into(header, 17, crc32c(memoryview(header)[CRC_START:]))
    return bytes(header)
