"""Keys and values of __transaction_state records, encoded as
protocol_specs/transaction_state.json describes (Kafka's TransactionLogKey/TransactionLogValue).

``encode_state`` turns a prepared transit into the record Kafka would write; ``decode_state``
reads a record back into a ``TxnMetadata`` while a partition is loaded (a null value is a
tombstone: the id expired). Like Kafka, the last producer epoch is not stored, and an Empty state
stores no partition list (null). Transitions of transactions version 2 clients are written as
value version 1 with its tagged fields (previous and next producer id, client transaction
version); the others as version 0, as before.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from kafkapy.coordinator import record_codec as codec
from kafkapy.coordinator.record_codec import RecordFormatError
from kafkapy.specs import spec_path

from .metadata import NO_PRODUCER_ID, TV_0, TV_2, TxnMetadata, TxnTransit
from .states import TxnState

SPEC_PATH = spec_path("transaction_state.json")
KEY = "TransactionLogKey"
VALUE = "TransactionLogValue"

__all__ = ["RecordFormatError", "decode_key", "decode_state", "encode_key", "encode_state"]


@cache
def spec() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text())


def encode_key(transactional_id: str) -> bytes:
    return codec.encode_key(spec(), KEY, {"transactional_id": transactional_id})


def decode_key(data: bytes) -> str | None:
    """The transactional id of a key; None for a key version this spec does not list."""
    got = codec.decode_key(spec(), data)
    return None if got is None else got[1]["transactional_id"]


def encode_state(t: TxnTransit) -> bytes:
    if t.state == TxnState.EMPTY and t.partitions:
        raise ValueError(f"an Empty transaction has no partitions: {t}")
    partitions: list[dict] | None = None
    if t.state != TxnState.EMPTY:
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(t.partitions):
            by_topic.setdefault(topic, []).append(p)
        partitions = [{"topic": k, "partition_ids": v} for k, v in by_topic.items()]
    values = {
        "producer_id": t.producer_id,
        "producer_epoch": t.producer_epoch,
        "transaction_timeout_ms": t.timeout_ms,
        "transaction_status": int(t.state),
        "transaction_partitions": partitions,
        "transaction_last_update_timestamp_ms": t.last_update_ms,
        "transaction_start_timestamp_ms": t.start_ms,
    }
    if t.client_transaction_version < TV_2:
        return codec.encode_value(spec(), VALUE, values, 0)

    def tagged(v: int, default: int) -> int | None:
        return None if v == default else v

    values.update(
        previous_producer_id=tagged(t.last_producer_id, NO_PRODUCER_ID),
        next_producer_id=tagged(t.next_producer_id, NO_PRODUCER_ID),
        client_transaction_version=tagged(t.client_transaction_version, TV_0),
        next_producer_epoch=None if t.next_producer_id == NO_PRODUCER_ID else 0,
    )
    return codec.encode_value(spec(), VALUE, values, 1)


def decode_state(transactional_id: str, data: bytes | None) -> TxnMetadata | None:
    """The metadata a value holds; None for a tombstone."""
    if data is None:
        return None
    v = codec.decode_value(spec(), VALUE, data)
    try:
        state = TxnState(v["transaction_status"])
    except ValueError:
        raise RecordFormatError(f"unknown transaction status {v['transaction_status']}") from None
    md = TxnMetadata(
        transactional_id,
        producer_id=v["producer_id"],
        producer_epoch=v["producer_epoch"],
        timeout_ms=v["transaction_timeout_ms"],
        state=state,
        start_ms=v["transaction_start_timestamp_ms"],
        last_update_ms=v["transaction_last_update_timestamp_ms"],
        last_producer_id=v["previous_producer_id"] if v["previous_producer_id"] is not None else -1,
        client_transaction_version=v["client_transaction_version"] or TV_0,
        next_producer_id=v["next_producer_id"] if v["next_producer_id"] is not None else -1,
    )
    if state != TxnState.EMPTY:
        for item in v["transaction_partitions"] or []:
            md.partitions.update((item["topic"], p) for p in item["partition_ids"])
    return md
