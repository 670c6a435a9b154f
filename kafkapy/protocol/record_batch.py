"""Kafka record batches, magic 2 (sans-io): the produce hot path, and the one import path for
everything about record batches.

The produce hot path is ``validate_batches`` then ``assign_offsets_in_place``: no per-record
objects are created, only a tight varint walk over the records (record_walk, native when
``_speedups.c`` is built). The rest lives beside it and is re-exported here: the batch header,
its constants and the record-batch errors (batch_header); the reference reader and writer of
records (batch_records).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from crc32c import crc32c

from kafkapy.protocol.batch_header import (
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    CONTROL_BIT,
    CRC_START,
    CREATE_TIME,
    DEFAULT_MAX_DECOMPRESSED,
    DELETE_HORIZON_BIT,
    HEADER,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    MAGIC,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    Buffer,
    CorruptRecordError,
    InvalidRecordError,
    InvalidRecordsError,
    OffsetDeltaError,
    Record,
    RecordBatchError,
    RecordErrors,
    RecordTooLargeError,
    RecordValidationError,
    UnreadableRecordsError,
    UnsupportedMagicError,
    iter_batches,
    parse_batch_header,
)
from kafkapy.protocol.batch_records import (
    decode_records,
    encode_batch,
    encode_empty_batch,
    encode_varint,
    pack_batch,
    records_section,
)
from kafkapy.protocol.record_walk import NATIVE_WALK, WalkStats, walk_records
from kafkapy.protocol.wire import INT16, INT32, INT64, UINT32

__all__ = [
    "BATCH_HEADER_SIZE",
    "CODEC_MASK",
    "CONTROL_BIT",
    "CREATE_TIME",
    "CRC_START",
    "DEFAULT_MAX_DECOMPRESSED",
    "DELETE_HORIZON_BIT",
    "LOG_APPEND_TIME",
    "LOG_OVERHEAD",
    "MAGIC",
    "NATIVE_WALK",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "BatchHeader",
    "Buffer",
    "CorruptRecordError",
    "InvalidRecordError",
    "InvalidRecordsError",
    "OffsetDeltaError",
    "Record",
    "RecordBatchError",
    "RecordErrors",
    "RecordTooLargeError",
    "RecordValidationError",
    "UnreadableRecordsError",
    "UnsupportedMagicError",
    "WalkStats",
    "assign_offsets_in_place",
    "crc32c",
    "decode_records",
    "encode_batch",
    "encode_empty_batch",
    "encode_varint",
    "pack_batch",
    "iter_batches",
    "keyless_message",
    "keyless_records_error",
    "record_errors_summary",
    "parse_batch_header",
    "records_section",
    "validate_batches",
]

_OFFSET_LEN = struct.Struct(">qi")


def validate_batches(
    buf: Buffer,
    *,
    max_batch_size: int,
    allow_control: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    require_keys: bool = False,
    stats: list[WalkStats] | None = None,
) -> list[BatchHeader]:
    """Validate produced batches as Kafka's LogValidator does; return their headers.
    ``require_keys``: the topic is compacted, records without a key are INVALID_RECORD (named in
    record_errors). ``stats``: receives each batch's walk (smallest and largest timestamp delta,
    keyless records) for the caller's record checks; without it keyless records raise here."""
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
        h = BatchHeader(*HEADER.unpack_from(buf, pos))
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
        if h.codec == 0:
            walked = walk_records(buf, pos + BATCH_HEADER_SIZE, pos + size, count, require_keys)
        else:
            walked = _walk_compressed(buf, pos, h, max_decompressed_size, require_keys)
        if stats is not None:
            stats.append(walked)
        elif walked[2]:
            raise keyless_records_error(walked[2], "")
        headers.append(h)
        pos += size
    return headers


def _walk_compressed(
    buf: Buffer, pos: int, h: BatchHeader, limit: int, require_keys: bool
) -> WalkStats:
    """The walk of a compressed batch, with Kafka 4.4's answers: data that does not decompress,
    and inner offset deltas that do not count 0..n-1, are UNKNOWN_SERVER_ERROR."""
    try:
        data, start, end = records_section(buf, pos, h, limit)
    except CorruptRecordError as e:
        if "exceeds" in str(e):  # over the decompression limit: kafkapy's own guard
            raise
        raise UnreadableRecordsError(str(e)) from None
    try:
        return walk_records(data, start, end, h.records_count, require_keys)
    except OffsetDeltaError as e:
        raise UnreadableRecordsError(str(e)) from None


def keyless_records_error(indices: Sequence[int], where: str) -> InvalidRecordsError:
    """INVALID_RECORD naming the keyless records of a batch for a compacted topic, with Kafka
    4.4's messages (``where``: the topic partition, as in "topic-0")."""
    errors = tuple((i, keyless_message(where)) for i in indices)
    return InvalidRecordsError(record_errors_summary(errors))


def keyless_message(where: str) -> str:
    """Kafka 4.4's record error for a keyless record in a compacted topic."""
    return f"Compacted topic cannot accept message without key in topic partition {where}"


def record_errors_summary(errors: tuple[tuple[int, str], ...]) -> RecordErrors:
    """Kafka 4.4's error_message for INVALID_RECORD with record errors (the first three)."""
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
    return RecordErrors(
        f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]",
        errors,
    )


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
        INT64.pack_into(buf, pos, offset)
        INT32.pack_into(buf, pos + 12, leader_epoch)
        if log_append_time_ms is not None:
            INT16.pack_into(buf, pos + 21, h.attributes | TIMESTAMP_TYPE_BIT)
            INT64.pack_into(buf, pos + 35, log_append_time_ms)
            crc = crc32c(memoryview(buf)[pos + CRC_START : pos + h.size])
            UINT32.pack_into(buf, pos + 17, crc)
        offset += h.last_offset_delta + 1
        pos += h.size
    return offset
