"""Checks and conversions of the batches a partition log is asked to append (Kafka's
LogValidator, and the batch checks of UnifiedLog.analyzeAndValidateRecords).

- As the leader (``validate_for_leader``, ``prepare_for_leader``): framing, sizes, CRCs and every
  record (protocol/record_batch.validate_batches, with Kafka 4.4's error codes); per record, the
  key of a compacted topic and the CreateTime timestamp within
  message.timestamp.before/after.max.ms, the failing ones named in KIP-467 record_errors
  (Kafka's RecordValidationException); each batch's maxTimestamp recomputed from its records;
  batches rewritten in the topic's compression.type. The result is a buffer the log stamps
  offsets into in place.
- As a follower (``batches_to_append_as_follower``): CRCs of the fetched batches, and the first
  new one must continue the log end offset.

Nothing here touches the log's files; PartitionLog.append_as_leader/append_as_follower
(storage/log.py) call these before they append.
"""

from __future__ import annotations

from dataclasses import replace

from kafkapy.protocol.record_batch import (
    CRC_START,
    NO_TIMESTAMP,
    BatchHeader,
    CorruptRecordError,
    InvalidRecordsError,
    RecordErrors,
    RecordTooLargeError,
    RecordValidationError,
    WalkStats,
    crc32c,
    decode_records,
    encode_batch,
    iter_batches,
    keyless_message,
    keyless_records_error,
    parse_batch_header,
    record_errors_summary,
    validate_batches,
)
from kafkapy.protocol.wire import INT64, UINT32
from kafkapy.storage.config import LONG_MAX, LogConfig

Records = bytes | bytearray | memoryview


class InvalidTimestampError(RecordValidationError):
    """INVALID_TIMESTAMP: CreateTime timestamps outside message.timestamp.before/after.max.ms,
    the records named in record_errors (with any keyless ones, as Kafka 4.4 names them)."""

    error_code = 32


TIMESTAMP_SUMMARY = "One or more records have been rejected due to invalid timestamp"
_LONG_RANGE = 1 << 64


def _java_long(value: int) -> int:
    """``value`` wrapped to a signed 64-bit long, as Java's arithmetic wraps it."""
    value %= _LONG_RANGE
    return value - _LONG_RANGE if value > LONG_MAX else value


def validate_for_leader(
    records: Records, config: LogConfig, now_ms: int, where: str = ""
) -> list[BatchHeader]:
    """The headers of ``records`` once they pass the leader's checks (RecordBatchError else),
    each with the maxTimestamp of its records (Kafka recomputes it; prepare_for_leader writes it
    into a batch whose header says otherwise). Every record's key (compacted topics) and
    CreateTime timestamp is checked, as Kafka 4.4's LogValidator does; the records that fail are
    named in record_errors. ``where``: the topic partition ("topic-0") for Kafka's messages."""
    stats: list[WalkStats] = []
    headers = validate_batches(
        records, max_batch_size=config.max_message_bytes, require_keys=config.compact,
        stats=stats,
    )
    if config.log_append_time:
        for (_lo, _hi, keyless) in stats:
            if keyless:
                raise keyless_records_error(keyless, where)
        return headers
    before = config.message_timestamp_before_max_ms
    after = config.message_timestamp_after_max_ms
    lo = now_ms - before
    hi = now_ms + after
    out = headers
    pos = 0
    for i, (h, (lo_delta, hi_delta, keyless)) in enumerate(zip(headers, stats, strict=True)):
        base = h.base_timestamp
        if keyless or base + lo_delta < lo or base + hi_delta > hi:
            record_errors(records, pos, h, keyless, now_ms, lo, hi, before, after, where)
        max_ts = max(base + hi_delta, NO_TIMESTAMP)
        if max_ts != h.max_timestamp:
            if out is headers:
                out = list(headers)
            out[i] = replace(h, max_timestamp=max_ts)
        pos += h.size
    return out


