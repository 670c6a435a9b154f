"""__consumer_offsets as the group coordinator's log: appends, and waiting for their replication.

``ConsumerOffsetsLog`` implements the coordinator's ``OffsetsLog`` on the broker's partition logs:

- append (server/coordinator/internal_log.py, through the one leader write path:
server/replication/partition.py): the
  records of one call are one batch on the __consumer_offsets partition of the group, appended
  before the coordinator changes its state or answers (so acknowledged commits are on the log:
  they survive kill -9; fsync follows the broker's log.flush.* settings, as in Kafka, and runs
  in a worker thread before the answer: ``replicated``);
- replication (ZooKeeper mode): writes are acks=all, as Kafka's coordinator makes them. Only the
  partition's leader appends (else NOT_COORDINATOR), not while its ISR is smaller than
  min.insync.replicas of __consumer_offsets (COORDINATOR_NOT_AVAILABLE); and ``replicated``
  waits until the high watermark passed everything written to the partition so far (also what a
  load read: Kafka's last written offset), within offsets.commit.timeout.ms. A failure is
  answered with Kafka's mapping (``state.append_error_to_response_error``): REQUEST_TIMED_OUT
  and NOT_ENOUGH_REPLICAS(_AFTER_APPEND) become COORDINATOR_NOT_AVAILABLE, a leadership change
  NOT_COORDINATOR. The in-memory state is not rolled back (nor is it in Kafka after a timeout:
  the records are on the leader's log); a new coordinator reloads what the log kept;
- reading back: ``read_log_records`` (server/coordinator/internal_log.py) for loading a partition.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkapy.coordinator.group.state import append_error_to_response_error
from kafkapy.coordinator.group.txn_store import TxnAppend
from kafkapy.metadata.names import OFFSETS_TOPIC
from kafkapy.protocol.errors import ErrorCode
from kafkapy.storage.log import PartitionLog

from ..replication.partition import WriteMark, await_replication, flush_when_due
from .internal_log import InternalTopicLog, read_log_records

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.groups")

__all__ = ["ConsumerOffsetsLog", "read_log_records"]


class ConsumerOffsetsLog:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._log = InternalTopicLog(broker, OFFSETS_TOPIC)
        # partition -> what was last written or loaded there (its epoch and end offset)
        self._written: dict[int, WriteMark] = {}

    def append(
        self,
        partition: int,
        records: list[tuple[bytes, bytes | None]],
        now_ms: int,
        *,
        txn: TxnAppend | None = None,
    ) -> None:
        if txn is None:
            mark = self._log.append(partition, records, now_ms)
        else:  # a transactional offset commit: the producer's transactional batch
            mark = self._log.append(
                partition,
                records,
                now_ms,
                producer_id=txn.producer_id,
                producer_epoch=txn.producer_epoch,
                transactional=True,
                verification_guard=txn.verification_guard,
            )
        self._written[partition] = mark

    def forget(self, partitions: Iterable[int]) -> None:
        """Leadership of these partitions moved: what was written there no longer counts."""
        for p in partitions:
            self._written.pop(p, None)

    def mark_loaded(self, partition: int, plog: PartitionLog | None) -> None:
        """What a load read counts as written: answers wait until it is replicated too."""
        replicas = self.broker.replicas
        if replicas is None or plog is None:
            return
        rp = replicas.leader_partition(OFFSETS_TOPIC, partition)
        if rp is not None and plog.log_end_offset > plog.high_watermark:
            self._written[partition] = WriteMark(
                OFFSETS_TOPIC, partition, rp.leader_epoch, plog.log_end_offset
            )

    async def replicated(self, partition: int, group_id: str) -> ErrorCode:
        """Wait until everything written to (or loaded from) ``partition`` is replicated to the
        ISR; ErrorCode.none, or the error to answer instead (Kafka's mapping). Immediate without
        replication (embedded mode: the one replica is the ISR)."""
        # flush.messages / flush.ms of __consumer_offsets, off the event loop
        (err,) = await flush_when_due(self.broker, [WriteMark(OFFSETS_TOPIC, partition, -1, -1)])
        if err:
            return ErrorCode(append_error_to_response_error(err))
        mark = self._written.get(partition)
        if self.broker.replicas is None or mark is None:
            return ErrorCode.none
        timeout = self.broker.config.offsets_commit_timeout_ms / 1000
        (err,) = await await_replication(self.broker, [mark], timeout)
        if err:
            log.warning(
                "write to %s-%d (up to offset %d) for group=%s not replicated: %s",
                OFFSETS_TOPIC,
                partition,
                mark.end_offset,
                group_id,
                ErrorCode(err).name,
            )
            return ErrorCode(append_error_to_response_error(int(err)))
        return ErrorCode.none
