"""The group coordinator's place in the broker: its log, its timer task, waiting for answers.

`GroupService` owns the sans-io `GroupCoordinator` (kafkapy.coordinator.group) and gives it what
it cannot do itself:

- a log: records are appended to the __consumer_offsets partition of the group, as one batch per
  call, before the coordinator changes its state or answers (so acknowledged commits are on the
  log: they survive kill -9; fsync follows the broker's log.flush.* settings, as in Kafka);
- replication (ZooKeeper mode): writes are acks=all, as Kafka's coordinator makes them. Only the
  partition's leader appends (else NOT_COORDINATOR), not while its ISR is smaller than
  min.insync.replicas of __consumer_offsets (COORDINATOR_NOT_AVAILABLE); and the OffsetCommit and
  SyncGroup handlers answer only after ``replicated(group)`` saw the high watermark pass everything
  written to the group's partition so far (also what a load read: Kafka's last written offset),
  within offsets.commit.timeout.ms. A failure is answered with Kafka's mapping
  (state.append_error_to_response_error): REQUEST_TIMED_OUT and
  NOT_ENOUGH_REPLICAS(_AFTER_APPEND) become COORDINATOR_NOT_AVAILABLE, a leadership change
  NOT_COORDINATOR. The in-memory state is not rolled back (nor is it in Kafka after a timeout:
  the records are on the leader's log); a new coordinator reloads what the log kept;
- the topic: __consumer_offsets is created on first need (FindCoordinator), with
  offsets.topic.num.partitions partitions, cleanup.policy=compact and
  segment.bytes=offsets.topic.segment.bytes. With the embedded metadata store the replication
  factor is capped at the number of live brokers (one warning), since a lone broker could never
  create it otherwise;
- loading: at start every partition of the topic this broker leads is marked loading (requests
  get COORDINATOR_LOAD_IN_PROGRESS), then read back in a worker thread and replayed;
- time: one task sleeps until the coordinator's next deadline, or until a handler changed
  something (`kick`), then fires the due timers;
- waiting: JoinGroup and SyncGroup handlers `await wait(pending)`, which returns once the
  coordinator completes the answer.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.coordinator.group import CoordinatorConfig, GroupCoordinator, Pending
from kafkapy.coordinator.group.state import append_error_to_response_error
from kafkapy.coordinator.group.topics import RegistryTopics
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage.log import PartitionLog

from .topics import TopicError

if TYPE_CHECKING:
    from .broker import Broker

log = logging.getLogger("kafkapy.groups")

OFFSETS_TOPIC = "__consumer_offsets"
READ_CHUNK = 1 << 20


def _now_ms() -> int:
    from .broker import now_ms

    return now_ms()


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


class GroupService:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        c = broker.config
        self.coordinator = GroupCoordinator(
            CoordinatorConfig(
                num_partitions=c.offsets_topic_num_partitions,
                min_session_timeout_ms=c.group_min_session_timeout_ms,
                max_session_timeout_ms=c.group_max_session_timeout_ms,
                initial_rebalance_delay_ms=c.group_initial_rebalance_delay_ms,
                max_size=c.group_max_size,
                offsets_retention_ms=c.offsets_retention_minutes * 60_000,
                offsets_retention_check_interval_ms=c.offsets_retention_check_interval_ms,
                offset_metadata_max_bytes=c.offset_metadata_max_bytes,
                consumer_session_timeout_ms=c.group_consumer_session_timeout_ms,
                consumer_heartbeat_interval_ms=c.group_consumer_heartbeat_interval_ms,
                consumer_assignors=c.group_consumer_assignors,
                consumer_max_size=c.group_consumer_max_size,
                consumer_migration_policy=c.group_consumer_migration_policy,
            ),
            self,
            RegistryTopics(broker.topics),
        )
        self._wakeup = trio.Event()
        self._warned_rf = False
        self.loaded = trio.Event()
        # partition -> (leader epoch, offset after the last record written or loaded there)
        self._written: dict[int, tuple[int, int]] = {}

    # -- the topic ----------------------------------------------------------------------------
    def _led_partitions(self, info: Any) -> list[int]:
        me = self.broker.broker_id
        return sorted(p for p, st in info.states.items() if st.leader == me)

    def start(self) -> None:
        """Synchronous part of startup: mark the partitions to load."""
        info = self.broker.topics.get(OFFSETS_TOPIC)
        if info is not None:
            if len(info.partitions) != self.coordinator.config.num_partitions:
                # Kafka keeps the topic's real partition count for the group hash
                self.coordinator.config.num_partitions = len(info.partitions)
            self.coordinator.begin_loading(self._led_partitions(info))

    def ensure_topic(self) -> bool:
        """Create __consumer_offsets if it does not exist; False if it cannot be created."""
        if self.broker.topics.get(OFFSETS_TOPIC) is not None:
            return True
        c = self.broker.config
        rf = c.offsets_topic_replication_factor
        if not c.uses_zookeeper:
            live = len(self.broker.cluster.list_brokers())
            if rf > live:
                if not self._warned_rf:
                    log.warning(
                        "offsets.topic.replication.factor=%d exceeds the %d live broker(s); "
                        "creating %s with replication factor %d",
                        rf,
                        live,
                        OFFSETS_TOPIC,
                        live,
                    )
                    self._warned_rf = True
                rf = max(live, 1)
        try:
            info = self.broker.topics.create(
                OFFSETS_TOPIC,
                c.offsets_topic_num_partitions,
                rf,
                configs={
                    "cleanup.policy": "compact",
                    "segment.bytes": str(c.offsets_topic_segment_bytes),
                    "compression.type": "producer",
                },
            )
        except TopicError as e:
            log.warning("cannot create %s: %s", OFFSETS_TOPIC, e.message)
            return False
        self.coordinator.config.num_partitions = len(info.partitions)
        self.coordinator.add_empty_partitions(self._led_partitions(info), _now_ms())
        self.kick()
        return True

    # -- leadership (ZooKeeper mode) ------------------------------------------------------------
    def on_leadership_change(self, became: list[int], lost: list[int]) -> None:
        """The replica manager moved __consumer_offsets leaderships: load the partitions this
        broker now leads (COORDINATOR_LOAD_IN_PROGRESS meanwhile), forget those it lost (their
        groups answer NOT_COORDINATOR; clients look the coordinator up again)."""
        c = self.coordinator
        for p in [*lost, *became]:
            self._written.pop(p, None)
        for p in lost:
            c.owned.discard(p)
            c.loading.discard(p)
            for gid in [g for g in c.groups if c.partition_for(g) == p]:
                del c.groups[gid]
        new = [p for p in became if p not in c.owned and p not in c.loading]
        if new:
            c.begin_loading(new)
            self.kick()

    # -- OffsetsLog ---------------------------------------------------------------------------
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

    # -- replication --------------------------------------------------------------------------
    async def replicated(self, group_id: str) -> ErrorCode:
        """Wait until everything written to (or loaded from) the group's __consumer_offsets
        partition is replicated to the ISR; ErrorCode.none, or the error to answer instead (Kafka's
        mapping). Immediate without replication (embedded mode: the one replica is the ISR)."""
        replicas = self.broker.replicas
        if replicas is None:
            return ErrorCode.none
        partition = self.coordinator.partition_for(group_id)
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

    # -- time ---------------------------------------------------------------------------------
    def kick(self) -> None:
        """Something changed: re-read the next deadline."""
        self._wakeup.set()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await self._load()
        coordinator = self.coordinator
        while True:
            self._wakeup = trio.Event()
            if coordinator.loading:  # leaderships gained (ZooKeeper mode)
                await self._load()
            coordinator.poll(_now_ms())
            deadline = coordinator.next_deadline()
            timeout = math.inf if deadline is None else max(deadline - _now_ms(), 0) / 1000
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    async def _load(self) -> None:
        coordinator = self.coordinator
        for p in sorted(coordinator.loading):
            plog = self.broker.topics.log(OFFSETS_TOPIC, p)
            records = [] if plog is None else await trio.to_thread.run_sync(read_log_records, plog)
            coordinator.load_partition(p, records, _now_ms())
            self._mark_loaded(p, plog)
        if coordinator.groups:
            log.info("loaded groups=%d from %s", len(coordinator.groups), OFFSETS_TOPIC)
        self.loaded.set()

    def _mark_loaded(self, partition: int, plog: PartitionLog | None) -> None:
        """What a load read counts as written: answers wait until it is replicated too."""
        replicas = self.broker.replicas
        if replicas is None or plog is None:
            return
        rp = replicas.leader_partition(OFFSETS_TOPIC, partition)
        if rp is not None and plog.log_end_offset > plog.high_watermark:
            self._written[partition] = (rp.leader_epoch, plog.log_end_offset)

    # -- answers ------------------------------------------------------------------------------
    async def wait(self, pending: Pending[Any]) -> Any:
        self.kick()
        if not pending.done:
            event = trio.Event()
            pending.add_done_callback(lambda _p: event.set())
            await event.wait()
        return pending.result
