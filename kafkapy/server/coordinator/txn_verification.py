"""KIP-890 part 1 on the partition leader: before a producer's first transactional write to a
partition, ask the transaction coordinator whether the partition is in its transaction.

The question goes through ``broker.txn_verifier`` (the **verifier seam**: the transaction
coordinator side implements ``verify``; ``AcceptAllVerifier`` below answers NONE for every
partition until it does). The answers are mapped as Kafka's ReplicaManager and
AddPartitionsToTxnManager map them for producers:

- PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH (what producers expect here);
- TRANSACTION_ABORTABLE becomes INVALID_TXN_STATE for Produce up to v10 (clients that do not
  know it; Kafka's defaultError operation), and stays for v11+ (genericError);
- CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS,
  COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR become NOT_ENOUGH_REPLICAS (retriable, and no
  metadata refresh), with a message naming the underlying error;
- INVALID_TXN_STATE ("Partition was not added to the transaction") and others pass through.

Transactions version 2 (KIP-890 part 2): a client of Produce v12+ or TxnOffsetCommit v5+ sends no
AddPartitionsToTxn/AddOffsetsToTxn; the same question then *adds* the partition to its
transaction (``add``; AddPartitionsToTxn v5 without verify_only to a remote coordinator), which
is Kafka's ADD_PARTITION operation; CONCURRENT_TRANSACTIONS (the previous transaction's markers
still being written) is then asked again for up to 100 ms, as Kafka's ReplicaManager does with
add.partitions.to.txn.retry.backoff.ms/.max.ms at their defaults. ``verify_produce`` is the
Produce handler's entry point.

A partition whose producer already has a transaction open there needs no question
(``ProducerStateManager.start_verification`` returns None). With
``transaction.partition.verification.enable=false`` nothing is asked and appends carry
``SKIP_VERIFICATION``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import trio

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import TRANSACTIONAL_BIT
from kafkapy.protocol.wire import INT16, INT32, INT64
from kafkapy.storage.producer_state import SKIP_VERIFICATION

TopicPartition = tuple[str, int]

_RETRIABLE_AS_NOT_ENOUGH_REPLICAS = frozenset(
    {
        ErrorCode.concurrent_transactions,
        ErrorCode.network_exception,
        ErrorCode.coordinator_load_in_progress,
        ErrorCode.coordinator_not_available,
        ErrorCode.not_coordinator,
    }
)
_ATTRIBUTES_LOW_BYTE = 22  # attributes int16 at @21: its low byte holds the transactional bit
_PRODUCER_ID_AT = 43
_PRODUCER_EPOCH_AT = 51
_BASE_SEQUENCE_AT = 53
_MIN_HEADER = 61


class TxnVerifier(Protocol):
    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        add: bool = False,
    ) -> dict[TopicPartition, ErrorCode]: ...


class AcceptAllVerifier:
    """The default verifier: every partition is in the transaction (no coordinator yet)."""

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        add: bool = False,
    ) -> dict[TopicPartition, ErrorCode]:
        return {tp: ErrorCode.none for tp in partitions}


@dataclass(frozen=True, slots=True)
class TransactionalBatch:
    """The first batch of a partition's produce data, when it is transactional."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    base_sequence: int


def transactional_batch(topic: str, partition: int, records) -> TransactionalBatch | None:
    """The producer fields of ``records``' first batch if it is transactional (one byte read
    for the others: the hot path pays nothing more)."""
    if records is None or len(records) < _MIN_HEADER:
        return None
    if not records[_ATTRIBUTES_LOW_BYTE] & TRANSACTIONAL_BIT:
        return None
    return TransactionalBatch(
        topic,
        partition,
        INT64.unpack_from(records, _PRODUCER_ID_AT)[0],
        INT16.unpack_from(records, _PRODUCER_EPOCH_AT)[0],
        INT32.unpack_from(records, _BASE_SEQUENCE_AT)[0],
    )


ABORTABLE_FROM_PRODUCE_VERSION = 11
# Kafka's add.partitions.to.txn.retry.backoff.ms and .max.ms defaults (kafkapy uses the defaults)
ADD_RETRY_BACKOFF_S = 0.020
ADD_RETRY_MAX_S = 0.100
IMPLICIT_ADD_FROM_PRODUCE_VERSION = 12  # Kafka's ADD_PARTITION operation (KIP-890 part 2)
IMPLICIT_ADD_FROM_TXN_OFFSET_COMMIT_VERSION = 5


