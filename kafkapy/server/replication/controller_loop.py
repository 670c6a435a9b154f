"""The controller's event loop on a broker in ZooKeeper mode (Kafka's ControllerEventManager):
the trio side of kafkapy.replication.controller.

The replica manager (server/replication/replica_manager.py) receives the ZooKeeper watch events and
marks here what changed for the controller (``mark``, under the manager's lock: watch callbacks run
on ZooKeeper's dispatcher thread) and wakes the loop (``wake``). One step of the loop, while this
broker is the controller (it tries to become it whenever it is not):

* /controller changed: check that it still is the controller;
* /admin/delete_topics: topic deletions; /log_dir_event_notification: move leaderships away
  from partitions on failed log directories;
* /brokers/ids: leaders and ISRs of the partitions of departed or returning brokers;
* topics (kafkapy.replication.topic_controller): new partitions' states, reassignments;
* every leader.imbalance.check.interval.seconds, with auto.leader.rebalance.enable: preferred
  leader election above leader.imbalance.per.broker.percentage.

ZooKeeper reads and writes run in worker threads, under ``lock`` (ElectLeaders takes it too:
``elect_leaders``); a failed step is retried after half a second, with everything marked.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import trio

from kafkapy.metadata.errors import StoreError
from kafkapy.replication.controller import Controller, NotControllerError
from kafkapy.replication.topic_controller import TopicChanges, on_topics_change

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.replica_manager")


def _raw(broker: Broker, key: str, default: str) -> str:
    raw = broker.config.raw or {}
    got = broker.dynamic_configs.get(key) or raw.get(key)
    return str(got) if got is not None else default


def _bool(v: str) -> bool:
    return str(v).strip().lower() == "true"


class ControllerLoop:
    """What changed for the controller since its last step, and the loop that handles it."""

    def __init__(self, broker: Broker, lock: threading.Lock) -> None:
        self.broker = broker
        assert broker.cluster is not None  # ZooKeeper mode
        self.controller = Controller(broker.cluster, broker.broker_id, self._unclean_for)
        self.lock = trio.Lock()  # one controller step (or election request) at a time
        self._marks_lock = lock  # the replica manager's: watch events mark from another thread
        self.wake = trio.Event()
        self.stopping = False
        self.controller_changed = True
        # /controller's broker as last read (Metadata and DescribeCluster answer it from here)
        self.known_controller: int | None = None
        self.brokers_changed = True
        self.deletions = True
        self.log_dirs = True
        self.topic_changes = TopicChanges()  # for kafkapy.replication.topic_controller

    def _unclean_for(self, topic: str) -> bool:
        """unclean.leader.election.enable of ``topic`` (else the broker's)."""
        info = self.broker.topics.get(topic) if self.broker.topics else None
        if info is not None and "unclean.leader.election.enable" in info.configs:
            return _bool(info.configs["unclean.leader.election.enable"])
        return bool(self.broker.config.unclean_leader_election_enable)

    def mark_all(self) -> None:
        """Everything may have changed (a new ZooKeeper session); the caller holds the lock."""
        self.controller_changed = self.brokers_changed = self.deletions = self.log_dirs = True
        self.topic_changes.full = True

    async def run(self) -> None:
        broker = self.broker
        rebalance = _bool(_raw(broker, "auto.leader.rebalance.enable", "true"))
        interval = float(_raw(broker, "leader.imbalance.check.interval.seconds", "300"))
        threshold = int(_raw(broker, "leader.imbalance.per.broker.percentage", "10"))
        next_rebalance = trio.current_time() + interval
        while True:
            with trio.move_on_at(next_rebalance if rebalance else float("inf")):
                await self.wake.wait()
            self.wake = trio.Event()
            if self.stopping:
                return
            with self._marks_lock:
                ctrl, brokers = self.controller_changed, self.brokers_changed
                deletions, log_dirs = self.deletions, self.log_dirs
                self.controller_changed = self.brokers_changed = False
                self.deletions = self.log_dirs = False
                topics = self.topic_changes.take()
            try:
                if ctrl:
                    cluster = broker.cluster
                    self.known_controller = await trio.to_thread.run_sync(cluster.controller_id)
                async with self.lock:
                    c = self.controller
                    if c.active and ctrl:
                        await trio.to_thread.run_sync(c.check_still_controller)
                    if not c.active:
                        if await trio.to_thread.run_sync(c.try_elect):
                            broker.controller_epoch = c.epoch
                            self.known_controller = broker.broker_id
                            brokers = deletions = log_dirs = topics.full = True
                    if c.active:
                        if deletions:
                            await trio.to_thread.run_sync(c.process_deletions)
                        if log_dirs:
                            await trio.to_thread.run_sync(c.process_log_dir_events)
                        if brokers:
                            await trio.to_thread.run_sync(c.on_brokers_change)
                            topics.full = True
                        if topics:
                            await trio.to_thread.run_sync(on_topics_change, c, topics)
                        if rebalance and trio.current_time() >= next_rebalance:
                            await trio.to_thread.run_sync(c.rebalance, threshold)
                if trio.current_time() >= next_rebalance:
                    next_rebalance = trio.current_time() + interval
            except NotControllerError:
                self.controller.active = False
                self.wake.set()
            except (StoreError, OSError) as e:
                log.warning("controller step failed, retrying: %s", e)
                with self._marks_lock:
                    self.mark_all()
                await trio.sleep(0.5)
                self.wake.set()

    async def elect_leaders(self, election_type: int, wanted: dict[str, list[int]] | None):
        """ElectLeaders: NotControllerError unless this broker is the controller."""
        async with self.lock:
            if not self.controller.active:
                raise NotControllerError()
            return await trio.to_thread.run_sync(self.controller.elect, election_type, wanted)

    async def resign(self) -> None:
        """Stop the loop and give up the controller role (controlled shutdown)."""
        self.stopping = True
        self.wake.set()
        async with self.lock:
            if self.controller.active:
                await trio.to_thread.run_sync(self.controller.resign)
