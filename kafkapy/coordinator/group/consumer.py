"""A consumer group of the new protocol (KIP-848), its members, and reconciliation.

The coordinator keeps three assignments per member:

- the *target* assignment, computed by the group's server-side assignor whenever the group epoch
  moves past the assignment epoch (a member joined, left, changed its subscription, or a subscribed
  topic changed);
- the *current* assignment (``assigned``), what the member has been told it owns, at its
  ``member_epoch``;
- ``pending_revocation``: partitions the member still owns but must give up.

A member converges on the target through these states (Kafka's MemberState, same byte values):

=====================  =====================================================================
state                  meaning / next
=====================  =====================================================================
STABLE (0)             current == target at the member's epoch; a newer target starts
                       reconciling
UNREVOKED_PARTITIONS   the member must first revoke ``pending_revocation``; it keeps its epoch
(1)                    until a heartbeat no longer lists them as owned (revoke before assign)
UNRELEASED_PARTITIONS  the member is at the target epoch but some target partitions are still
(2)                    owned by others (their epoch is set); they are handed over once released
=====================  =====================================================================

A partition is never given to a member while another member still owns it (assigned or pending
revocation): ``partition_epochs`` records the epoch of each partition's current owner.

Group states, derived (Kafka's ConsumerGroupState): Empty (no members), Assigning (group epoch
ahead of the assignment epoch), Reconciling (some member not yet stable at the assignment epoch),
Stable, Dead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import IntEnum

from .classic import OffsetAndMetadata

Assignment = dict[uuid.UUID, set[int]]

LEAVE_EPOCH = -1
LEAVE_STATIC_EPOCH = -2


class MemberState(IntEnum):
    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


def copy_assignment(a: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in a.items() if ps}


def assignment_equal(a: Assignment, b: Assignment) -> bool:
    return copy_assignment(a) == copy_assignment(b)


@dataclass(frozen=True, slots=True)
class ClassicMetadata:
    """What a member using the classic protocol (JoinGroup/SyncGroup) inside a consumer group
    joined with: its session timeout and its protocols (name, metadata), in its order of
    preference. Every protocol carries the same 'consumer' subscription."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """The protocol a JoinGroup answer names (the member's first)."""
        return self.protocols[0][0]

    @property
    def metadata(self) -> bytes:
        return self.protocols[0][1]

    def names(self) -> list[str]:
        return [name for name, _ in self.protocols]


@dataclass(slots=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = -1
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMetadata | None = None  # set for members using the classic protocol

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def copy(self, **changes: object) -> ConsumerMember:
        m = replace(self, **changes)  # type: ignore[arg-type]
        if "assigned" not in changes:
            m.assigned = copy_assignment(self.assigned)
        if "pending_revocation" not in changes:
            m.pending_revocation = copy_assignment(self.pending_revocation)
        return m

    def same_subscription(self, other: ConsumerMember) -> bool:
        return (
            self.subscribed_topic_names == other.subscribed_topic_names
            and self.subscribed_topic_regex == other.subscribed_topic_regex
            and self.server_assignor == other.server_assignor
        )

    def same_metadata(self, other: ConsumerMember) -> bool:
        return self.same_subscription(other) and (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.rebalance_timeout_ms,
            self.classic,
        ) == (
            other.instance_id,
            other.rack_id,
            other.client_id,
            other.client_host,
            other.rebalance_timeout_ms,
            other.classic,
        )

    def same_current(self, other: ConsumerMember) -> bool:
        return (
            self.member_epoch == other.member_epoch
            and self.previous_member_epoch == other.previous_member_epoch
            and self.state == other.state
            and assignment_equal(self.assigned, other.assigned)
            and assignment_equal(self.pending_revocation, other.pending_revocation)
        )


class ConsumerGroup:
    group_type = "consumer"
    protocol_type = "consumer"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target: dict[str, Assignment] = {}
        self.partition_epochs: dict[tuple[uuid.UUID, int], int] = {}
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.offsets: dict[tuple[str, int], OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return f"ConsumerGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch})"

    # -- state ---------------------------------------------------------------------------------
    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state != MemberState.STABLE:
                return "Reconciling"
        return "Stable"

    def is_empty(self) -> bool:
        return not self.members

    # -- partitions owned ----------------------------------------------------------------------
    def partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), -1)

    def _release(self, member: ConsumerMember) -> None:
        for a in (member.assigned, member.pending_revocation):
            for t, ps in a.items():
                for p in ps:
                    self.partition_epochs.pop((t, p), None)

    def _claim(self, member: ConsumerMember) -> None:
        for a in (member.assigned, member.pending_revocation):
            for t, ps in a.items():
                for p in ps:
                    self.partition_epochs[(t, p)] = member.member_epoch

    # -- members -------------------------------------------------------------------------------
    def put_member(self, member: ConsumerMember) -> None:
        """Add or replace a member (same id), keeping the ownership table right."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
            if old.instance_id is not None and old.instance_id != member.instance_id:
                self.static_members.pop(old.instance_id, None)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._claim(member)

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self._release(member)
        if member.instance_id is not None:
            if self.static_members.get(member.instance_id) == member_id:
                del self.static_members[member.instance_id]
        self.target.pop(member_id, None)
        return member

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        mid = self.static_members.get(instance_id)
        return None if mid is None else self.members.get(mid)

    def preferred_assignor(self, default: str) -> str:
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return default
        return max(sorted(counts), key=lambda name: counts[name])

    # -- members of the classic protocol (online migration) -----------------------------------
    def classic_members(self) -> list[ConsumerMember]:
        return [m for m in self.members.values() if m.classic is not None]

    def supports_classic_protocols(self, protocol_type: str, names: list[str]) -> bool:
        """Whether a classic member joining with these protocols fits: the 'consumer' protocol
        type and, in a non-empty group, a protocol every classic member supports (Kafka's
        ConsumerGroup.supportsClassicProtocols)."""
        if protocol_type != "consumer":
            return False
        if not self.members:
            return bool(names)
        classic = self.classic_members()
        return any(all(n in m.classic.names() for m in classic) for n in names)  # type: ignore[union-attr]

    def all_classic_except(self, member_id: str) -> bool:
        """Whether every member but ``member_id`` uses the classic protocol, and that one does
        not (the condition for a downgrade when it leaves)."""
        member = self.members.get(member_id)
        return (
            member is not None
            and member.classic is None
            and all(m.classic is not None for mid, m in self.members.items() if mid != member_id)
        )

    def waiting_on_unreleased(self, member: ConsumerMember) -> bool:
        """Whether a member in UNRELEASED_PARTITIONS still waits for a target partition another
        member owns (a classic member rejoins once they are all free)."""
        if member.state != MemberState.UNRELEASED_PARTITIONS:
            return False
        for t, ps in self.target.get(member.member_id, {}).items():
            have = member.assigned.get(t, set())
            if any(p not in have and self.partition_epoch(t, p) != -1 for p in ps):
                return True
        return False

    def subscribed_topic_names(self, resolve_regex: Callable[[str], set[str]]) -> set[str]:
        topics: set[str] = set()
        for m in self.members.values():
            topics |= member_topics(m, resolve_regex)
        return topics

    def is_subscribed_to(self, topic: str, resolve_regex: Callable[[str], set[str]]) -> bool:
        return topic in self.subscribed_topic_names(resolve_regex)


def member_topics(member: ConsumerMember, resolve_regex: Callable[[str], set[str]]) -> set[str]:
    topics = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        topics |= resolve_regex(member.subscribed_topic_regex)
    return topics


# -- reconciliation (pure) ---------------------------------------------------------------------


def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """Whether the member's reported partitions include any of ``partitions``; a member that did
    not report (None) is assumed to still own them."""
    if owned is None:
        return True
    return any(owned.get(t, set()) & ps for t, ps in partitions.items())


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    partition_epoch: Callable[[uuid.UUID, int], int],
) -> ConsumerMember:
    """The member's next current assignment towards ``target`` (Kafka's CurrentAssignmentBuilder).

    ``owned`` is what the member reported owning in this heartbeat (None: not reported)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
    elif member.state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
    return _next_assignment(
        member, member.member_epoch, target_epoch, target, owned, partition_epoch
    )


