"""The controller's topic duties in ZooKeeper mode: creating the states of new partitions and
driving partition reassignments. Blocking code on ClusterMetadata, run by the broker in a worker
thread under its controller lock, like :mod:`kafkapy.replication.controller`.

* New partitions: the broker that creates a topic (or adds partitions) writes only
  /brokers/topics/T, as Kafka's does; the controller, which hears about every topic change,
  creates the missing /brokers/topics/T/partitions/P/state znodes (kafkapy.replication.reassignment
  .initial_state: live replicas as ISR, the first leads, leader epoch 0, its controller epoch). A
  partition with no live replica gets its state once one registers (broker changes rescan).
* Reassignments: ``alter`` validates and records AlterPartitionReassignments entries in the topic
  document; afterwards every change of the topic or of one of its states makes the controller
  check whether the move can be completed (all target replicas in the ISR) and complete it. The
  state lives only in the tree, so a new controller resumes with a full scan after its election.

Every write is a multi that first checks /controller_epoch (fencing, as Controller._write) and
then the versions of the documents the decision was made from; a lost race is re-read and redone.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.errors import BadVersionError, NodeExistsError, NoNodeError
from kafkapy.metadata.models import PartitionState, TopicAssignment
from kafkapy.metadata.store import CheckOp, CreateOp, Op, SetOp
from kafkapy.protocol.errors import ErrorCode

from .controller import Controller, NotControllerError
from .election import NO_LEADER, Decision
from .reassignment import (
    Rejection,
    ReplicaAssignment,
    Step,
    begin,
    check_request,
    complete,
    initial_state,
)

log = logging.getLogger("kafkapy.controller")

ATTEMPTS = 5


@dataclass(slots=True)
class TopicChanges:
    """What the controller should look at: every topic (``full``: after its election, broker
    changes or an error), the topic list (``listed``), or the topics named."""

    full: bool = True
    listed: bool = False
    names: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return self.full or self.listed or bool(self.names)

    def take(self) -> TopicChanges:
        """A copy of the pending changes; this one is reset."""
        out = TopicChanges(self.full, self.listed, set(self.names))
        self.full = self.listed = False
        self.names.clear()
        return out


def entry_of(doc: TopicAssignment, partition: int) -> ReplicaAssignment | None:
    if partition not in doc.partitions:
        return None
    return ReplicaAssignment.of(
        doc.partitions[partition],
        doc.adding_replicas.get(partition, ()),
        doc.removing_replicas.get(partition, ()),
    )


def with_entry(doc: TopicAssignment, partition: int, a: ReplicaAssignment) -> TopicAssignment:
    parts = dict(doc.partitions)
    parts[partition] = list(a.replicas)
    adding = {p: r for p, r in doc.adding_replicas.items() if p != partition}
    removing = {p: r for p, r in doc.removing_replicas.items() if p != partition}
    if a.adding:
        adding[partition] = list(a.adding)
    if a.removing:
        removing[partition] = list(a.removing)
    return TopicAssignment(parts, doc.topic_id, adding, removing)


def _fenced(ctrl: Controller, ops: Sequence[Op]) -> bool:
    """Apply ``ops`` while still the controller: True when done, False when a version check
    failed (re-read and redo); NotControllerError when the controller epoch moved on."""
    if not ctrl.active:
        raise NotControllerError()
    try:
        ctrl.cluster.store.multi([CheckOp(zn.CONTROLLER_EPOCH.path(), ctrl.epoch_version), *ops])
    except BadVersionError as e:
        if getattr(e, "op_index", None) == 0:
            log.warning("controller epoch moved on: broker %d is fenced", ctrl.broker_id)
            ctrl.active = False
            raise NotControllerError() from None
        return False
    except (NoNodeError, NodeExistsError):
        return False
    return True


def _state_doc(ctrl: Controller, d: Decision, old: PartitionState | None) -> bytes:
    return zn.TOPIC_PARTITION_STATE.encode(
        PartitionState(
            leader=d.leader,
            leader_epoch=d.leader_epoch,
            isr=list(d.isr),
            controller_epoch=ctrl.epoch,
            leader_recovery_state=old.leader_recovery_state if old else 0,
        )
    )


def _write_step(
    ctrl: Controller,
    name: str,
    partition: int,
    doc: TopicAssignment,
    version: int,
    state: PartitionState | None,
    step: Step,
) -> bool:
    ops: list[Op] = [
        SetOp(
            zn.TOPIC.path(name),
            zn.TOPIC.encode(with_entry(doc, partition, step.assignment)),
            version,
        )
    ]
    path = zn.TOPIC_PARTITION_STATE.path(name, partition)
    if state is not None and step.state is None:
        ops.append(CheckOp(path, state.zk_version))
    elif state is not None and step.state is not None:
        ops.append(SetOp(path, _state_doc(ctrl, step.state, state), state.zk_version))
    return _fenced(ctrl, ops)


# -- new partitions ------------------------------------------------------------------------------


def create_states(ctrl: Controller, name: str, live: Collection[int]) -> int:
    """Create the state znodes the topic's partitions lack; returns how many were created."""
    cluster = ctrl.cluster
    for _attempt in range(ATTEMPTS):
        got = cluster.get_assignment(name)
        if got is None:
            return 0
        have = cluster.partitions_with_state(name)
        new: dict[int, Decision] = {}
        for p, replicas in sorted(got[0].partitions.items()):
            d = initial_state(replicas, live) if p not in have else None
            if d is not None:
                new[p] = d
        if not new:
            return 0
        ops: list[Op] = [CheckOp(zn.TOPIC.path(name), got[1])]  # decided on this assignment
        if not have and cluster.store.exists(zn.TOPIC_PARTITIONS.path(name)) is None:
            ops.append(CreateOp(zn.TOPIC_PARTITIONS.path(name)))
        for p, d in new.items():
            ops.append(CreateOp(zn.TOPIC_PARTITION.path(name, p)))
            ops.append(CreateOp(zn.TOPIC_PARTITION_STATE.path(name, p), _state_doc(ctrl, d, None)))
        if _fenced(ctrl, ops):
            for p, d in new.items():
                log.info("partition %s-%d: created, leader %d isr %s", name, p, d.leader, d.isr)
            return len(new)
    return 0


