"""Writing transaction markers as a partition leader (the **marker-writing seam**).

``write_txn_markers(broker, markers)`` is what Kafka's WriteTxnMarkers handler does for each
marker: for every partition named, append a commit or abort control batch as the leader
(storage: PartitionLog.append_end_txn_marker), wait until the ISR has it (markers are written
with acks=all semantics, within ``request.timeout.ms``), and, for a ``__consumer_offsets``
partition, tell the group coordinator so that offsets committed in the transaction are applied
(commit) or dropped (abort) — the **group hook**
``broker.groups.on_txn_marker(partition, producer_id, committed)``, called only when that
partition's marker is replicated and when the group service provides it.

Per partition errors, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION (no such partition here),
NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS (ISR below min.insync.replicas),
INVALID_PRODUCER_EPOCH (older producer epoch than the partition has seen),
TRANSACTION_COORDINATOR_FENCED (older coordinator epoch), KAFKA_STORAGE_ERROR, and after the
append NOT_ENOUGH_REPLICAS_AFTER_APPEND or REQUEST_TIMED_OUT. Used by the WriteTxnMarkers
handler (server/apis/write_txn_markers.py) and, in process, by the transaction coordinator's
marker sender for partitions led by this broker.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import trio

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import RecordBatchError
from kafkapy.storage.errors import StorageError

from ..partition_lookup import lookup

log = logging.getLogger("kafkapy.txn_markers")

OFFSETS_TOPIC = "__consumer_offsets"
TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class TxnMarker:
    """One WriteTxnMarkers entry: end ``producer_id``'s transaction on ``partitions``."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partitions: list[TopicPartition] = field(default_factory=list)
    transaction_version: int = 0  # WriteTxnMarkers v2 (KIP-1228): 2 for KIP-890 part 2


def _append_marker(broker, marker: TxnMarker, tp: TopicPartition, now_ms: int):
    """Append one marker; returns (error, leader epoch, last offset)."""
    topic, partition = tp
    if broker.topics.log(topic, partition) is None:  # no replica here (Kafka's getMagic)
        return ErrorCode.unknown_topic_or_partition, -1, -1
    if marker.producer_id < 0:
        # Kafka cannot build the marker ("End transaction marker requires a valid
        # producerId") and answers the request with UNKNOWN_SERVER_ERROR
        return ErrorCode.unknown_server_error, -1, -1
    ref = lookup(broker, topic, partition)
    if ref.error != ErrorCode.none:
        return ref.error, -1, -1
    replicas = broker.replicas
    if replicas is not None:
        rp = replicas.leader_partition(topic, partition)
        if rp is not None and len(rp.isr) < replicas.min_isr(topic):
            return ErrorCode.not_enough_replicas, -1, -1
    try:
        res = ref.log.append_end_txn_marker(
            marker.producer_id,
            marker.producer_epoch,
            marker.coordinator_epoch,
            marker.committed,
            transaction_version=marker.transaction_version,
            leader_epoch=ref.leader_epoch,
            now_ms=now_ms,
        )
    except (StorageError, RecordBatchError) as e:
        log.info(
            "transaction marker refused tp=%s-%d producer_id=%d error=%s",
            topic,
            partition,
            marker.producer_id,
            e,
        )
        return ErrorCode(e.error_code), -1, -1
    if replicas is not None:
        replicas.after_leader_append(topic, partition)
    return ErrorCode.none, ref.leader_epoch, res.last_offset


async def write_txn_markers(
    broker, markers: list[TxnMarker]
) -> list[dict[TopicPartition, ErrorCode]]:
    """Append and replicate each marker on each of its partitions; one error map per marker,
    in order."""
    now = now_ms()
    results: list[dict[TopicPartition, ErrorCode]] = []
    pending: list[tuple[int, TopicPartition, int, int]] = []  # (marker index, tp, epoch, last)
    for i, marker in enumerate(markers):
        errors: dict[TopicPartition, ErrorCode] = {}
        for tp in marker.partitions:
            err, epoch, last = _append_marker(broker, marker, tp, now)
            errors[tp] = err
            if err == ErrorCode.none:
                pending.append((i, tp, epoch, last))
        results.append(errors)
    for _i, tp, _epoch, _last in pending:  # a marker moves the partition's LSO: wake fetches
        broker.appended.notify(tp)
    replicas = broker.replicas
    if replicas is not None:
        # one deadline for all: the waits overlap (each returns once its partition is done)
        deadline = trio.current_time() + broker.config.request_timeout_ms / 1000
        for i, (topic, partition), epoch, last in pending:
            left = max(deadline - trio.current_time(), 0.0)
            err = await replicas.await_replication(topic, partition, epoch, last + 1, left)
            if err != ErrorCode.none:
                results[i][(topic, partition)] = ErrorCode(err)
    _notify_groups(broker, markers, results)
    return results


def _notify_groups(broker, markers: list[TxnMarker], results) -> None:
    """The group hook: markers written on __consumer_offsets partitions complete the
    transactional offset commits of their producer."""
    hook = getattr(broker.groups, "on_txn_marker", None)
    if hook is None:
        return
    for marker, errors in zip(markers, results, strict=True):
        for (topic, partition), err in errors.items():
            if topic != OFFSETS_TOPIC or err != ErrorCode.none:
                continue
            try:
                hook(partition, marker.producer_id, marker.committed)
            except Exception:
                log.exception(
                    "group coordinator failed to apply a transaction marker partition=%d "
                    "producer_id=%d",
                    partition,
                    marker.producer_id,
                )
                errors[(topic, partition)] = ErrorCode.unknown_server_error
