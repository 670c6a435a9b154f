"""__consumer_offsets as the group coordinator's log: appends, and waiting for their replication.

``ConsumerOffsetsLog`` implements the coordinator's ``OffsetsLog`` on the broker's partition logs:

- append: the records of one call are one batch on the __consumer_offsets partition of the
  group, appended before the coordinator changes its state or answers (so acknowledged commits
  are on the log: they survive kill -9; fsync follows the broker's log.flush.* settings, as in
  Kafka, and runs in a worker thread before the answer: ``replicated``);
- replication (ZooKeeper mode): writes are acks=all, as Kafka's coordinator makes them. Only the
  partition's leader appends (else NOT_COORDINATOR), not while its ISR is smaller than
  min.insync.replicas of __consumer_offsets (COORDINATOR_NOT_AVAILABLE); and ``replicated``
  waits until the high watermark passed everything written to the partition so far (also what a
  load read: Kafka's last written offset), within offsets.commit.timeout.ms. A failure is
  answered with Kafka's mapping (``state.append_error_to_response_error``): REQUEST_TIMED_OUT
  and NOT_ENOUGH_REPLICAS(_AFTER_APPEND) become COORDINATOR_NOT_AVAILABLE, a leadership change
  NOT_COORDINATOR. The in-memory state is not rolled back (nor is it in Kafka after a timeout:
  the records are on the leader's log); a new coordinator reloads what the log kept;
- reading back: ``read_log_records`` for loading a partition.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafkapy.coordinator.group.state import append_error_to_response_error
from kafkapy.metadata.names import OFFSETS_TOPIC
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage.errors import StorageError
from kafkapy.storage.log import PartitionLog

from .log_flusher import flush_if_due

if TYPE_CHECKING:
    from .broker import Broker

log = logging.getLogger("kafkapy.groups")

READ_CHUNK = 1 << 20


def read_log_records(plog: PartitionLog) -> list[tuple[bytes, bytes | None]]:
    """Every (key, value) of a partition log in offset order (control batches skipped)."""
    out: list[tuple[bytes, bytes | None]] = []
    offset = plog.log_start_offset
    end = plog.log_end_offset
    while offset < end:
        data = plog.read_bytes(offset, READ_CHUNK)
        if not data:
            break
        view = memoryview(data)
        for pos, h in iter_batches(data):
            if not h.is_control:
                for r in decode_records(view[pos : pos + h.size]):
                    if r.key is not None:
                        out.append((r.key, r.value))
            offset = h.next_offset
    return out


class AppendError(Exception):
    """A __consumer_offsets write refused before the append, with a produce error code."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = int(error_code)


class ConsumerOffsetsLog:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        # partition -> (leader epoch, offset after the last record written or loaded there)
        self._written: dict[int, tuple[int, int]] = {}

    def append(
        self, partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int
    ) -> None:
        topics = self.broker.topics
        plog = topics.log(OFFSETS_TOPIC, partition)
        info = topics.get(OFFSETS_TOPIC)
        if plog is None or info is None:
            raise AppendError(
                ErrorCode.not_leader_or_follower, f"{OFFSETS_TOPIC}-{partition} is not hosted here"
            )
        state = info.states.get(partition)
        epoch = state.leader_epoch if state else 0
        replicas = self.broker.replicas
        if replicas is not None:
            rp = replicas.leader_partition(OFFSETS_TOPIC, partition)
            if rp is None:
                raise AppendError(
                    ErrorCode.not_leader_or_follower,
                    f"not the leader of {OFFSETS_TOPIC}-{partition}",
                )
            epoch = rp.leader_epoch
            min_isr = replicas.min_isr(OFFSETS_TOPIC)
            if len(rp.isr) < min_isr:
                raise AppendError(
                    ErrorCode.not_enough_replicas,
                    f"ISR {rp.isr} of {OFFSETS_TOPIC}-{partition} is below min.insync.replicas "
                    f"{min_isr}",
                )
        batch = encode_batch([Record(0, now_ms, k, v) for k, v in records])
        res = plog.append_as_leader(batch, leader_epoch=epoch, now_ms=now_ms)
        self._written[partition] = (epoch, res.last_offset + 1)
        if replicas is not None:
            replicas.after_leader_append(OFFSETS_TOPIC, partition)
        self.broker.appended.notify()

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
            self._written[partition] = (rp.leader_epoch, plog.log_end_offset)

    async def replicated(self, partition: int, group_id: str) -> ErrorCode:
        """Wait until everything written to (or loaded from) ``partition`` is replicated to the
        ISR; ErrorCode.none, or the error to answer instead (Kafka's mapping). Immediate without
        replication (embedded mode: the one replica is the ISR)."""
        try:  # flush.messages / flush.ms of __consumer_offsets, off the event loop
            await flush_if_due(self.broker.topics.log(OFFSETS_TOPIC, partition))
        except StorageError as e:
            return ErrorCode(append_error_to_response_error(e.error_code))
        replicas = self.broker.replicas
        if replicas is None:
            return ErrorCode.none
        mark = self._written.get(partition)
        if mark is None:
            return ErrorCode.none
        epoch, required = mark
        timeout = self.broker.config.offsets_commit_timeout_ms / 1000
        err = await replicas.await_replication(OFFSETS_TOPIC, partition, epoch, required, timeout)
        if err:
            log.warning(
                "write to %s-%d (up to offset %d) for group=%s not replicated: %s",
                OFFSETS_TOPIC,
                partition,
                required,
                group_id,
                ErrorCode(err).name,
            )
            return ErrorCode(append_error_to_response_error(int(err)))
        return ErrorCode.none
