"""__transaction_state records: the spec, the byte layout of Kafka's TransactionLogKey/Value."""

from __future__ import annotations

import json
import struct

import pytest

from kafkapy.coordinator.record_codec import RecordFormatError
from kafkapy.coordinator.txn import records as rec
from kafkapy.coordinator.txn.metadata import TxnTransit
from kafkapy.coordinator.txn.states import TxnState

SPEC = json.loads(rec.SPEC_PATH.read_text())


def test_spec_states_match_the_code():
    assert SPEC["transaction_status"] == {s.display_name: int(s) for s in TxnState}


def test_key_bytes():
    assert rec.encode_key("tx-1") == b"\x00\x00\x00\x04tx-1"
    assert rec.decode_key(b"\x00\x00\x00\x04tx-1") == "tx-1"
    assert rec.decode_key(b"\x00\x05\x00\x00") is None  # a key version Kafka may add later


def _v0(pid, epoch, timeout, status, partitions, updated, started) -> bytes:
    """TransactionLogValue v0 built by hand from Kafka's schema."""
    out = struct.pack(">hqhib", 0, pid, epoch, timeout, status)
    if partitions is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(partitions))
        for topic, ids in partitions:
            out += struct.pack(">h", len(topic)) + topic.encode()
            out += struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return out + struct.pack(">qq", updated, started)


def test_ongoing_value_bytes_and_round_trip():
    t = TxnTransit(
        producer_id=4001,
        last_producer_id=-1,
        producer_epoch=3,
        last_producer_epoch=-1,
        timeout_ms=60_000,
        state=TxnState.ONGOING,
        partitions=frozenset({("orders", 2), ("orders", 0), ("__consumer_offsets", 17)}),
        start_ms=1_700_000_000_000,
        last_update_ms=1_700_000_000_500,
    )
    data = rec.encode_state(t)
    assert data == _v0(
        4001,
        3,
        60_000,
        1,
        [("__consumer_offsets", [17]), ("orders", [0, 2])],
        1_700_000_000_500,
        1_700_000_000_000,
    )
    md = rec.decode_state("tx", data)
    assert md is not None
    assert (md.producer_id, md.producer_epoch, md.timeout_ms, md.state) == (
        4001,
        3,
        60_000,
        TxnState.ONGOING,
    )
    assert md.partitions == set(t.partitions)
    assert (md.start_ms, md.last_update_ms) == (t.start_ms, t.last_update_ms)
    assert md.last_producer_epoch == -1 and md.pending_state is None


def test_empty_state_stores_a_null_partition_list():
    t = TxnTransit(7, -1, 0, -1, 1000, TxnState.EMPTY, frozenset(), -1, 5)
    assert rec.encode_state(t) == _v0(7, 0, 1000, 0, None, 5, -1)
    with pytest.raises(ValueError):
        rec.encode_state(
            TxnTransit(7, -1, 0, -1, 1000, TxnState.EMPTY, frozenset({("t", 0)}), -1, 5)
        )


def test_flexible_v1_value_is_read_and_unknown_tags_skipped():
    out = struct.pack(">hqhib", 1, 9, 2, 30_000, 2)  # PrepareCommit
    out += bytes([2])  # compact array: 1 item
    out += bytes([2]) + b"t" + bytes([3]) + struct.pack(">ii", 0, 5)  # topic "t", [0, 5]
    out += bytes([0])  # the item's tagged fields
    out += struct.pack(">qq", 20, 10)
    out += bytes([1, 9, 2]) + b"\x07\x07"  # one unknown tag (9) of 2 bytes
    md = rec.decode_state("tx", out)
    assert md is not None and md.state == TxnState.PREPARE_COMMIT
    assert md.partitions == {("t", 0), ("t", 5)} and md.producer_id == 9


def test_tombstone_and_garbage():
    assert rec.decode_state("tx", None) is None
    with pytest.raises(RecordFormatError):
        rec.decode_state("tx", b"\x00\x09garbage")
    with pytest.raises(RecordFormatError):
        rec.decode_state("tx", _v0(1, 0, 1000, 42, None, 0, -1))  # unknown state id


def test_transactions_v2_transit_is_written_as_flexible_v1_with_its_tagged_fields():
    t = TxnTransit(
        producer_id=77,
        last_producer_id=70,
        producer_epoch=32767,
        last_producer_epoch=32766,
        timeout_ms=60_000,
        state=TxnState.PREPARE_COMMIT,
        partitions=frozenset({("t", 0)}),
        start_ms=10,
        last_update_ms=20,
        client_transaction_version=2,
        next_producer_id=78,
    )
    data = rec.encode_state(t)
    assert data[:2] == b"\x00\x01"  # value version 1
    # tags in ascending order: previous id (0), next id (1), client version (2), next epoch (3)
    assert data.endswith(
        bytes([4, 0, 8]) + struct.pack(">q", 70) + bytes([1, 8]) + struct.pack(">q", 78)
        + bytes([2, 2]) + struct.pack(">h", 2) + bytes([3, 2]) + struct.pack(">h", 0)
    )
    md = rec.decode_state("tx", data)
    assert md is not None
    assert (md.producer_id, md.producer_epoch, md.last_producer_id) == (77, 32767, 70)
    assert (md.next_producer_id, md.client_transaction_version) == (78, 2)


def test_version_1_client_transit_stays_v0():
    t = TxnTransit(4, -1, 1, -1, 1000, TxnState.EMPTY, frozenset(), -1, 5)
    assert rec.encode_state(t)[:2] == b"\x00\x00"
    md = rec.decode_state("tx", rec.encode_state(t))
    assert md is not None and md.client_transaction_version == 0 and md.next_producer_id == -1
