"""Partition reassignment (KIP-455 as the ZooKeeper-mode controller runs it), and the initial state
of new partitions, as pure functions: the controller reads the metadata tree, asks these what to
write, and writes it with fenced, conditional multis.

Vocabulary (Kafka's): ORS the original replicas, TRS the target replicas, RS the full replica set
while moving = TRS followed by the ORS members not in TRS, AR (adding) = RS - ORS, RR (removing)
= RS - TRS. /brokers/topics/T keeps RS in "partitions", AR in "adding_replicas" and RR in
"removing_replicas"; ORS = RS - AR and TRS = RS - RR are derived, so a new controller resumes a
reassignment from the document alone.

1. ``check_request`` validates an AlterPartitionReassignments entry; ``begin`` computes the new
   document entry. A new target replaces an ongoing reassignment, relative to its ORS; a
   cancellation (null replicas) is a reassignment back to ORS. Replicas of the old RS that are not
   in the new one (the adding replicas of a superseded reassignment) leave the ISR at once.
2. The brokers of AR see themselves in RS, create the partition and follow the leader, which adds
   them to the ISR once they caught up.
3. ``complete`` once TRS is a subset of the ISR: RS = TRS, AR = RR = [], the ISR loses RR, and
   when the leader is not in TRS the first live ISR member of TRS leads with a new leader epoch.
   The brokers of RR see they are no longer replicas: they stop fetching and delete the partition.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode

from .election import NO_LEADER, Decision


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """One partition's entry of the topic document: RS with AR and RR."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @classmethod
    def of(
        cls, replicas: Sequence[int], adding: Sequence[int] = (), removing: Sequence[int] = ()
    ) -> ReplicaAssignment:
        return cls(tuple(replicas), tuple(adding), tuple(removing))

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def original(self) -> list[int]:
        """ORS: RS without the replicas being added."""
        return [r for r in self.replicas if r not in self.adding]

    @property
    def target(self) -> list[int]:
        """TRS: RS without the replicas being removed."""
        return [r for r in self.replicas if r not in self.removing]

    def reassign_to(self, target: Sequence[int]) -> ReplicaAssignment:
        """The entry for a reassignment of this partition's ORS to ``target``."""
        original = self.original
        full = list(dict.fromkeys([*target, *original]))
        return ReplicaAssignment(
            tuple(full),
            tuple(r for r in full if r not in original),
            tuple(r for r in full if r not in target),
        )


@dataclass(frozen=True, slots=True)
class Rejection:
    code: ErrorCode
    message: str | None


@dataclass(frozen=True, slots=True)
class Step:
    """What to write for one partition: its new document entry and, when the leader or ISR
    changes, its new state (None: the state stays as it is)."""

    assignment: ReplicaAssignment
    state: Decision | None


def check_request(
    current: ReplicaAssignment | None,
    target: Sequence[int] | None,
    registered: Collection[int],
) -> Rejection | None:
    """Kafka's errors for one requested reassignment (``target`` None cancels), or None."""
    if current is None:
        return Rejection(ErrorCode.unknown_topic_or_partition, "The partition does not exist.")
    if target is None:
        if not current.reassigning:
            return Rejection(
                ErrorCode.no_reassignment_in_progress,
                "No ongoing reassignment for this partition.",
            )
        return None
    bad = ErrorCode.invalid_replica_assignment
    if not target:
        return Rejection(bad, "Empty replica list specified in partition reassignment.")
    if len(set(target)) != len(target):
        return Rejection(
            bad, f"Duplicate replica ids in partition reassignment replica list: {list(target)}"
        )
    if any(b < 0 for b in target):
        return Rejection(bad, f"Invalid broker id in replica list: {list(target)}")
    adding = current.reassign_to(target).adding
    missing = [b for b in adding if b not in registered]
    if missing:
        return Rejection(
            bad,
            f"Replica assignment has brokers that are not alive. Replica list: {list(adding)}, "
            f"live broker list: {sorted(registered)}",
        )
    return None


def shrink_to(
    keep: Sequence[int],
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
) -> Decision | None:
    """The state once only ``keep`` remain replicas: the ISR without the others, and a leader
    from ``keep`` (the current one if it stays, else the first live ISR member of ``keep``, with
    a new epoch; offline when there is none). None when nothing changes."""
    new_isr = [b for b in isr if b in keep]
    if leader != NO_LEADER and leader in keep:
        if new_isr == list(isr):
            return None
        return Decision(leader, leader_epoch, new_isr or [leader])
    for b in keep:
        if b in new_isr and b in live:
            return Decision(b, leader_epoch + 1, new_isr)
    if leader == NO_LEADER and new_isr == list(isr):
        return None
    return Decision(NO_LEADER, leader_epoch + 1, new_isr)


def begin(
    current: ReplicaAssignment,
    target: Sequence[int] | None,
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
) -> Step:
    """Start (or replace, or with ``target`` None cancel) a reassignment that ``check_request``
    accepted."""
    new = current.reassign_to(current.original if target is None else target)
    dropped = [r for r in current.replicas if r not in new.replicas]
    state = shrink_to(new.replicas, leader, leader_epoch, isr, live) if dropped else None
    return Step(new, state)


def complete(
    current: ReplicaAssignment,
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
) -> Step | None:
    """Finish a reassignment whose target replicas are all in sync; None while it must wait
    (not all of TRS in the ISR, or no live member of TRS could lead)."""
    if not current.reassigning:
        return None
    target = current.target
    if not set(target) <= set(isr):
        return None
    state = shrink_to(target, leader, leader_epoch, isr, live)
    if state is not None and state.leader == NO_LEADER:
        return None
    return Step(ReplicaAssignment(tuple(target)), state)


def initial_state(replicas: Sequence[int], live: Collection[int]) -> Decision | None:
    """A new partition's first state: the live replicas form the ISR and the first of them
    leads, at leader epoch 0. None while no replica is alive (created once one is)."""
    alive = [b for b in replicas if b in live]
    if not alive:
        return None
    return Decision(alive[0], 0, alive)
