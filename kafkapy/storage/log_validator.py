"""Checks and conversions of the batches a partition log is asked to append (Kafka's
LogValidator, and the batch checks of UnifiedLog.analyzeAndValidateRecords).

- As the leader (``validate_for_leader``, ``prepare_for_leader``): framing, sizes, CRCs and keys
  of a compacted topic (protocol/record_batch.validate_batches), CreateTime timestamps within
  message.timestamp.before/after.max.ms, and batches rewritten in the topic's compression.type;
  the result is a buffer the log stamps offsets into in place.
- As a follower (``batches_to_append_as_follower``): CRCs of the fetched batches, and the first
  new one must continue the log end offset.

Nothing here touches the log's files; PartitionLog.append_as_leader/append_as_follower
(storage/log.py) call these before they append.
"""

from __future__ import annotations

from kafkapy.protocol.record_batch import (
    CRC_START,
    BatchHeader,
    CorruptRecordError,
    RecordBatchError,
    RecordTooLargeError,
    crc32c,
    decode_records,
    encode_batch,
    iter_batches,
    parse_batch_header,
    validate_batches,
)
from kafkapy.storage.config import LONG_MAX, LogConfig

Records = bytes | bytearray | memoryview


class InvalidTimestampError(RecordBatchError):
    """INVALID_TIMESTAMP: a CreateTime timestamp outside message.timestamp.before/after.max.ms."""

    error_code = 32


def validate_for_leader(records: Records, config: LogConfig, now_ms: int) -> list[BatchHeader]:
    """The headers of ``records`` once they pass the leader's checks (RecordBatchError else)."""
    headers = validate_batches(
        records, max_batch_size=config.max_message_bytes, require_keys=config.compact
    )
    if not config.log_append_time:
        check_timestamps(records, headers, now_ms, config)
    return headers


def prepare_for_leader(
    records: Records, headers: list[BatchHeader], config: LogConfig
) -> tuple[bytearray | memoryview, list[BatchHeader]]:
    """The buffer to stamp offsets into and append, with its headers: batches whose codec is
    not the topic's compression.type recompressed; else ``records`` itself when writable (a
    slice of the received request: no copy), or one copy."""
    target = config.target_codec
    if target is not None and any(h.codec != target for h in headers):
        return recompress(records, headers, target, config.max_message_bytes)
    if isinstance(records, bytearray) or (
        isinstance(records, memoryview) and not records.readonly
    ):
        return records, headers
    return bytearray(records), headers


def check_timestamps(
    records: Records, headers: list[BatchHeader], now_ms: int, config: LogConfig
) -> None:
    """CreateTime timestamps must lie in [now - before.max.ms, now + after.max.ms]."""
    before = config.message_timestamp_before_max_ms
    after = config.message_timestamp_after_max_ms
    lo = now_ms - before if before < LONG_MAX else None
    hi = now_ms + after if after < LONG_MAX else None
    if lo is None and hi is None:
        return
    pos = 0
    for h in headers:
        check_all = lo is not None and (h.base_timestamp < lo or h.last_offset_delta > 0)
        if check_all or (hi is not None and h.max_timestamp > hi):
            for r in decode_records(memoryview(records)[pos : pos + h.size]):
                ts = r.timestamp
                if ts >= 0 and ((lo is not None and ts < lo) or (hi is not None and ts > hi)):
                    raise InvalidTimestampError(
                        f"Timestamp {ts} of message with offset {r.offset} is out of range. "
                        f"The timestamp should be within [{lo if lo is not None else -1}, "
                        f"{hi if hi is not None else LONG_MAX}]"
                    )
        pos += h.size


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
