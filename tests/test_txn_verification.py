"""KIP-890 verification on the partition leader: which produce batches need it and how the
coordinator's answers map to the errors producers get (Kafka's ReplicaManager and
AddPartitionsToTxnManager)."""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.server.coordinator.txn_verification import (
    TransactionalBatch,
    map_verification_error,
    transactional_batch,
)


def test_only_transactional_batches_are_picked_with_their_producer_fields() -> None:
    rec = [Record(0, 1, None, b"v", [])]
    txn = encode_batch(
        rec, producer_id=42, producer_epoch=3, base_sequence=7, is_transactional=True
    )
    idem = encode_batch(rec, producer_id=42, producer_epoch=3, base_sequence=7)
    assert transactional_batch("t", 1, memoryview(txn)) == TransactionalBatch("t", 1, 42, 3, 7)
    assert transactional_batch("t", 1, idem) is None
    assert transactional_batch("t", 1, encode_batch(rec)) is None
    assert transactional_batch("t", 1, None) is None
    assert transactional_batch("t", 1, txn[:20]) is None


def test_coordinator_answers_map_as_kafkas() -> None:
    assert map_verification_error(E.none) == (E.none, None)
    assert map_verification_error(E.producer_fenced) == (E.invalid_producer_epoch, None)
    err, msg = map_verification_error(E.invalid_txn_state)
    assert err == E.invalid_txn_state and msg == "Partition was not added to the transaction"
    for retriable in (
        E.concurrent_transactions,
        E.network_exception,
        E.coordinator_load_in_progress,
        E.coordinator_not_available,
        E.not_coordinator,
    ):
        err, msg = map_verification_error(retriable)
        assert err == E.not_enough_replicas
        assert msg.endswith(f"Underlying error: {retriable.name.upper()}")
    # TRANSACTION_ABORTABLE only for producers that know it (Produce v11+)
    assert map_verification_error(E.transaction_abortable, 11)[0] == E.transaction_abortable
    assert map_verification_error(E.transaction_abortable, 10)[0] == E.invalid_txn_state
