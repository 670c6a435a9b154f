"""A classic group (the JoinGroup/SyncGroup protocol) and its members.

States and the transitions allowed between them, as in Kafka's ClassicGroupState:

======================  =====================================================================
state                   may move to
======================  =====================================================================
Empty                   PreparingRebalance (a member joins), Dead (deleted, or expired offsets)
PreparingRebalance      CompletingRebalance (join phase done with members), Empty (done with
                        none), Dead
CompletingRebalance     Stable (the leader's assignment is stored), PreparingRebalance, Dead
Stable                  PreparingRebalance (join, leave, expiry, metadata change), Dead
Dead                    Dead
======================  =====================================================================

A loaded group starts Empty (no members) or Stable. This module only holds the group's data and
answers questions about it; the coordinator drives the transitions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from .pending import Pending
from .records import GroupValue, MemberRecord, subscribed_topics


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = GroupState
TRANSITIONS: dict[GroupState, frozenset[GroupState]] = {
    S.EMPTY: frozenset({S.PREPARING_REBALANCE, S.DEAD}),
    S.PREPARING_REBALANCE: frozenset({S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD}),
    S.COMPLETING_REBALANCE: frozenset({S.STABLE, S.PREPARING_REBALANCE, S.DEAD}),
    S.STABLE: frozenset({S.PREPARING_REBALANCE, S.DEAD}),
    S.DEAD: frozenset({S.DEAD}),
}


class IllegalTransition(RuntimeError):
    pass


@dataclass(slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    require_known_member_id: bool = True  # JoinGroup v4+
    reason: str | None = None


@dataclass(slots=True)
class JoinResult:
    error: int
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class SyncResult:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


@dataclass(slots=True)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_pending: Pending[JoinResult] | None = None
    sync_pending: Pending[SyncResult] | None = None
    is_new: bool = False

    @property
    def awaiting_join(self) -> bool:
        return self.join_pending is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_pending is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def protocol_set(self) -> set[str]:
        """The protocols supported, each once (a JoinGroup may repeat a name; Kafka counts a
        member once per protocol, so that every candidate is supported by every member)."""
        return {name for name, _ in self.protocols}

    def metadata_for(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str:
        for name in self.protocol_names():
            if name in candidates:
                return name
        raise ValueError("member supports none of the candidate protocols")

    def complete_join(self, result: JoinResult) -> bool:
        pending, self.join_pending = self.join_pending, None
        return pending is not None and pending.complete(result)

    def complete_sync(self, result: SyncResult) -> bool:
        pending, self.sync_pending = self.sync_pending, None
        return pending is not None and pending.complete(result)


class ClassicGroup:
    group_type = "classic"

    def __init__(self, group_id: str, now_ms: int, state: GroupState = S.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.state_timestamp = now_ms
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicMember] = {}
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: set[str] = set()  # member ids handed out with MEMBER_ID_REQUIRED
        self.pending_sync: set[str] = set()
        self.new_member_added = False
        self.supported_protocols: Counter[str] = Counter()
        self.offsets: dict[tuple[str, int], OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return f"ClassicGroup({self.group_id!r}, {self.state.value}, gen={self.generation_id})"

    # -- state ---------------------------------------------------------------------------------
    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    def transition(self, target: GroupState, now_ms: int) -> None:
        if target not in TRANSITIONS[self.state]:
            raise IllegalTransition(
                f"group {self.group_id}: {self.state.value} -> {target.value} is not allowed"
            )
        self.state = target
        self.state_timestamp = now_ms

    def can_rebalance(self) -> bool:
        return PREPARING_REBALANCE_FROM.__contains__(self.state)

    # -- membership ----------------------------------------------------------------------------
    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def add(self, member: ClassicMember, join: Pending[JoinResult] | None = None) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.supported_protocols.update(member.protocol_set())
        member.join_pending = join
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        self.pending_sync.discard(member_id)
        if member is None:
            return None
        self.supported_protocols.subtract(member.protocol_set())
        self.supported_protocols += Counter()  # drop zero counts
        if member.group_instance_id is not None:
            if self.static_members.get(member.group_instance_id) == member_id:
                del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def update_member(
        self,
        member: ClassicMember,
        protocols: list[tuple[str, bytes]],
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join: Pending[JoinResult] | None,
    ) -> None:
        self.supported_protocols.subtract(member.protocol_set())
        self.supported_protocols += Counter()
        member.protocols = protocols
        self.supported_protocols.update(member.protocol_set())
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        member.join_pending = join

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        self.pending_sync.discard(old_id)
        return member

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_members

    def not_yet_rejoined(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if not m.awaiting_join]

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -- protocols -----------------------------------------------------------------------------
    def supports_protocols(self, protocol_type: str, protocols: list[str]) -> bool:
        if not self.members:
            return bool(protocol_type) and bool(protocols)
        n = len(self.members)
        return protocol_type == self.protocol_type and any(
            self.supported_protocols[p] == n for p in protocols
        )

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {p for p, c in self.supported_protocols.items() if c == n}

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        if not candidates:
            raise ValueError(f"no protocol supported by every member of {self.group_id}")
        votes = Counter(m.vote(candidates) for m in self.members.values())
        best = max(votes.values())
        # ties: the first member's (usually the leader's) preference order decides
        first = next(iter(self.members.values()))
        for name in first.protocol_names():
            if votes.get(name) == best:
                return name
        return next(p for p, c in votes.items() if c == best)

    def maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is not None:
            leader = self.members.get(self.leader_id)
            if leader is not None and leader.awaiting_join:
                return True
        for member in self.members.values():
            if member.awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition(S.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition(S.EMPTY, now_ms)
        self.pending_sync = set(self.members) if self.members else set()

    def current_member_metadata(self) -> list[tuple[str, str | None, bytes]]:
        assert self.protocol_name is not None
        return [
            (m.member_id, m.group_instance_id, m.metadata_for(self.protocol_name))
            for m in self.members.values()
        ]

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to; None when unknown (not the consumer protocol, or a
        subscription that does not parse)."""
        if self.protocol_type != "consumer" or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            t = subscribed_topics(m.metadata_for(self.protocol_name))
            if t is None:
                return None
            topics |= t
        return topics

    def record_value(self) -> GroupValue:
        """The group as its __consumer_offsets record (GroupMetadataValue): generation, protocol,
        leader, and each member with its metadata for the chosen protocol and its assignment."""
        protocol = self.protocol_name
        return GroupValue(
            protocol_type=self.protocol_type or "",
            generation=self.generation_id,
            protocol=protocol,
            leader=self.leader_id,
            current_state_timestamp=self.state_timestamp,
            members=[
                MemberRecord(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.metadata_for(protocol) if protocol else b"",
                    m.assignment,
                )
                for m in self.members.values()
            ],
        )

    def is_subscribed_to(self, topic: str) -> bool:
        if self.state == S.EMPTY:
            return False
        topics = self.subscribed_topics()
        return True if topics is None else topic in topics


PREPARING_REBALANCE_FROM = frozenset(
    s for s, targets in TRANSITIONS.items() if S.PREPARING_REBALANCE in targets
)
