"""A coordinator's internal topic as its log: creating it, appends as the partition leader, and
waiting for their replication (acks=all, as Kafka's coordinators write).

``create_internal_topic`` creates the topic on first need (FindCoordinator), as Kafka does. With
the embedded metadata store its replication factor is capped at the number of live brokers (one
warning), since a lone broker could never create it otherwise. ``read_log_records`` reads a
partition back for loading.

``InternalTopicLog(broker, topic)`` appends the records of one call as one batch (optionally a
transactional batch of a producer, as transactional offset commits are) to a partition this
broker leads, through the one leader write path (server/replication/partition.py), and returns its
``WriteMark`` (the leader epoch and the offset after the batch). ``replicated(mark, timeout)``
flushes when due and waits until the high watermark passes the mark (ZooKeeper mode; immediate
with the embedded store, where the one replica is the ISR). Refusals before the append raise
``InternalAppendError`` with Kafka's produce error:
NOT_LEADER_OR_FOLLOWER when the partition is not led here, NOT_ENOUGH_REPLICAS while its ISR is
below the topic's min.insync.replicas. Callers map these (and REQUEST_TIMED_OUT,
NOT_ENOUGH_REPLICAS_AFTER_APPEND after the append) to the coordinator errors clients expect.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafkapy.metadata.errors import TopicExistsError
from kafkapy.metadata.models import TopicInfo
from kafkapy.protocol.control_batch import marker_of_batch
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    Record,
    RecordBatchError,
    decode_records,
    encode_batch,
    iter_batches,
)
from kafkapy.storage.errors import StorageError
from kafkapy.storage.log import PartitionLog

from ..replication.partition import Partition, WriteMark, complete_writes
from ..topics import TopicError

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.internal_topics")
READ_CHUNK = 1 << 20
_warned_rf: set[tuple[int, str]] = set()


def read_log_records(plog: PartitionLog, *, transactions: bool = False) -> list[tuple]:
    """Every record of a partition log in offset order: what a coordinator replays when it
    loads a partition. Plain records are ``(key, value)``; control batches are skipped unless
    ``transactions``, which also tags records of transactional batches ``(key, value, producer
    id, None)`` and reports each transaction marker as ``(None, None, producer id, committed)``
    (the group coordinator's transactional offsets)."""
    out: list[tuple] = []
    offset = plog.log_start_offset
    end = plog.log_end_offset
    while offset < end:
        data = plog.read_bytes(offset, READ_CHUNK)
        if not data:
            break
        view = memoryview(data)
        for pos, h in iter_batches(data):
            batch = view[pos : pos + h.size]
            if h.is_control:
                if transactions:
                    marker = marker_of_batch(batch)
                    if marker is not None:
                        out.append((None, None, h.producer_id, marker.committed))
            else:
                txn = transactions and h.is_transactional
                for r in decode_records(batch):
                    if r.key is not None:
                        out.append(
                            (r.key, r.value, h.producer_id, None) if txn else (r.key, r.value)
                        )
            offset = h.next_offset
    return out


def create_internal_topic(
    broker: Broker,
    name: str,
    num_partitions: int,
    replication_factor: int,
    configs: dict[str, str],
    rf_config: str,
) -> TopicInfo | None:
    """The internal topic ``name``, created now if it does not exist; None if it cannot be.
    ``rf_config`` names the setting the replication factor came from (for the warning)."""
    info = broker.topics.get(name)
    if info is not None:
        return info
    rf = replication_factor
    if not broker.config.uses_zookeeper:
        live = len(broker.cluster.list_brokers())
        if rf > live:
            if (broker.broker_id, name) not in _warned_rf:
                _warned_rf.add((broker.broker_id, name))
                log.warning(
                    "%s=%d exceeds the %d live broker(s); creating %s with replication factor %d",
                    rf_config,
                    rf,
                    live,
                    name,
                    live,
                )
            rf = max(live, 1)
    try:
        return broker.topics.create(name, num_partitions, rf, configs=configs)
    except TopicError as e:
        log.warning("cannot create %s: %s", name, e.message)
        return None
    except TopicExistsError:
        # another broker created it at the same moment (ZooKeeper mode): its partition states
        # reach this broker through the watch; meanwhile the caller answers
        # COORDINATOR_NOT_AVAILABLE, which clients retry
        return None


class InternalAppendError(Exception):
    """An internal-topic write refused, with a produce error code."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = ErrorCode(error_code)


class InternalTopicLog:
    def __init__(self, broker: Broker, topic: str) -> None:
        self.broker = broker
        self.topic = topic

    def _leader(self, partition: int) -> Partition | None:
        """The partition if this broker leads it (embedded mode: the partition state names
        this broker as its leader)."""
        part = Partition.for_write(self.broker, self.topic, partition)
        if isinstance(part, ErrorCode):
            return None
        if part.replica is None and part.leader != self.broker.broker_id:
            return None
        return part

    def leader_epoch(self, partition: int) -> int | None:
        """This broker's leader epoch for ``partition``; None if it does not lead it."""
        part = self._leader(partition)
        return None if part is None else part.leader_epoch

    def append(
        self,
        partition: int,
        records: list[tuple[bytes, bytes | None]],
        now_ms: int,
        *,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        transactional: bool = False,
        verification_guard: object | None = None,
    ) -> WriteMark:
        part = self._leader(partition)
        if part is None:
            raise InternalAppendError(
                ErrorCode.not_leader_or_follower, f"not the leader of {self.topic}-{partition}"
            )
        refusal = part.min_isr_refusal()
        if refusal is not None:
            raise InternalAppendError(ErrorCode.not_enough_replicas, refusal)
        batch = encode_batch(
            [Record(0, now_ms, k, v) for k, v in records],
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=0 if producer_id >= 0 else -1,  # as Kafka's coordinators write
            is_transactional=transactional,
        )
        try:
            res = part.append_records(
                batch,
                now_ms,
                verification_guard=verification_guard,
                coordinator=producer_id >= 0,
            )
        except (StorageError, RecordBatchError) as e:
            raise InternalAppendError(e.error_code, str(e)) from None
        return part.mark(res.last_offset)

    async def replicated(self, mark: WriteMark, timeout_s: float) -> ErrorCode:
        """ErrorCode.none once the write is flushed when the log.flush.* settings say so (off
        the event loop) and the ISR has everything up to ``mark``; else the produce error
        (KAFKA_STORAGE_ERROR, REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND)."""
        return (await complete_writes(self.broker, [mark], timeout_s))[0]