def map_verification_error(
    code: int, produce_version: int = ABORTABLE_FROM_PRODUCE_VERSION
) -> tuple[ErrorCode, str | None]:
    """A coordinator's answer as the error (and message) a producer using Produce
    ``produce_version`` gets."""
    err = ErrorCode(code)
    if err == ErrorCode.none:
        return err, None
    if err == ErrorCode.producer_fenced:
        return ErrorCode.invalid_producer_epoch, None
    if err == ErrorCode.transaction_abortable:
        if produce_version >= ABORTABLE_FROM_PRODUCE_VERSION:
            return err, None
        return ErrorCode.invalid_txn_state, "Partition was not added to the transaction"
    if err == ErrorCode.invalid_txn_state:
        return err, "Partition was not added to the transaction"
    if err in _RETRIABLE_AS_NOT_ENOUGH_REPLICAS:
        return (
            ErrorCode.not_enough_replicas,
            "Unable to verify the partition has been added to the transaction. "
            f"Underlying error: {err.name.upper()}",
        )
    return err, None


async def verify_partitions(
    broker,
    transactional_id: str,
    batches: Sequence[TransactionalBatch],
    map_error: Callable[[int], tuple[ErrorCode, str | None]] = map_verification_error,
    add: bool = False,
) -> tuple[dict[TopicPartition, object], dict[TopicPartition, tuple[ErrorCode, str | None]]]:
    """Start verification where needed and ask the coordinator (``add``: to add the partitions,
    for a transactions version 2 client). Returns the guard each partition's append must
    present, and the partitions refused (error, message) as ``map_error`` maps the
    coordinator's answers (producers' mapping by default; the group coordinator's
    TxnOffsetCommit maps them its own way)."""
    guards: dict[TopicPartition, object] = {}
    if not broker.config.transaction_partition_verification_enable:
        return {(b.topic, b.partition): SKIP_VERIFICATION for b in batches}, {}
    if not batches:
        return guards, {}
    by_tp = {(b.topic, b.partition): b for b in batches}

    def start(tps: list[TopicPartition]) -> list[TopicPartition]:
        """Start (again) the verification of ``tps``: those that need the coordinator."""
        out = []
        for tp in tps:
            b = by_tp[tp]
            plog = broker.topics.log(b.topic, b.partition)
            guard = None
            if plog is not None:  # (else the append reports the partition's error)
                guard = plog.producer_state.start_verification(
                    b.producer_id, b.base_sequence, b.producer_epoch
                )
            if guard is None:
                guards.pop(tp, None)
            else:
                guards[tp] = guard
                out.append(tp)
        return out

    first = batches[0]
    ask = start(list(by_tp))
    answers: dict[TopicPartition, ErrorCode] = {}
    deadline = trio.current_time() + ADD_RETRY_MAX_S
    while ask:
        answers.update(
            await broker.txn_verifier.verify(
                transactional_id, first.producer_id, first.producer_epoch, ask, add
            )
        )
        # an add answered CONCURRENT_TRANSACTIONS (the previous transaction's markers are
        # being written) is asked again shortly, with a fresh guard: the marker clears the old
        again = [tp for tp in ask if answers.get(tp) == ErrorCode.concurrent_transactions]
        if not add or not again or trio.current_time() + ADD_RETRY_BACKOFF_S > deadline:
            break
        await trio.sleep(ADD_RETRY_BACKOFF_S)
        ask = start(again)
        for tp in set(again) - set(ask):  # its transaction is open here now
            answers[tp] = ErrorCode.none
    if add:
        # added: the previous transaction's marker may have cleared the guard since it was
        # handed out; under version 2 that marker's epoch bump refuses a late write of the old
        # transaction anyway, so the guard is renewed
        start([tp for tp in ask if answers.get(tp) == ErrorCode.none])
    refused = {}
    for tp, answer in answers.items():
        err, msg = map_error(answer)
        if err != ErrorCode.none:
            refused[tp] = (err, msg)
    return guards, refused


async def verify_produce(
    broker,
    transactional_id: str | None,
    batches: Sequence[TransactionalBatch],
    produce_version: int,
) -> tuple[dict[TopicPartition, object], dict[TopicPartition, tuple[ErrorCode, str | None]]]:
    """``verify_partitions`` for a Produce request: from v12 the client uses transactions version
    2 (KIP-890 part 2: it sends no AddPartitionsToTxn) and the coordinator adds the partitions
    the leader asks about; before, they are only verified."""
    return await verify_partitions(
        broker,
        transactional_id or "",
        batches,
        partial(map_verification_error, produce_version=produce_version),
        add=produce_version >= IMPLICIT_ADD_FROM_PRODUCE_VERSION,
    )
