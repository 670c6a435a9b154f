"""The ZooKeeper-mode controller (Kafka 3.x KafkaController, reduced to what kafkapy needs).

Blocking code on :class:`~kafkapy.metadata.cluster.ClusterMetadata`; the broker runs it in a
worker thread, one call at a time.

* election: every broker races for the ephemeral /controller; the winner's multi also bumps
  /controller_epoch with a conditional write (ClusterMetadata.elect_controller). Losers watch
  /controller and race again when it goes.
* fencing: every partition-state write is a multi that checks /controller_epoch still has the
  version this controller's election left, and the state znode the version it read. A zombie
  (a controller whose session expired and that another broker replaced) fails the check and
  resigns; a leader's concurrent ISR write makes the state check fail and the decision is redone.
* broker changes: leaders that are gone are replaced from the ISR (unclean election when the
  topic or broker allows it), dead followers leave the ISR.
* topic deletion: /admin/delete_topics/T entries (written by tools) are carried out.
* controlled shutdown, preferred-leader election, auto leader rebalance.
* log directory failures (/log_dir_event_notification): the broker's replicas on the failed
  directory are offline (Kafka's OfflineReplica): out of the ISR, leadership to another ISR
  member; they are not elected again until that broker re-registers (restarts).
* new partitions' states and partition reassignments: kafkapy.replication.topic_controller.

Brokers learn about leadership by watching the state znodes themselves (instead of Kafka's
LeaderAndIsr / UpdateMetadata requests) and fence on the leader epoch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.errors import BadVersionError, ControllerExistsError, NoNodeError
from kafkapy.metadata.log_dir_events import take_log_dir_events
from kafkapy.metadata.models import PartitionState
from kafkapy.metadata.store import CheckOp, SetOp

from . import election
from .election import Decision

log = logging.getLogger("kafkapy.controller")


class NotControllerError(Exception):
    """This broker is not (or no longer) the controller."""


@dataclass(slots=True)
class ElectionResult:
    topic: str
    partition: int
    error: str  # "", "not_needed", "not_available", "unknown", "not_controller"


class Controller:
    def __init__(
        self,
        cluster: ClusterMetadata,
        broker_id: int,
        unclean_for: Callable[[str], bool] = lambda _t: False,
    ) -> None:
        self.cluster = cluster
        self.broker_id = broker_id
        self.unclean_for = unclean_for
        self.epoch = 0
        self.epoch_version = -1
        self.active = False
        self.known_topics: set[str] = set()  # topic names seen by the last topic scan
        # (topic, partition) -> brokers whose replica sits on a failed log directory
        self.offline_replicas: dict[tuple[str, int], set[int]] = {}

    # -- election ------------------------------------------------------------------------------
    def try_elect(self) -> bool:
        """Race for /controller; True if this broker is (now) the controller."""
        try:
            epoch = self.cluster.elect_controller(self.broker_id)
        except ControllerExistsError:
            self.active = False
            return False
        current, version = self.cluster.controller_epoch()
        if current != epoch:
            self.active = False
            return False
        if not self.active or self.epoch != epoch:
            log.info("broker %d is the controller, controller_epoch=%d", self.broker_id, epoch)
        self.epoch, self.epoch_version, self.active = epoch, version, True
        return True

    def check_still_controller(self) -> bool:
        info = self.cluster.controller()
        epoch, version = self.cluster.controller_epoch()
        ok = (
            info is not None
            and info.broker_id == self.broker_id
            and version == self.epoch_version
            and epoch == self.epoch
        )
        if not ok and self.active:
            log.info("broker %d is no longer the controller", self.broker_id)
            self.active = False
        return ok

    def resign(self) -> None:
        if self.active:
            self.cluster.resign_controller(self.broker_id)
        self.active = False

    # -- writes --------------------------------------------------------------------------------
    def _write(self, topic: str, partition: int, old: PartitionState, d: Decision) -> bool:
        """Fenced write of a new state; False when the state changed meanwhile (redo)."""
        if not self.active:
            raise NotControllerError()
        new = PartitionState(
            leader=d.leader,
            leader_epoch=d.leader_epoch,
            isr=list(d.isr),
            controller_epoch=self.epoch,
            leader_recovery_state=old.leader_recovery_state,
        )
        path = zn.TOPIC_PARTITION_STATE.path(topic, partition)
        try:
            self.cluster.store.multi(
                [
                    CheckOp(zn.CONTROLLER_EPOCH.path(), self.epoch_version),
                    SetOp(path, zn.TOPIC_PARTITION_STATE.encode(new), old.zk_version),
                ]
            )
        except BadVersionError as e:
            if getattr(e, "op_index", None) == 0:
                log.warning("controller epoch moved on: broker %d is fenced", self.broker_id)
                self.active = False
                raise NotControllerError() from None
            return False
        except NoNodeError:
            return True  # topic deleted meanwhile
        log.info(
            "partition %s-%d: leader %d epoch %d isr %s%s",
            topic,
            partition,
            d.leader,
            d.leader_epoch,
            d.isr,
            " (unclean)" if d.unclean else "",
        )
        return True

    def _decide_all(
        self,
        decide: Callable[[str, list[int], PartitionState, int], Decision | None],
        topics: Iterable[str] | None = None,
    ) -> int:
        changed = 0
        for name in list(topics) if topics is not None else self.cluster.list_topics():
            info = self.cluster.get_topic(name)
            if info is None:
                continue
            for p, replicas in sorted(info.partitions.items()):
                for _attempt in range(5):
                    state = self.cluster.get_partition_state(name, p)
                    if state is None:
                        break
                    d = decide(name, replicas, state, p)
                    if d is None:
                        break
                    if self._write(name, p, state, d):
                        changed += 1
                        break
        return changed

    # -- events --------------------------------------------------------------------------------
    def _usable(self, alive: set[int], topic: str, partition: int) -> set[int]:
        """The live brokers whose replica of the partition is not on a failed log dir."""
        offline = self.offline_replicas.get((topic, partition))
        return alive - offline if offline else alive

    def _forget_restarted(self, alive: set[int]) -> None:
        """A broker that left the live set comes back with its log dirs checked again."""
        for tp, brokers in list(self.offline_replicas.items()):
            brokers &= alive
            if not brokers:
                del self.offline_replicas[tp]

    def on_brokers_change(self, live: Collection[int] | None = None) -> int:
        """Elect leaders for partitions whose leader is gone; drop dead followers from ISRs."""
        alive = set(self.cluster.list_brokers()) if live is None else set(live)
        self._forget_restarted(alive)

        def decide(topic: str, replicas: list[int], s: PartitionState, p: int) -> Decision | None:
            usable = self._usable(alive, topic, p)
            return election.on_brokers_change(
                replicas, s.leader, s.leader_epoch, s.isr, usable, unclean=self.unclean_for(topic)
            )

        return self._decide_all(decide)

    def on_log_dir_failure(self, broker: int, partitions: Iterable[tuple[str, int]]) -> int:
        """``broker``'s replicas of ``partitions`` are offline (a failed log directory)."""
        wanted: set[tuple[str, int]] = set()
        for tp in partitions:
            self.offline_replicas.setdefault(tp, set()).add(broker)
            wanted.add(tp)
        if not wanted:
            return 0
        log.info("broker %d: replicas offline on a failed log dir: %s", broker, sorted(wanted))
        alive = set(self.cluster.list_brokers())

        def decide(topic: str, replicas: list[int], s: PartitionState, p: int) -> Decision | None:
            if (topic, p) not in wanted:
                return None
            return election.on_brokers_change(
                replicas,
                s.leader,
                s.leader_epoch,
                s.isr,
                self._usable(alive, topic, p),
                unclean=self.unclean_for(topic),
            )

        return self._decide_all(decide, {t for t, _ in wanted})

    def controlled_shutdown(self, leaving: int) -> int:
        """Move leadership away from ``leaving`` and take it out of every ISR."""
        alive = set(self.cluster.list_brokers()) - {leaving}

        def decide(_topic: str, replicas: list[int], s: PartitionState, _p: int) -> Decision | None:
            return election.to_move_away(replicas, s.leader, s.leader_epoch, s.isr, alive, leaving)

        return self._decide_all(decide)

    def process_log_dir_events(self) -> int:
        """Take the /log_dir_event_notification notifications (Kafka's LogDirEventNotification
        handling); returns the number of partition states changed."""
        changed = 0
        for event in take_log_dir_events(self.cluster.store):
            if event.partitions is None:
                log.warning(
                    "log dir event of broker %d names no partitions (not written by kafkapy): "
                    "its replicas stay as they are",
                    event.broker,
                )
                continue
            changed += self.on_log_dir_failure(event.broker, event.partitions)
        return changed

    def process_deletions(self) -> list[str]:
        """Carry out /admin/delete_topics requests."""
        pending = self.cluster.pending_deletions()
        done = []
        for name in pending:
            try:
                self.cluster._finish_deletion(name)
                done.append(name)
                log.info("deleted topic %s", name)
            except NoNodeError:
                pass
        return done

    def elect(
        self, election_type: int, wanted: dict[str, list[int]] | None
    ) -> list[ElectionResult]:
        """ElectLeaders: type 0 preferred, 1 unclean; ``wanted`` None = every partition."""
        alive = set(self.cluster.list_brokers())
        results: list[ElectionResult] = []
        topics = self.cluster.list_topics() if wanted is None else sorted(wanted)
        for name in topics:
            info = self.cluster.get_topic(name)
            parts = (sorted(info.partitions) if info else []) if wanted is None else wanted[name]
            for p in parts:
                if info is None or p not in info.partitions:
                    results.append(ElectionResult(name, p, "unknown"))
                    continue
                err = "not_available"
                for _attempt in range(5):
                    s = self.cluster.get_partition_state(name, p)
                    if s is None:
                        break
                    fn = election.preferred if election_type == 0 else election.unclean
                    usable = self._usable(alive, name, p)
                    d, err = fn(info.partitions[p], s.leader, s.leader_epoch, s.isr, usable)
                    if d is None or self._write(name, p, s, d):
                        break
                results.append(ElectionResult(name, p, err))
        return results

    def rebalance(self, threshold_pct: int) -> int:
        """auto.leader.rebalance.enable: preferred election for brokers over the threshold."""
        alive = set(self.cluster.list_brokers())
        rows: list[tuple[str, int, list[int], PartitionState]] = []
        for name in self.cluster.list_topics():
            info = self.cluster.get_topic(name)
            if info is None:
                continue
            for p, replicas in info.partitions.items():
                s = info.states.get(p)
                if s is not None:
                    rows.append((name, p, replicas, s))
        over = election.imbalanced_brokers([(r, s.leader) for _, _, r, s in rows], threshold_pct)
        wanted: dict[str, list[int]] = {}
        for name, p, replicas, s in rows:
            if (
                replicas
                and replicas[0] in over
                and replicas[0] in alive
                and s.leader != replicas[0]
            ):
                wanted.setdefault(name, []).append(p)
        if not wanted:
            return 0
        return sum(1 for r in self.elect(0, wanted) if r.error == "")
