"""A leader cut off from ZooKeeper longer than its session stops leading (the availability half of
a ZooKeeper session expiry, as Kafka's ZooKeeper-mode broker loses its leaderships when its
session expires: KafkaZkClient's expiry handler, then the controller's LeaderAndIsr).

ZooKeeper tells a client that its session expired only once the client reaches the ensemble
again; meanwhile the ensemble has deleted the broker's registration and the controller has
elected new leaders. A leader that went on answering Produce with acks=all would make producers
wait for followers that now follow someone else (REQUEST_TIMED_OUT until the heal), and clients
would not look for the new leader. So once the ensemble has been silent for
zookeeper.session.timeout.ms (``ZooKeeperStore.unreachable_for``), this broker gives up each
leadership whose in-sync followers have stopped fetching from it (they follow the new leader;
when the whole ensemble is down they go on fetching here and nothing changes): the partitions
answer NOT_LEADER_OR_FOLLOWER to Produce and Fetch (writes waiting for the ISR complete with it
too) and have no leader in this broker's view, the group and transaction coordinators resign
their partitions, and the controller role is dropped. Once it has resigned something, a
Metadata request closes its connection (server/apis/metadata.py): what this broker knows of
leaders is stale, and a client that only reaches this broker would ask it forever (librdkafka
asks the brokers it is connected to), so it is sent to another broker, which knows the new
leader. When the connection is back, the replica manager reads every partition state
again (its reconnect handler): the new leader's epoch makes this broker a follower, or, if the
session survived and nobody was elected, the same state makes it the leader again.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from .replica_manager import ReplicaManager

log = logging.getLogger("kafkapy.replica_manager")

NO_LEADER = -1


class ZkSessionFence:
    def __init__(self, manager: ReplicaManager) -> None:
        self.manager = manager
        config = manager.broker.config
        self.session_timeout_s = config.zookeeper_session_timeout_ms / 1000
        # followers long-poll for replica.fetch.wait.max.ms: one silent for three of those
        # follows someone else
        self.followers_quiet_ms = max(3 * config.replica_fetch_wait_max_ms, 1000)
        self.fenced = False  # leaderships given up since ZooKeeper went silent

    async def run(self) -> None:
        """Watch the ZooKeeper connection: past the session, resign what others took over."""
        interval = min(max(self.session_timeout_s / 50, 0.05), 0.2)
        store = self.manager.store
        while True:
            await trio.sleep(interval)
            silent = store.unreachable_for()
            if silent == 0.0:
                self.fenced = False  # the reconnect handler re-reads the partition states
            elif silent >= self.session_timeout_s:
                self.resign_abandoned(silent)

    def abandoned(self, now_ms: int) -> list[tuple[str, int]]:
        """Partitions led here whose in-sync followers all stopped fetching from this broker:
        they follow a leader the controller elected meanwhile. (Left alone when ZooKeeper is
        down for every broker: the followers, cut off too, keep fetching from here, and the
        partition goes on serving, as with Kafka.)"""
        out = []
        for tp, rp in self.manager.partitions.items():
            if not rp.is_leader:
                continue
            isr = [b for b in rp.isr if b != rp.broker_id]
            if not isr:
                continue  # no other in-sync replica: no clean election could move it
            if all(
                now_ms - getattr(rp.followers.get(b), "last_fetch_ms", 0) >= self.followers_quiet_ms
                for b in isr
            ):
                out.append(tp)
        return out

    def resign_abandoned(self, silent_s: float) -> None:
        """Give up the leaderships others took over (trio thread)."""
        m = self.manager
        gone = self.abandoned(m.now_ms())
        if not gone:
            return
        logs = m.broker.logs
        resigned: dict[str, list[int]] = {}
        for topic, p in gone:
            rp = m.partitions[(topic, p)]
            rp.leader = NO_LEADER  # the next state read from ZooKeeper decides again
            rp.isr_change_pending = False
            resigned.setdefault(topic, []).append(p)
            plog = logs.get_log(topic, p) if logs is not None else None
            if plog is not None:
                plog.stamp += 1  # fetch sessions read the partition again
            m.broker.appended.notify((topic, p))  # acks=all waiters answer NOT_LEADER
        self.fenced = True
        m.controller_loop.controller.active = False
        log.warning(
            "ZooKeeper unreachable for %.1fs (session timeout %.1fs) and the followers gone: "
            "broker %d resigned leadership of %d partitions",
            silent_s,
            self.session_timeout_s,
            m.me,
            len(gone),
        )
        registry = m.broker.topics
        for topic, ps in resigned.items():
            m._coordinator_leadership(topic, [], ps)
            info = registry.get(topic)
            if info is not None:  # this broker's view says so too
                states = dict(info.states)
                for p in ps:
                    if p in states:
                        states[p] = replace(states[p], leader=NO_LEADER)
                registry._remember(replace(info, states=states))
