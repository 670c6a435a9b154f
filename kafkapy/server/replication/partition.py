"""The one write path to a partition this broker leads: Kafka's Partition.appendRecordsToLeader,
and ReplicaManager's DelayedProduce for writes that wait for the ISR (acks=all).

Every leader write goes this way — Produce (server/apis/produce.py), transaction markers
(server/coordinator/txn_markers.py) and the coordinators' internal topics
(server/coordinator/internal_log.py for __consumer_offsets and __transaction_state):

1. ``Partition.for_write(broker, topic, partition)`` looks the partition up once: its topic,
   its log, and — in ZooKeeper mode — its replication state (kafkapy.replication.partition
   .PartitionReplica, the sans-io half of Kafka's Partition) and leader epoch; or the error to
   answer (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR).
2. ``min_isr_refusal()`` is Kafka's min.insync.replicas check before an acks=all append
   (NOT_ENOUGH_REPLICAS with Kafka's message; never refused in embedded mode).
3. ``append_records`` / ``append_marker`` append as the leader under the looked-up epoch, then
   advance the high watermark (ZooKeeper mode; embedded logs move it themselves) and wake the
   waiters on the partition (long-poll fetches, acks=all waits: server/replication/purgatory.py).
   Storage and validation errors are raised to the caller, which maps them (produce answers them per
   partition, the coordinators raise InternalAppendError).
4. ``complete_writes(broker, writes, timeout_s)``: flush.messages / flush.ms when due (the fsync
   in a worker thread: server/log_manager/log_flusher.py; KAFKA_STORAGE_ERROR when it fails), then —
   for acks=all, in ZooKeeper mode — one wait over all the written partitions until the high
   watermark covers each write (``await_replication``, on purgatory events, never polling),
   answered per write with Kafka's checkEnoughReplicasReachOffset outcome
   (kafkapy.replication.partition.replication_outcome): NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
   NOT_LEADER_OR_FOLLOWER (leadership or its epoch moved), REQUEST_TIMED_OUT at the deadline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import trio

from kafkapy import clock
from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication.partition import PartitionReplica, replication_outcome
from kafkapy.storage.errors import StorageError

from ..log_manager.log_flusher import flush_log

if TYPE_CHECKING:
    from kafkapy.storage.log import AppendResult, PartitionLog

    from ..broker import Broker

TopicPartition = tuple[str, int]


class WriteMark(NamedTuple):
    """What a write must see replicated: the high watermark of (``topic``, ``partition``) at
    ``end_offset`` (the offset after the write) under leader epoch ``leader_epoch``."""

    topic: str
    partition: int
    leader_epoch: int
    end_offset: int
    log: PartitionLog | None = None  # the log written to (flushed when due), if known


@dataclass(slots=True)
class Partition:
    """A partition led here, looked up once for a write (``for_write``)."""

    broker: Broker
    topic: str
    partition: int
    log: PartitionLog
    leader_epoch: int
    replica: PartitionReplica | None  # ZooKeeper mode: the ISR state; None embedded
    leader: int  # the leader the partition state names (embedded mode; -1 unknown)

    @classmethod
    def for_write(
        cls, broker: Broker, topic: str, partition: int, *, refuse_offline: bool = False
    ) -> Partition | ErrorCode:
        """The partition, or the error to answer: UNKNOWN_TOPIC_OR_PARTITION (no such topic or
        partition), NOT_LEADER_OR_FOLLOWER (no replica here, or not its leader: ZooKeeper mode),
        KAFKA_STORAGE_ERROR (``refuse_offline`` and its log directory failed)."""
        topics = broker.topics
        assert topics is not None  # serving: the broker has started
        info = topics.get(topic)
        if info is None or partition not in info.partitions:
            return ErrorCode.unknown_topic_or_partition
        plog = topics.log(topic, partition)
        if plog is None:
            return ErrorCode.not_leader_or_follower
        if refuse_offline and plog.offline:
            return ErrorCode.kafka_storage_error
        replicas = broker.replicas
        if replicas is None:
            state = info.states.get(partition)
            epoch, leader = (state.leader_epoch, state.leader) if state else (0, -1)
            return cls(broker, topic, partition, plog, epoch, None, leader)
        rp = replicas.leader_partition(topic, partition)
        if rp is None:
            return ErrorCode.not_leader_or_follower
        return cls(broker, topic, partition, plog, rp.leader_epoch, rp, rp.leader)

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)

    def min_isr_refusal(self) -> str | None:
        """Kafka's message when the ISR is smaller than min.insync.replicas (an acks=all write
        is refused with NOT_ENOUGH_REPLICAS); None when it may be written."""
        rp, replicas = self.replica, self.broker.replicas
        if rp is None or replicas is None:
            return None
        min_isr = replicas.min_isr(self.topic)
        if len(rp.isr) >= min_isr:
            return None
        return (
            f"The size of the current ISR {rp.isr} is insufficient to satisfy the min.isr "
            f"requirement of {min_isr} for partition {self.topic}-{self.partition}"
        )

    def append_records(
        self,
        records: bytes | bytearray | memoryview,
        now_ms: int,
        *,
        verification_guard: object | None = None,
        coordinator: bool = False,
    ) -> AppendResult:
        """Append record batches as the leader (PartitionLog.append_as_leader: validation,
        deduplication, offsets); raises its RecordBatchError / StorageError."""
        res = self.log.append_as_leader(
            records,
            leader_epoch=self.leader_epoch,
            now_ms=now_ms,
            verification_guard=verification_guard,
            coordinator=coordinator,
        )
        self._appended()
        return res

    def append_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        committed: bool,
        now_ms: int,
        transaction_version: int = 0,
    ) -> AppendResult:
        """Append a transaction's commit or abort marker as the leader (``transaction_version``
        2: WriteTxnMarkers v2's strict epoch check); raises the log's InvalidProducerEpochError /
        TransactionCoordinatorFencedError / StorageError."""
        res = self.log.append_end_txn_marker(
            producer_id,
            producer_epoch,
            coordinator_epoch,
            committed,
            leader_epoch=self.leader_epoch,
            now_ms=now_ms,
            transaction_version=transaction_version,
        )
        self._appended()
        return res

    def _appended(self) -> None:
        """After an append: the high watermark may move (a leader alone in its ISR), and the
        waiters on the partition are woken (fetches; a marker moves the last stable offset)."""
        replicas = self.broker.replicas
        if self.replica is not None and replicas is not None:
            replicas.advance_hw(self.replica, self.log)
        self.broker.appended.notify((self.topic, self.partition))

    def mark(self, last_offset: int) -> WriteMark:
        """What a write ending at ``last_offset`` waits for."""
        return WriteMark(self.topic, self.partition, self.leader_epoch, last_offset + 1, self.log)


async def complete_writes(
    broker: Broker,
    writes: Sequence[WriteMark],
    timeout_s: float,
    *,
    acks_all: bool = True,
    now: int | None = None,
) -> list[ErrorCode]:
    """Finish appends: flush each written log when flush.messages / flush.ms say so, then (with
    ``acks_all``) wait until the ISR has every write not failed so far. One error per write, in
    order (ErrorCode.none for the good ones)."""
    due = _flushes_due(broker, writes, now)
    if not due:  # the usual case
        if acks_all and broker.replicas is not None:
            return await await_replication(broker, writes, timeout_s)
        return [ErrorCode.none] * len(writes)
    errors = await _flush(broker, writes, due)
    if acks_all and broker.replicas is not None:
        waiting = [i for i, err in enumerate(errors) if err == ErrorCode.none]
        if waiting:
            got = await await_replication(broker, [writes[i] for i in waiting], timeout_s)
            for i, err in zip(waiting, got, strict=True):
                errors[i] = err
    return errors


async def flush_when_due(
    broker: Broker, writes: Sequence[WriteMark], now: int | None = None
) -> list[ErrorCode]:
    """flush.messages / flush.ms of the logs written to (the fsyncs off the event loop); per
    write KAFKA_STORAGE_ERROR when its flush failed, else NONE."""
    due = _flushes_due(broker, writes, now)
    return await _flush(broker, writes, due) if due else [ErrorCode.none] * len(writes)


def _flushes_due(
    broker: Broker, writes: Sequence[WriteMark], now: int | None
) -> list[tuple[int, PartitionLog]]:
    """The writes whose log is due a flush, with that log (usually none: no await at all)."""
    topics = broker.topics
    assert topics is not None
    at = clock.now_ms() if now is None else now
    due = []
    for i, w in enumerate(writes):
        plog = w.log if w.log is not None else topics.log(w.topic, w.partition)
        if plog is not None and plog.flush_due(at):
            due.append((i, plog))
    return due


async def _flush(
    broker: Broker, writes: Sequence[WriteMark], due: list[tuple[int, PartitionLog]]
) -> list[ErrorCode]:
    errors = [ErrorCode.none] * len(writes)
    topics = broker.topics
    assert topics is not None
    for i, plog in due:
        w = writes[i]
        if topics.log(w.topic, w.partition) is not plog:
            continue  # deleted or replaced while an earlier flush ran
        try:
            await flush_log(plog)
        except StorageError as e:
            errors[i] = ErrorCode(e.error_code)
    return errors


async def await_replication(
    broker: Broker, writes: Sequence[WriteMark], timeout_s: float
) -> list[ErrorCode]:
    """Wait (on purgatory events, never polling) until the high watermark of each written
    partition led here reaches its write's end offset under the write's epoch; one outcome per
    write (see ``replication_outcome``), REQUEST_TIMED_OUT for those still short at the
    deadline. Immediate without replication (embedded mode: the one replica is the ISR)."""
    errors = [ErrorCode.none] * len(writes)
    if broker.replicas is None:
        return errors
    deadline = trio.current_time() + max(timeout_s, 0.0)
    todo = _not_replicated(broker, writes, range(len(writes)), errors)  # often done at once
    while todo:
        # armed before the checks: a change in between fires it
        watch = broker.appended.watch([(writes[i].topic, writes[i].partition) for i in todo])
        todo = _not_replicated(broker, writes, todo, errors)
        if not todo:
            watch.close()
            break
        if trio.current_time() >= deadline:
            watch.close()
            for i in todo:
                errors[i] = ErrorCode.request_timed_out
            break
        await watch.wait(deadline)
    return errors


def _not_replicated(
    broker: Broker, writes: Sequence[WriteMark], todo: Iterable[int], errors: list[ErrorCode]
) -> list[int]:
    """The writes of ``todo`` that must still wait; the outcome of the others into ``errors``."""
    replicas: Any = broker.replicas
    topics = broker.topics
    assert topics is not None
    left = []
    for i in todo:
        w = writes[i]
        rp = replicas.leader_partition(w.topic, w.partition)
        plog = topics.log(w.topic, w.partition)
        got = replication_outcome(
            rp.leader_epoch if rp is not None and plog is not None else None,
            len(rp.isr) if rp is not None else 0,
            plog.high_watermark if plog is not None else -1,
            w.leader_epoch,
            w.end_offset,
            replicas.min_isr(w.topic),
        )
        if got is None:
            left.append(i)
        else:
            errors[i] = got
    return left
