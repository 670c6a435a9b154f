"""Replication on a broker in ZooKeeper mode (Kafka's ReplicaManager), the trio side of
kafkapy.replication: the partitions' states from ZooKeeper, leader and follower transitions,
followers' progress and the high watermark. Its jobs beside it: the controller's event loop
(server/replication/controller_loop.py, fed by the watch events received here), the ISR writes and
the ISR-expiration task (server/replication/zk_isr_manager.py), the fetchers of followed partitions
(server/replication/replica_fetcher.py) and the leader write path (server/replication/partition.py).

How a broker learns about leadership: instead of Kafka's LeaderAndIsr / UpdateMetadata requests,
every broker keeps persistent ZooKeeper watches on /brokers/ids, /brokers/topics, each
/brokers/topics/T and each partition state znode, and applies what it reads, fencing on the
leader epoch (an older epoch is ignored). Watch callbacks (ZooKeeper's dispatcher thread) only
mark what changed and wake the sync task; ZooKeeper reads and writes run in worker threads; all
in-memory state is changed on the trio thread.

Leader duties: track followers' fetch offsets, advance the high watermark (min log end offset of
the ISR; it wakes acks=all producers and long-polling consumers), shrink the ISR after
replica.lag.time.max.ms and expand it when a follower caught up — written by the leader to the
state znode with a conditional write (ZooKeeper-era Kafka: server/replication/zk_isr_manager.py).
Follower duties: LeaderFetcher tasks. Cut off from ZooKeeper past the session: session_fence.py.
The high watermarks are checkpointed to replication-offset-checkpoint in each log dir.

Writes as the leader (Produce, transaction markers, the coordinators' internal topics) and
their wait for the ISR (acks=all, Kafka's DelayedProduce) are the partition's write path,
server/replication/partition.py, which asks this manager for the partition led here
(``leader_partition``), min.insync.replicas (``min_isr``) and to move the high watermark
(``advance_hw``).

A partition whose assignment no longer names this broker (reassigned away) is stopped and its
log deleted; the controller's topic duties (new partitions' states, reassignments) are in
kafkapy.replication.topic_controller.

Log directory failures (server/log_manager/log_dir_failures.py calls ``on_log_dir_failure``): the
offline partitions stop being fetched and followed; the broker posts a /log_dir_event_notification
and the controller (server/replication/controller_loop.py) moves their leadership away and takes
this broker out of their ISRs.

Controlled shutdown: the broker resigns the controller role, removes its registration (the
controller then moves its leaderships away) and waits until it leads nothing that another in-sync
replica could take over, before closing its logs.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, cast

import trio

from kafkapy import clock
from kafkapy.metadata import znodes as zn
from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.models import BrokerInfo, PartitionState, TopicInfo
from kafkapy.metadata.names import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication.partition import PartitionReplica
from kafkapy.storage.checkpoints import (
    REPLICATION_OFFSET_CHECKPOINT,
    read_offset_checkpoint,
    write_offset_checkpoint,
)

from .controller_loop import ControllerLoop
from .replica_fetcher import LeaderFetcher
from .session_fence import ZkSessionFence
from .zk_isr_manager import ZkIsrManager

if TYPE_CHECKING:
    from kafkapy.metadata.zookeeper import ZooKeeperStore

    from ..broker import Broker

log = logging.getLogger("kafkapy.replica_manager")


class ReplicaManager:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.me = broker.broker_id
        self.cluster = broker.cluster
        # the replica manager runs in ZooKeeper mode only: its store is ZooKeeper's
        self.store = cast("ZooKeeperStore", broker.store)
        self.partitions: dict[tuple[str, int], PartitionReplica] = {}
        self.live: dict[int, BrokerInfo] = {}
        self.fetchers: dict[int, LeaderFetcher] = {}
        self.shutting_down = False
        self.offline: set[tuple[str, int]] = set()  # partitions on a failed log directory
        self._lock = threading.Lock()
        self.controller_loop = ControllerLoop(broker, self._lock)
        self.isr_manager = ZkIsrManager(self)
        self.session_fence = ZkSessionFence(self)  # no leading when cut off from ZooKeeper
        self._dirty_topics: set[str] = set()
        self._dirty_all = True
        self._dirty_brokers = True
        self._token: trio.lowlevel.TrioToken | None = None
        self._wake = trio.Event()
        self._topic_watches: dict[str, list[int]] = {}
        self._global_watches: list[int] = []
        self._nursery: trio.Nursery | None = None
        self.lag_ms = int(broker.config.replica_lag_time_max_ms)

    # -- config ---------------------------------------------------------------------------------
    def min_isr(self, topic: str) -> int:
        info = self.broker.topics.get(topic)
        if info is not None and "min.insync.replicas" in info.configs:
            return int(info.configs["min.insync.replicas"])
        return int(self.broker.config.min_insync_replicas)

    @staticmethod
    def now_ms() -> int:
        return clock.now_ms()

    # -- startup (synchronous) -----------------------------------------------------------------
    def start(self) -> None:
        """Before serving: HW checkpoints, watches, the local view of every topic."""
        logs = self.broker.logs
        for d in logs.log_dirs:
            ckpt = read_offset_checkpoint(d / REPLICATION_OFFSET_CHECKPOINT)
            for tp, plog in logs.logs.items():
                if logs._dir_of.get(tp) == d:
                    plog.auto_high_watermark = False
                    plog.high_watermark = min(ckpt.get(tp, 0), plog.log_end_offset)
        for path in (
            zn.BROKER_IDS.path(),
            zn.TOPICS.path(),
            zn.CONTROLLER.path(),
            zn.DELETE_TOPICS.path(),
            zn.LOG_DIR_EVENT_NOTIFICATIONS.path(),
        ):
            self._global_watches.append(self.store.add_watch(path, self._on_event))
        try:
            if self.controller_loop.controller.try_elect():
                self.broker.controller_epoch = self.controller_loop.controller.epoch
        except StoreError as e:
            log.warning("controller election failed, retrying later: %s", e)
        self.store.on_session_lost(self._on_session_lost)
        self.store.on_reconnected(self._on_reconnected)
        self.live = self.cluster.list_brokers()
        registry = self.broker.topics
        for name in list(registry.by_name):
            self._watch_topic(name)
            info = self.cluster.get_topic(name)
            if info is not None:
                # the registry's view (what Metadata answers) was read before these watches
                # existed: a leader elected in between changes no watched znode later, so the
                # view read now replaces it, as _sync_once does for a watched change
                registry._remember(info)
                registry._open_logs(info)
                self.apply_topic(info)

    def _watch_topic(self, name: str) -> list[int]:
        """Add watches for a topic and its partition states (blocking; any thread)."""
        handles = self._topic_watches.setdefault(name, [])
        if not handles:
            handles.append(self.store.add_watch(zn.TOPIC.path(name), self._on_event))
        got = self.store.get_or_none(zn.TOPIC.path(name))
        if got is None:
            return handles
        parts = zn.TOPIC.decode(got[0]).partitions
        watched = len(handles) - 1
        for p in range(watched, len(parts)):
            handles.append(
                self.store.add_watch(zn.TOPIC_PARTITION_STATE.path(name, p), self._on_event)
            )
        return handles

    def _unwatch_topic(self, name: str) -> None:
        for h in self._topic_watches.pop(name, []):
            try:
                self.store.remove_watch(h)
            except Exception:  # best effort
                log.debug("remove_watch failed", exc_info=True)

    # -- ZooKeeper events (dispatcher thread) -------------------------------------------------
    def _on_event(self, event: Any) -> None:
        path = event.path
        with self._lock:
            if path == zn.BROKER_IDS.path():
                self._dirty_brokers = self.controller_loop.brokers_changed = True
            elif path == zn.TOPICS.path():
                self._dirty_all = self.controller_loop.topic_changes.listed = True
            elif path == zn.CONTROLLER.path():
                self.controller_loop.controller_changed = True
            elif path == zn.DELETE_TOPICS.path():
                self.controller_loop.deletions = True
            elif path == zn.LOG_DIR_EVENT_NOTIFICATIONS.path():
                self.controller_loop.log_dirs = True
            else:
                prefix = zn.TOPICS.path() + "/"
                if path.startswith(prefix):
                    topic = path[len(prefix) :].split("/", 1)[0]
                    self._dirty_topics.add(topic)
                    self.controller_loop.topic_changes.names.add(topic)
        self._poke()

    def _poke(self) -> None:
        token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self._wake_all)
            except trio.RunFinishedError:
                pass

    def _wake_all(self) -> None:
        self._wake.set()
        self.controller_loop.wake.set()

    def topic_changed(self, topic: str) -> None:
        """Read ``topic`` again (an ISR write lost a race: server/replication/zk_isr_manager.py)."""
        with self._lock:
            self._dirty_topics.add(topic)
        self._wake.set()

    def _on_session_lost(self) -> None:
        log.warning("ZooKeeper session of broker %d expired", self.me)
        self.controller_loop.controller.active = False
        self._poke()

    def _on_reconnected(self, new_session: bool) -> None:
        if new_session and not self.shutting_down:
            b = self.broker
            try:
                b.register()
                log.info("broker %d registered again after a session expiry", self.me)
            except Exception as e:
                log.error("re-registering broker %d failed: %s", self.me, e)
        with self._lock:
            self._dirty_all = self._dirty_brokers = True
            c = self.controller_loop
            c.controller_changed = c.deletions = c.brokers_changed = c.topic_changes.full = True
            self._dirty_topics.update(self._topic_watches)
        self._poke()

    # -- the tasks ------------------------------------------------------------------------------
    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        self._token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for tp, rp in self.partitions.items():
                if not rp.is_leader and rp.leader >= 0:
                    self._follow(tp, rp.leader)
            nursery.start_soon(self._sync_loop)
            nursery.start_soon(self.controller_loop.run)
            nursery.start_soon(self.isr_manager.shrink_loop)
            nursery.start_soon(self.session_fence.run)
            nursery.start_soon(self._checkpoint_loop)
            task_status.started()
            self._wake_all()

    async def _sync_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            try:
                await self._sync_once()
            except (StoreError, OSError) as e:
                log.warning("metadata sync failed, retrying: %s", e)
                with self._lock:
                    self._dirty_all = self._dirty_brokers = True
                await trio.sleep(0.5)
                self._wake.set()

    async def _sync_once(self) -> None:
        with self._lock:
            brokers, all_topics = self._dirty_brokers, self._dirty_all
            dirty = set(self._dirty_topics)
            self._dirty_brokers = self._dirty_all = False
            self._dirty_topics.clear()
        if brokers:
            live = await trio.to_thread.run_sync(self.cluster.list_brokers)
            gone = set(self.live) - set(live)
            self.live = live
            for b in gone:
                log.info("broker %d left the cluster", b)
            for f in self.fetchers.values():
                f.changed.set()
        registry = self.broker.topics
        removed: set[str] = set()
        if all_topics:
            names = set(await trio.to_thread.run_sync(self.cluster.list_topics))
            known = set(registry.by_name) | set(self._topic_watches)
            removed = known - names
            dirty |= names - set(self._topic_watches)
        dirty -= removed

        def read() -> list[tuple[str, TopicInfo | None]]:
            out = []
            for name in sorted(dirty):
                self._watch_topic(name)
                out.append((name, self.cluster.get_topic(name)))
            return out

        infos = await trio.to_thread.run_sync(read) if dirty else []
        for name in removed:
            self.remove_topic(name)
            await trio.to_thread.run_sync(self._unwatch_topic, name)
        for name, info in infos:
            if info is None:
                if name in registry.by_name:
                    self.remove_topic(name)
                continue
            registry._remember(info)
            registry._open_logs(info)
            self.apply_topic(info)

    # -- applying states -------------------------------------------------------------------------
    def apply_topic(self, info: TopicInfo) -> None:
        """Take a topic's assignment and partition states (trio thread or startup)."""
        logs = self.broker.logs
        for p, replicas in sorted(info.partitions.items()):
            if self.me not in replicas:
                if (info.name, p) in self.partitions or logs.get_log(info.name, p) is not None:
                    self._remove_replica(info.name, p)
                continue
            state = info.states.get(p)
            plog = logs.get_log(info.name, p)
            if state is None or plog is None or plog.offline:
                continue
            plog.auto_high_watermark = False
            self._apply_partition(info.name, p, replicas, state, plog)

    def _apply_partition(
        self, topic: str, p: int, replicas: list[int], state: PartitionState, plog: Any
    ) -> None:
        tp = (topic, p)
        rp = self.partitions.get(tp)
        if rp is None:
            rp = self.partitions[tp] = PartitionReplica(topic, p, self.me)
        was_leader = rp.is_leader
        change = rp.apply_state(
            state.leader,
            state.leader_epoch,
            list(state.isr),
            state.zk_version,
            state.controller_epoch,
            list(replicas),
            plog.log_end_offset,
            self.now_ms(),
        )
        if change == "stale":
            return
        plog.stamp += 1  # leadership or epoch may have changed: fetch sessions read it again
        if change == "leader":
            log.info("%s-%d: leader with epoch %d isr %s", topic, p, state.leader_epoch, state.isr)
            plog.epoch_cache.assign(state.leader_epoch, plog.log_end_offset)
            self._unfollow(tp)
            self._coordinator_leadership(topic, [p], [])
        elif change == "follower":
            log.info(
                "%s-%d: follower of %d with epoch %d", topic, p, state.leader, state.leader_epoch
            )
            self._unfollow(tp)
            if state.leader >= 0:
                self._follow(tp, state.leader)
            if was_leader:
                self._coordinator_leadership(topic, [], [p])
        if rp.is_leader:
            self.advance_hw(rp, plog)
        self.broker.appended.notify(tp)

    def _coordinator_leadership(self, topic: str, became: list[int], lost: list[int]) -> None:
        """Tell the coordinator whose internal topic this is (group or transaction) that
        leaderships of its partitions moved here or away."""
        # while the broker starts, the replica manager starts before the coordinators, which
        # read their leaderships when they start themselves: only a started one is told
        if topic == OFFSETS_TOPIC:
            service = self.broker.opened("groups")
        elif topic == TRANSACTION_STATE_TOPIC:
            service = self.broker.opened("txn")
        else:
            return
        if service is not None:
            service.on_leadership_change(became, lost)

    def _follow(self, tp: tuple[str, int], leader: int) -> None:
        if self._nursery is None:
            return  # run() starts the fetchers
        f = self.fetchers.get(leader)
        if f is None:
            f = self.fetchers[leader] = LeaderFetcher(self, leader)
            self._nursery.start_soon(f.run)
        f.add(tp)

    def _unfollow(self, tp: tuple[str, int]) -> None:
        for f in self.fetchers.values():
            f.remove(tp)

    def _remove_replica(self, topic: str, p: int) -> None:
        """No longer a replica (reassigned away, or a stray log): stop and delete it, as Kafka's
        StopReplica with delete."""
        self._unfollow((topic, p))
        rp = self.partitions.pop((topic, p), None)
        if rp is not None and rp.is_leader:
            self._coordinator_leadership(topic, [], [p])
        self.broker.logs.delete_log(topic, p)
        log.info("%s-%d: not a replica here any more: stopped and deleted", topic, p)
        self.broker.appended.notify((topic, p))

    def remove_topic(self, name: str) -> None:
        registry = self.broker.topics
        info = registry.by_name.pop(name, None)
        if info is not None:
            registry.by_id.pop(info.topic_id, None)
            for p in info.partitions:
                self._unfollow((name, p))
                self.partitions.pop((name, p), None)
                self.broker.logs.delete_log(name, p)
            log.info("removed topic %s from this broker", name)
        self.broker.appended.notify()

    # -- leader side -----------------------------------------------------------------------------
    def leader_partition(self, topic: str, p: int) -> PartitionReplica | None:
        rp = self.partitions.get((topic, p))
        return rp if rp is not None and rp.is_leader else None

    def advance_hw(self, rp: PartitionReplica, plog: Any) -> None:
        new = rp.high_watermark(plog.log_end_offset, plog.high_watermark)
        if new > plog.high_watermark:
            plog.high_watermark = new
            self.broker.appended.notify((rp.topic, rp.partition))

    def on_replica_fetch(self, replica_id: int, topic: str, p: int, fetch_offset: int) -> int:
        """A follower fetched: record its log end offset; returns an error code."""
        rp = self.leader_partition(topic, p)
        plog = self.broker.logs.get_log(topic, p)
        if rp is None or plog is None:
            return ErrorCode.not_leader_or_follower
        if replica_id not in rp.replicas:
            return ErrorCode.not_leader_or_follower
        rp.on_follower_fetch(replica_id, fetch_offset, plog.log_end_offset, self.now_ms())
        self.advance_hw(rp, plog)
        expand = rp.isr_to_expand(plog.high_watermark, self.live)
        if expand is not None:
            self.isr_manager.submit(rp, expand)
        return ErrorCode.none

    # -- high-watermark checkpoints --------------------------------------------------------------
    def checkpoint_hw(self) -> None:
        logs = self.broker.logs
        if logs is None:
            return
        for d in logs.online_dirs:
            hws = {tp: logs.logs[tp].high_watermark for tp in logs.partitions_in(d)}
            try:
                write_offset_checkpoint(d / REPLICATION_OFFSET_CHECKPOINT, hws)
            except OSError as e:
                logs.fail_dir(d, f"writing {REPLICATION_OFFSET_CHECKPOINT}", e)

    def on_log_dir_failure(self, partitions: list[tuple[str, int]]) -> None:
        """Partitions whose log directory failed: no more fetching or following them (their
        state here is left as it was; their logs refuse everything)."""
        for tp in partitions:
            self._unfollow(tp)
            self.offline.add(tp)

    async def _checkpoint_loop(self) -> None:
        interval = max(self.broker.config.replica_high_watermark_checkpoint_interval_ms, 100)
        while True:
            await trio.sleep(interval / 1000)
            try:
                self.checkpoint_hw()
            except OSError as e:
                log.warning("replication-offset-checkpoint failed: %s", e)

    # -- controlled shutdown ---------------------------------------------------------------------
    async def controlled_shutdown(self, timeout: float = 15.0) -> None:
        """Resign, unregister, and wait for the leaderships to move away."""
        self.shutting_down = True
        with trio.move_on_after(timeout):
            await self.controller_loop.resign()
            await trio.to_thread.run_sync(self.cluster.unregister_broker, self.me)
            started, warned = trio.current_time(), False
            while True:
                stuck = [
                    tp
                    for tp, rp in self.partitions.items()
                    if rp.is_leader
                    and tp not in self.offline
                    and any(b != self.me and b in self.live for b in rp.isr)
                ]
                if not stuck:
                    break
                if trio.current_time() - started > 5 and not warned:
                    warned = True
                    log.info("controlled shutdown waits for %s", stuck)
                await trio.sleep(0.1)
            log.info("controlled shutdown of broker %d: leaderships moved", self.me)

    def stop(self) -> None:
        try:
            self.checkpoint_hw()
        except OSError as e:
            log.warning("replication-offset-checkpoint failed: %s", e)
        for h in self._global_watches:
            try:
                self.store.remove_watch(h)
            except Exception:
                pass