# -- reassignments -------------------------------------------------------------------------------


def advance(ctrl: Controller, name: str, live: Collection[int]) -> int:
    """Complete the topic's reassignments whose target replicas are all in sync."""
    cluster = ctrl.cluster
    got = cluster.get_assignment(name)
    if got is None:
        return 0
    moving = sorted(set(got[0].adding_replicas) | set(got[0].removing_replicas))
    done = 0
    for p in moving:
        for _attempt in range(ATTEMPTS):
            got = cluster.get_assignment(name)
            if got is None:
                return done
            doc, version = got
            current = entry_of(doc, p)
            state = cluster.get_partition_state(name, p)
            if current is None or state is None:
                break
            step = complete(current, state.leader, state.leader_epoch, state.isr, live)
            if step is None:
                break
            if _write_step(ctrl, name, p, doc, version, state, step):
                done += 1
                d = step.state
                log.info(
                    "partition %s-%d: reassignment to %s completed%s",
                    name,
                    p,
                    list(step.assignment.replicas),
                    f", leader {d.leader} epoch {d.leader_epoch} isr {d.isr}" if d else "",
                )
                break
    return done


def _alter_one(
    ctrl: Controller,
    name: str,
    p: int,
    target: Sequence[int] | None,
    live: Collection[int],
    deleting: Collection[str],
) -> Rejection | None:
    cluster = ctrl.cluster
    for _attempt in range(ATTEMPTS):
        got = None if name in deleting else cluster.get_assignment(name)
        current = entry_of(got[0], p) if got is not None else None
        rejected = check_request(current, target, live)
        if rejected is not None:
            return rejected
        assert got is not None and current is not None
        doc, version = got
        state = cluster.get_partition_state(name, p)
        if state is None:
            step = begin(current, target, NO_LEADER, 0, [], live)
        else:
            step = begin(current, target, state.leader, state.leader_epoch, state.isr, live)
        if step.assignment == current and step.state is None:
            return None  # already there: nothing to record
        if _write_step(ctrl, name, p, doc, version, state, step):
            a = step.assignment
            log.info(
                "partition %s-%d: %s, replicas %s adding %s removing %s",
                name,
                p,
                "reassignment cancelled" if target is None else f"reassigning to {list(target)}",
                list(a.replicas),
                list(a.adding),
                list(a.removing),
            )
            return None
    return Rejection(ErrorCode.unknown_server_error, "The partition kept changing; retry.")


def alter(
    ctrl: Controller, wanted: Mapping[tuple[str, int], Sequence[int] | None]
) -> dict[tuple[str, int], Rejection | None]:
    """AlterPartitionReassignments: start, replace or (replicas None) cancel reassignments.
    Returns each partition's rejection, None when accepted."""
    cluster = ctrl.cluster
    live = set(cluster.list_brokers())
    deleting = set(cluster.pending_deletions())
    out = {
        (name, p): _alter_one(ctrl, name, p, target, live, deleting)
        for (name, p), target in wanted.items()
    }
    for name in sorted({name for (name, _p), err in out.items() if err is None}):
        advance(ctrl, name, live)  # a move to replicas already in sync completes at once
    return out


# -- the entry point for topic events -------------------------------------------------------------


def on_topics_change(ctrl: Controller, changes: TopicChanges) -> int:
    """Look at the topics that changed (all of them when ``changes.full``; new topics always):
    create missing partition states and complete reassignments. Returns the writes made."""
    cluster = ctrl.cluster
    names = set(cluster.list_topics())
    todo = names if changes.full else (changes.names | (names - ctrl.known_topics)) & names
    ctrl.known_topics = names
    if not todo:
        return 0
    live = set(cluster.list_brokers())
    done = 0
    for name in sorted(todo):
        got = cluster.get_assignment(name)
        if got is None:
            continue
        doc = got[0]
        if set(doc.partitions) - cluster.partitions_with_state(name):
            done += create_states(ctrl, name, live)
        if doc.adding_replicas or doc.removing_replicas:
            done += advance(ctrl, name, live)
    return done
