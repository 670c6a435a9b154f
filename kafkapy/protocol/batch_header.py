"""The header of a Kafka record batch, magic 2 (sans-io): its layout, attribute bits and
sentinel values, the record-batch errors with their Kafka error codes, :class:`BatchHeader`,
:class:`Record`, and walking the headers of concatenated batches.

Batch header layout (big-endian, 61 bytes)::

    @0  baseOffset int64        @8  batchLength int32 (bytes after this field)
    @12 partitionLeaderEpoch int32   @16 magic int8   @17 crc uint32 (CRC32C of @21..end)
    @21 attributes int16 (bits 0-2 codec, bit 3 LogAppendTime, bit 4 transactional, bit 5 control)
    @23 lastOffsetDelta int32   @27 baseTimestamp int64   @35 maxTimestamp int64
    @43 producerId int64   @51 producerEpoch int16   @53 baseSequence int32   @57 recordsCount int32
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

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
HEADER = struct.Struct(">qiibIhiqqqhii")

Buffer = bytes | bytearray | memoryview


class RecordErrors(NamedTuple):
    """KIP-467: the records a produce refused, as the Produce response carries them."""

    message: str  # the partition's error_message, Kafka's summary of the errors
    errors: tuple[tuple[int, str], ...]  # (batch_index, batch_index_error_message) per record


class RecordBatchError(Exception):
    """Base for record-batch errors; ``error_code`` is the Kafka protocol error code. The
    Produce response carries no error_message for them (Kafka sends none), except the summary
    of ``record_errors`` when there are some."""

    error_code = 2
    record_errors: RecordErrors | None = None


class RecordValidationError(RecordBatchError):
    """Kafka's RecordValidationException: records that parse but break a rule (a keyless record
    in a compacted topic, a timestamp out of range), named one by one (KIP-467)."""

    def __init__(self, record_errors: RecordErrors) -> None:
        super().__init__(record_errors.message)
        self.record_errors = record_errors


class CorruptRecordError(RecordBatchError):
    """CORRUPT_MESSAGE: bad CRC, truncated or malformed bytes."""

    error_code = 2


class RecordTooLargeError(RecordBatchError):
    """MESSAGE_TOO_LARGE: a batch is larger than message.max.bytes."""

    error_code = 10


class InvalidRecordError(RecordBatchError):
    """INVALID_RECORD: well-formed bytes that break a record rule."""

    error_code = 87


class InvalidRecordsError(RecordValidationError, InvalidRecordError):
    """INVALID_RECORD naming the records (keyless records in a compacted topic)."""

    error_code = 87


class UnreadableRecordsError(RecordBatchError):
    """UNKNOWN_SERVER_ERROR: records Kafka 4.4's reader fails on outside its record checks (a
    record-length varint longer than 5 bytes, compressed data that does not decompress, inner
    offsets of a compressed batch that do not count 0..n-1); Kafka answers these with
    UNKNOWN_SERVER_ERROR and no message, and so does kafkapy."""

    error_code = -1


class OffsetDeltaError(InvalidRecordError):
    """A record's offset delta is not its index in the batch (INVALID_RECORD on kafkapy for an
    uncompressed batch, which Kafka 4.4 accepts; UNKNOWN_SERVER_ERROR in a compressed one, as
    Kafka 4.4)."""


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
    return BatchHeader(*HEADER.unpack_from(buf, pos))


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
