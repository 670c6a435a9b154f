"""Control batches: the commit/abort markers that end a transaction on a partition (sans-io).

A control batch is a magic-2 batch with attributes bit 5 (control) and bit 4 (transactional)
set, the producer id and epoch of the transaction, base sequence -1, and one record (Kafka's
``EndTransactionMarker``):

* key (4 bytes): version int16 (0), type int16 — 0 ABORT, 1 COMMIT (Kafka's ControlRecordType;
  other types, e.g. the KRaft ones, are not transaction markers);
* value (6 bytes): version int16 (0), coordinator epoch int32 — the epoch of the transaction
  coordinator that wrote it, so a stale coordinator cannot end a transaction again.

The batch takes one offset in the log like any other; consumers skip it (it is never delivered
as a record). A control batch whose record was removed by the cleaner (an empty batch) ends
nothing. Readers accept a newer key/value version as Kafka does (the first fields keep their
meaning) and refuse a negative one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .record_batch import (
    CONTROL_BIT,
    NO_SEQUENCE,
    CorruptRecordError,
    InvalidRecordError,
    Record,
    decode_records,
    encode_batch,
    parse_batch_header,
)

ABORT = 0
COMMIT = 1
CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    committed: bool
    coordinator_epoch: int

    @property
    def type_name(self) -> str:
        return "COMMIT" if self.committed else "ABORT"


def control_key(control_type: int) -> bytes:
    return _KEY.pack(CONTROL_KEY_VERSION, control_type)


def end_txn_marker_value(coordinator_epoch: int) -> bytes:
    return _VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)


def encode_end_txn_marker(
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    committed: bool,
    timestamp_ms: int,
) -> bytearray:
    """One control batch (offset 0, no leader epoch yet) ending ``producer_id``'s transaction;
    a bytearray so the log can stamp its offset and leader epoch in place."""
    if producer_id < 0:
        raise ValueError("an end transaction marker needs a producer id")
    record = Record(
        0,
        timestamp_ms,
        control_key(COMMIT if committed else ABORT),
        end_txn_marker_value(coordinator_epoch),
    )
    return bytearray(
        encode_batch(
            [record],
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=NO_SEQUENCE,
            is_transactional=True,
            is_control=True,
        )
    )


def control_type_of(key: bytes | None) -> int:
    """The ControlRecordType of a control record's key; CorruptRecordError if unreadable."""
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError("control record key is shorter than 4 bytes")
    version, ctype = _KEY.unpack_from(key)
    if version < 0:
        raise InvalidRecordError(f"invalid control record key version {version}")
    return ctype


def parse_end_txn_marker(record: Record) -> EndTxnMarker:
    """The marker a control record holds; InvalidRecordError if it is not a commit/abort."""
    ctype = control_type_of(record.key)
    if ctype not in (ABORT, COMMIT):
        raise InvalidRecordError(f"control record type {ctype} is not a transaction marker")
    value = record.value
    if value is None or len(value) < _VALUE.size:
        raise InvalidRecordError(
            "Invalid value size found for end transaction marker. Must have at least "
            f"{_VALUE.size} bytes, but found only {0 if value is None else len(value)}"
        )
    version, coordinator_epoch = _VALUE.unpack_from(value)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for end transaction marker: {version}")
    return EndTxnMarker(ctype == COMMIT, coordinator_epoch)


def marker_of_batch(batch: bytes | bytearray | memoryview) -> EndTxnMarker | None:
    """The marker of one whole control batch; None when the batch holds no record (the cleaner
    emptied it) or its record is not a transaction marker."""
    h = parse_batch_header(batch)
    if not h.attributes & CONTROL_BIT:
        raise ValueError("not a control batch")
    if h.records_count == 0:
        return None
    records = decode_records(batch)
    if not records:
        return None
    if control_type_of(records[0].key) not in (ABORT, COMMIT):
        return None
    return parse_end_txn_marker(records[0])
