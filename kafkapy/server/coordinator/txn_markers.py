"""Writing transaction markers as a partition leader (the **marker-writing seam**).

``write_txn_markers(broker, markers)`` is what Kafka's WriteTxnMarkers handler does for each
marker: for every partition named, append a commit or abort control batch as the leader
(storage: PartitionLog.append_end_txn_marker), wait until the ISR has it (markers are written
with acks=all semantics, within ``request.timeout.ms``), and, for a ``__consumer_offsets``
partition, tell the group coordinator so that offsets committed in the transaction are applied
(commit) or dropped (abort) — the **group hook**
``broker.groups.on_txn_marker(partition, producer_id, committed)``, called only when that
partition's marker is replicated and when the group service provides it. Each marker goes
through the one leader write path (server/replication/partition.py), flushed when flush.messages /
flush.ms say so, as Kafka's log append does.

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

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import RecordBatchError
from kafkapy.storage.errors import StorageError

from ..replication.partition import Partition, WriteMark, complete_writes

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
    """Append one marker through the partition's write path; returns (error, write mark)."""
    topic, partition = tp
    if broker.topics.log(topic, partition) is None:  # no replica here (Kafka's getMagic)
        return ErrorCode.unknown_topic_or_partition, None
    if marker.producer_id < 0:
        # Kafka cannot build the marker ("End transaction marker requires a valid
        # producerId") and answers the request with UNKNOWN_SERVER_ERROR
        return ErrorCode.unknown_server_error, None
    part = Partition.for_write(broker, topic, partition, refuse_offline=True)
    if isinstance(part, ErrorCode):
        return part, None
    if part.min_isr_refusal() is not None:
        return ErrorCode.not_enough_replicas, None
    try:
        res = part.append_marker(
            marker.producer_id,
            marker.producer_epoch,
            marker.coordinator_epoch,
            marker.committed,
            now_ms,
            transaction_version=marker.transaction_version,
        )
    except (StorageError, RecordBatchError) as e:
        log.info(
            "transaction marker refused tp=%s-%d producer_id=%d error=%s",
            topic,
            partition,
            marker.producer_id,
            e,
        )
        return ErrorCode(e.error_code), None
    return ErrorCode.none, part.mark(res.last_offset)


async def write_txn_markers(
    broker, markers: list[TxnMarker]
) -> list[dict[TopicPartition, ErrorCode]]:
    """Append and replicate each marker on each of its partitions; one error map per marker,
    in order."""
    now = now_ms()
    results: list[dict[TopicPartition, ErrorCode]] = []
    pending: list[tuple[int, TopicPartition]] = []  # (marker index, tp) of each write
    writes: list[WriteMark] = []
    for i, marker in enumerate(markers):
        errors: dict[TopicPartition, ErrorCode] = {}
        for tp in marker.partitions:
            err, mark = _append_marker(broker, marker, tp, now)
            errors[tp] = err
            if mark is not None:
                pending.append((i, tp))
                writes.append(mark)
        results.append(errors)
    if writes:  # flush when due, then one wait for the ISR over all the partitions
        done = await complete_writes(broker, writes, broker.config.request_timeout_ms / 1000)
        for (i, tp), err in zip(pending, done, strict=True):
            if err != ErrorCode.none:
                results[i][tp] = ErrorCode(err)
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
