"""The controller's leader-election decisions, as pure functions (Kafka's PartitionLeaderElection
algorithms, ZooKeeper mode).

* offline: the leader is gone; the new leader is the first replica (assignment order) that is
  alive and in the ISR; with unclean.leader.election.enable, the first live replica even outside
  the ISR (the ISR becomes just it). With no candidate the partition goes offline (leader -1) and
  keeps its last ISR, so that member is elected again when it returns.
* preferred: the first replica of the assignment, when alive and in the ISR.
* a follower that died leaves the ISR at once (the leader would drop it only after
  replica.lag.time.max.ms, stalling acks=all).

Each decision returns the new (leader, leader_epoch, isr) or None when nothing changes; the leader
epoch is bumped whenever the leader changes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Decision:
    leader: int
    leader_epoch: int
    isr: list[int]
    unclean: bool = False


def on_brokers_change(
    replicas: Sequence[int],
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
    *,
    unclean: bool = False,
) -> Decision | None:
    """React to the live broker set: elect a new leader if the current one is not alive (or
    there is none), drop dead followers from the ISR. None if nothing changes."""
    live_isr = [b for b in isr if b in live]
    if leader != NO_LEADER and leader in live:
        if live_isr != list(isr):
            return Decision(leader, leader_epoch, live_isr or [leader])
        return None
    for b in replicas:
        if b in live and b in live_isr:
            return Decision(b, leader_epoch + 1, live_isr)
    if unclean:
        for b in replicas:
            if b in live:
                return Decision(b, leader_epoch + 1, [b], unclean=True)
    if leader == NO_LEADER:
        return None
    # offline: keep the last ISR (the dead leader when nobody else was in sync)
    return Decision(NO_LEADER, leader_epoch + 1, live_isr or [b for b in isr if b == leader])


def preferred(
    replicas: Sequence[int],
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
) -> tuple[Decision | None, str]:
    """Preferred-replica election: (decision, reason) where reason is "", "not_needed" or
    "not_available"."""
    if not replicas:
        return None, "not_available"
    want = replicas[0]
    if leader == want:
        return None, "not_needed"
    if want not in live or want not in isr:
        return None, "not_available"
    return Decision(want, leader_epoch + 1, list(isr)), ""


def unclean(
    replicas: Sequence[int],
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
) -> tuple[Decision | None, str]:
    """ElectLeaders with election type UNCLEAN: only for partitions without a live leader."""
    if leader != NO_LEADER and leader in live:
        return None, "not_needed"
    d = on_brokers_change(replicas, leader, leader_epoch, isr, live, unclean=True)
    if d is None or d.leader == NO_LEADER:
        return None, "not_available"
    return d, ""


def to_move_away(
    replicas: Sequence[int],
    leader: int,
    leader_epoch: int,
    isr: Sequence[int],
    live: Collection[int],
    leaving: int,
) -> Decision | None:
    """Controlled shutdown of ``leaving``: leadership to another live ISR member, and
    ``leaving`` out of the ISR (Kafka's ControlledShutdownLeaderElection)."""
    if leaving not in isr and leader != leaving:
        return None
    new_isr = [b for b in isr if b != leaving and b in live]
    if leader != leaving:
        return Decision(leader, leader_epoch, new_isr or [leader])
    for b in replicas:
        if b in new_isr:
            return Decision(b, leader_epoch + 1, new_isr)
    return None  # nobody else in sync: it stays leader until it is gone


def imbalanced_brokers(
    partitions: Sequence[tuple[Sequence[int], int]], threshold_pct: int
) -> set[int]:
    """Brokers whose share of partitions not led by them, among those they are preferred leader
    of, exceeds ``threshold_pct`` (leader.imbalance.per.broker.percentage)."""
    preferred_count: dict[int, int] = {}
    not_led: dict[int, int] = {}
    for replicas, leader in partitions:
        if not replicas:
            continue
        want = replicas[0]
        preferred_count[want] = preferred_count.get(want, 0) + 1
        if leader != want:
            not_led[want] = not_led.get(want, 0) + 1
    return {
        b
        for b, total in preferred_count.items()
        if total and not_led.get(b, 0) * 100 / total > threshold_pct
    }