def _next_assignment(
    member: ConsumerMember,
    member_epoch: int,
    target_epoch: int,
    target: Assignment,
    owned: Assignment | None,
    partition_epoch: Callable[[uuid.UUID, int], int],
) -> ConsumerMember:
    assigned: Assignment = {}
    revoke: Assignment = {}
    pending: Assignment = {}
    unreleased = False
    for t in set(target) | set(member.assigned):
        want = target.get(t, set())
        have = member.assigned.get(t, set())
        keep = have & want
        gone = have - keep
        todo = want - keep
        blocked = {
            p
            for p in todo
            if partition_epoch(t, p) != -1 and p not in member.pending_revocation.get(t, set())
        }
        if blocked:
            unreleased = True
            todo -= blocked
        if keep:
            assigned[t] = keep
        if gone:
            revoke[t] = gone
        if todo:
            pending[t] = todo
    if revoke and _owns_any(owned, revoke):
        # revoke first: the epoch stays until the member acknowledges losing them
        return member.copy(
            state=MemberState.UNREVOKED_PARTITIONS,
            member_epoch=member_epoch,
            previous_member_epoch=member.member_epoch,
            assigned=assigned,
            pending_revocation=revoke,
        )
    for t, ps in pending.items():
        assigned.setdefault(t, set()).update(ps)
    return member.copy(
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        member_epoch=target_epoch,
        previous_member_epoch=member_epoch,
        assigned=assigned,
        pending_revocation={},
    )
