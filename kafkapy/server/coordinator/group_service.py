"""The group coordinator's place in the broker: its topic, its leaderships, its timer task, and
waiting for answers.

`GroupService` owns the sans-io `GroupCoordinator` (kafkapy.coordinator.group) and gives it what
it cannot do itself:

- a log: ``offsets_log.ConsumerOffsetsLog`` appends its records to __consumer_offsets (acks=all
  in ZooKeeper mode), and ``replicated(group)`` waits until they reached the ISR: the OffsetCommit
  and SyncGroup handlers answer only after that;
- the topic: __consumer_offsets is created on first need (FindCoordinator), with
  offsets.topic.num.partitions partitions, cleanup.policy=compact and
  segment.bytes=offsets.topic.segment.bytes. With the embedded metadata store the replication
  factor is capped at the number of live brokers (one warning), since a lone broker could never
  create it otherwise;
- loading: at start every partition of the topic this broker leads is marked loading (requests
  get COORDINATOR_LOAD_IN_PROGRESS), then read back in a worker thread and replayed; in ZooKeeper
  mode, partitions whose leadership this broker gains are loaded the same way, and those it loses
  forgotten;
- time: one task sleeps until the coordinator's next deadline, or until a handler changed
  something (`kick`), then fires the due timers;
- waiting: JoinGroup and SyncGroup handlers `await wait(pending)`, which returns once the
  coordinator completes the answer.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import TYPE_CHECKING, Any

import trio

from kafkapy import clock
from kafkapy.coordinator.group import CoordinatorConfig, GroupCoordinator, Pending
from kafkapy.coordinator.group.topics import RegistryTopics
from kafkapy.metadata.names import OFFSETS_TOPIC
from kafkapy.protocol.errors import ErrorCode

from ..share.partitions import SharePartitionManager
from ..share.settings import ShareSettingsSource
from .internal_log import create_internal_topic, read_log_records
from .offsets_log import ConsumerOffsetsLog

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.groups")

__all__ = ["OFFSETS_TOPIC", "GroupService"]


def _stored_group_overrides(broker: Broker) -> dict[str, dict[str, int]]:
    """The group configs kafkapy applies, of every group that has some (/config/groups)."""
    from ..config.group_configs import session_settings

    cluster = getattr(broker, "cluster", None)
    if cluster is None:
        return {}
    return {g: session_settings(cluster.group_configs(g)) for g in cluster.groups_with_configs()}


class GroupService:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.log = ConsumerOffsetsLog(broker)
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
                streams_session_timeout_ms=c.group_streams_session_timeout_ms,
                streams_heartbeat_interval_ms=c.group_streams_heartbeat_interval_ms,
                streams_num_standby_replicas=c.group_streams_num_standby_replicas,
                streams_max_size=c.group_streams_max_size,
                streams_initial_rebalance_delay_ms=c.group_streams_initial_rebalance_delay_ms,
                streams_assignment_interval_ms=c.group_streams_assignment_interval_ms,
                group_overrides=_stored_group_overrides(broker),
            ),
            self.log,
            RegistryTopics(broker.topics),
        )
        self.coordinator.share.settings = ShareSettingsSource(broker)
        self.share_partitions = SharePartitionManager(broker, self.coordinator.share)
        self._wakeup = trio.Event()
        self.loaded = trio.Event()
        # transaction markers that arrived while their partition was loading
        self._deferred_markers: dict[int, list[tuple[int, bool]]] = {}

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
        info = create_internal_topic(
            self.broker,
            OFFSETS_TOPIC,
            c.offsets_topic_num_partitions,
            c.offsets_topic_replication_factor,
            {
                "cleanup.policy": "compact",
                "segment.bytes": str(c.offsets_topic_segment_bytes),
                "compression.type": "producer",
            },
            "offsets.topic.replication.factor",
        )
        if info is None:
            return False
        self.coordinator.config.num_partitions = len(info.partitions)
        self.coordinator.add_empty_partitions(self._led_partitions(info), clock.now_ms())
        self.kick()
        return True

    # -- leadership (ZooKeeper mode) ------------------------------------------------------------
    def on_leadership_change(self, became: list[int], lost: list[int]) -> None:
        """The replica manager moved __consumer_offsets leaderships: load the partitions this
        broker now leads (COORDINATOR_LOAD_IN_PROGRESS meanwhile), forget those it lost (their
        groups answer NOT_COORDINATOR; clients look the coordinator up again)."""
        c = self.coordinator
        self.log.forget([*lost, *became])
        for p in lost:
            c.owned.discard(p)
            c.loading.discard(p)
            self._deferred_markers.pop(p, None)
            gone = [g for g in c.groups if c.partition_for(g) == p]
            for gid in gone:
                del c.groups[gid]
            c.state.txn_offsets.drop_groups(gone)
            c.share.forget_partition(p)
        new = [p for p in became if p not in c.owned and p not in c.loading]
        if new:
            c.begin_loading(new)
            self.kick()

    # -- the group hook of transaction markers ----------------------------------------------------
    def on_txn_marker(self, partition: int, producer_id: int, committed: bool) -> None:
        """A transaction marker of ``producer_id`` is replicated on __consumer_offsets
        ``partition``: its offsets committed in the transaction become visible (or are dropped).
        While the partition loads, the marker is replayed once the load is done (the load may
        have read the log before the marker was appended)."""
        c = self.coordinator
        if partition in c.loading:
            self._deferred_markers.setdefault(partition, []).append((producer_id, committed))
            return
        if partition in c.owned:
            c.complete_txn_offsets(partition, producer_id, committed)

    # -- replication --------------------------------------------------------------------------
    async def replicated(self, group_id: str) -> ErrorCode:
        """Wait until everything written to (or loaded from) the group's __consumer_offsets
        partition is replicated to the ISR; ErrorCode.none, or the error to answer instead."""
        return await self.log.replicated(self.coordinator.partition_for(group_id), group_id)

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
            try:
                coordinator.poll(clock.now_ms())
            except Exception:  # one group's timer must not stop every group (and the broker)
                log.exception("unexpected error in a group coordinator timer")
            deadline = coordinator.next_deadline()
            timeout = math.inf if deadline is None else max(deadline - clock.now_ms(), 0) / 1000
            with trio.move_on_after(timeout):
                await self._wakeup.wait()

    async def _load(self) -> None:
        coordinator = self.coordinator
        for p in sorted(coordinator.loading):
            plog = self.broker.topics.log(OFFSETS_TOPIC, p)
            records = (
                []
                if plog is None
                else await trio.to_thread.run_sync(
                    functools.partial(read_log_records, plog, transactions=True)
                )
            )
            if p not in coordinator.loading:
                continue  # leadership moved away during the read
            coordinator.load_partition(p, records, clock.now_ms())
            for producer_id, committed in self._deferred_markers.pop(p, []):
                coordinator.complete_txn_offsets(p, producer_id, committed)
            self.log.mark_loaded(p, plog)
        if coordinator.groups:
            log.info("loaded groups=%d from %s", len(coordinator.groups), OFFSETS_TOPIC)
        self.loaded.set()

    # -- answers ------------------------------------------------------------------------------
    async def wait(self, pending: Pending[Any]) -> Any:
        self.kick()
        if not pending.done:
            event = trio.Event()
            pending.add_done_callback(lambda _p: event.set())
            await event.wait()
        return pending.result