def record_errors(
    records: Records,
    pos: int,
    h: BatchHeader,
    keyless: list[int],
    now_ms: int,
    lo: int,
    hi: int,
    before: int,
    after: int,
    where: str,
) -> None:
    """Raise Kafka 4.4's RecordValidationException for the batch at ``pos``: per record, a
    missing key first, else a CreateTime timestamp (other than -1) out of [lo, hi]; the error
    is INVALID_TIMESTAMP when any timestamp failed, INVALID_RECORD otherwise. Returns when
    every record passes (a batch whose only out-of-range timestamps are -1)."""
    errors: list[tuple[int, str]] = []
    missing = set(keyless)
    bad_timestamp = False
    lo_text, hi_text = _java_long(now_ms - before), _java_long(now_ms + after)
    for index, r in enumerate(decode_records(memoryview(records)[pos : pos + h.size])):
        if index in missing:
            errors.append((index, keyless_message(where)))
        elif r.timestamp != NO_TIMESTAMP and (r.timestamp < lo or r.timestamp > hi):
            bad_timestamp = True
            errors.append(
                (index, f"Timestamp {r.timestamp} of message with offset {r.offset} is out of "
                        f"range. The timestamp should be within [{lo_text}, {hi_text}]")
            )
    if not errors:
        return
    if bad_timestamp:
        raise InvalidTimestampError(RecordErrors(TIMESTAMP_SUMMARY, tuple(errors)))
    raise InvalidRecordsError(record_errors_summary(tuple(errors)))


def prepare_for_leader(
    records: Records, headers: list[BatchHeader], config: LogConfig
) -> tuple[bytearray | memoryview, list[BatchHeader]]:
    """The buffer to stamp offsets into and append, with its headers: batches whose codec is
    not the topic's compression.type recompressed; else ``records`` itself when writable (a
    slice of the received request: no copy), or one copy. A batch whose header's maxTimestamp
    is not its records' (``headers`` has theirs) gets it written, with a new CRC."""
    target = config.target_codec
    buf: bytearray | memoryview
    if target is not None and any(h.codec != target for h in headers):
        buf, headers = recompress(records, headers, target, config.max_message_bytes)
    elif isinstance(records, bytearray) or (
        isinstance(records, memoryview) and not records.readonly
    ):
        buf = records
    else:
        buf = bytearray(records)
    if not config.log_append_time:
        pos = 0
        for h in headers:
            if INT64.unpack_from(buf, pos + 35)[0] != h.max_timestamp:
                INT64.pack_into(buf, pos + 35, h.max_timestamp)
                crc = crc32c(memoryview(buf)[pos + CRC_START : pos + h.size])
                UINT32.pack_into(buf, pos + 17, crc)
            pos += h.size
    return buf, headers


def recompress(
    records: Records, headers: list[BatchHeader], codec: int, max_message_bytes: int
) -> tuple[bytearray, list[BatchHeader]]:
    """Rewrite batches whose codec differs from the topic's: records, timestamps and producer
    fields kept, offsets assigned later, new CRC."""
    out = bytearray()
    new_headers = []
    pos = 0
    for h in headers:
        raw = memoryview(records)[pos : pos + h.size]
        pos += h.size
        if h.codec == codec or h.is_control:
            out += raw
            new_headers.append(h)
            continue
        batch = encode_batch(
            decode_records(raw),
            codec=codec,
            producer_id=h.producer_id,
            producer_epoch=h.producer_epoch,
            base_sequence=h.base_sequence,
            is_transactional=h.is_transactional,
        )
        if len(batch) > max_message_bytes:
            raise RecordTooLargeError(
                f"recompressed batch of {len(batch)} bytes exceeds {max_message_bytes}"
            )
        out += batch
        new_headers.append(parse_batch_header(batch))
    return out, new_headers


def batches_to_append_as_follower(
    view: memoryview, log_end_offset: int
) -> tuple[int, list[BatchHeader]]:
    """Of the batches fetched from the leader (every CRC checked), those ending past
    ``log_end_offset`` and where they start in ``view``; (0, []) when there is none.
    CorruptRecordError when the first of them does not start at ``log_end_offset``."""
    headers = []
    for bpos, h in iter_batches(view):
        if crc32c(view[bpos + CRC_START : bpos + h.size]) != h.crc:
            raise CorruptRecordError("record batch CRC mismatch in a fetched batch")
        headers.append(h)
    pos = 0
    start = None
    kept: list[BatchHeader] = []
    for h in headers:
        if h.next_offset <= log_end_offset:
            pos += h.size
            continue
        if start is None:
            if h.base_offset != log_end_offset:
                raise CorruptRecordError(
                    f"follower append at {h.base_offset} does not continue the log end "
                    f"offset {log_end_offset}"
                )
            start = pos
        kept.append(h)
        pos += h.size
    if not kept or start is None:
        return 0, []
    return start, kept
