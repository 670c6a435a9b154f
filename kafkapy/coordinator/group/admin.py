"""The admin side of the group coordinator (sans-io): ListGroups, DescribeGroups,
ConsumerGroupDescribe and DeleteGroups, and removing a group from the coordinator.

ListGroups lists the groups of owned partitions (filtered by state and type, KIP-518/KIP-848;
streams groups of KIP-1071 with type "streams"),
with COORDINATOR_LOAD_IN_PROGRESS while some partition loads. DescribeGroups describes classic
groups only (a consumer group answers GROUP_ID_NOT_FOUND, as Kafka does); ConsumerGroupDescribe
consumer groups only. DeleteGroups deletes empty groups: tombstones for their offsets and group
records, then ``drop_group``, which offset expiry uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from . import records as rec
from .classic import ClassicGroup, GroupState
from .classic_rebalance import ClassicRebalance
from .consumer import Assignment, ConsumerGroup
from .consumer_sessions import ConsumerSessions
from .state import CoordinatorState, Group, Records
from .streams.model import StreamsGroup

S = GroupState


@dataclass(slots=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupDescription:
    error: int
    group_id: str
    state: str = "Dead"
    protocol_type: str = ""
    protocol_data: str = ""
    members: list[MemberDescription] = field(default_factory=list)
    message: str | None = None


@dataclass(slots=True)
class ConsumerDescription:
    error: int
    group_id: str
    message: str | None = None
    group: ConsumerGroup | None = None
    assignor: str = ""
    targets: dict[str, Assignment] = field(default_factory=dict)


@dataclass(slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str


@dataclass(slots=True)
class GroupAdmin:
    state: CoordinatorState
    rebalance: ClassicRebalance
    sessions: ConsumerSessions

    def list_groups(
        self, states: set[str] | None = None, types: set[str] | None = None
    ) -> tuple[int, list[ListedGroup]]:
        states = {s.lower() for s in states} if states else None
        types = {t.lower() for t in types} if types else None
        out = []
        for group in self.state.groups.values():
            if not self.state.owns(group.group_id):
                continue
            if isinstance(group, ConsumerGroup | StreamsGroup):
                state = group.state
            elif group.is_in(S.DEAD):
                continue
            else:
                state = group.state.value
            if states is not None and state.lower() not in states:
                continue
            if types is not None and group.group_type not in types:
                continue
            out.append(
                ListedGroup(group.group_id, group.protocol_type or "", state, group.group_type)
            )
        err = E.coordinator_load_in_progress if self.state.loading else E.none
        return err, out

    def describe_group(self, group_id: str) -> GroupDescription:
        err = self.state.group_error(group_id, allow_empty=True)
        if err:
            return GroupDescription(err, group_id)
        group = self.state.groups.get(group_id)
        if isinstance(group, ConsumerGroup | StreamsGroup):
            return GroupDescription(
                E.group_id_not_found, group_id, message=f"Group {group_id} is not a classic group."
            )
        if group is None or group.is_in(S.DEAD):
            return GroupDescription(E.group_id_not_found, group_id)
        stable = group.is_in(S.STABLE)
        protocol = group.protocol_name if stable else None
        return GroupDescription(
            E.none,
            group_id,
            group.state.value,
            group.protocol_type or "",
            protocol or "",
            [
                MemberDescription(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.metadata_for(protocol) if protocol else b"",
                    m.assignment if stable else b"",
                )
                for m in group.members.values()
            ],
        )

    def consumer_group_describe(self, group_id: str) -> ConsumerDescription:
        if not group_id:
            return ConsumerDescription(E.invalid_group_id, group_id)
        err = self.state.partition_error(group_id)
        if err:
            return ConsumerDescription(err, group_id)
        group = self.state.groups.get(group_id)
        if group is None:
            return ConsumerDescription(
                E.group_id_not_found, group_id, f"Group {group_id} not found."
            )
        if isinstance(group, StreamsGroup):  # Kafka 4.4's words for a streams group
            return ConsumerDescription(
                E.group_id_not_found, group_id, f"Group {group_id} is not a consumer group."
            )
        if not isinstance(group, ConsumerGroup):
            return ConsumerDescription(
                E.group_id_not_found, group_id, f"Group {group_id} is not a consumer group"
            )
        return ConsumerDescription(
            E.none,
            group_id,
            group=group,
            assignor=group.preferred_assignor(self.state.config.consumer_assignors[0]),
            targets=group.target,
        )

    def delete_groups(self, group_ids: list[str], now_ms: int) -> dict[str, int]:
        # sessions that ended by now end first, whether or not the server's timer task has run
        # yet: a group whose last member's session is over is empty (librdkafka's 0081_admin
        # deletes groups right after their static members' session timeout)
        self.state.timers.expire(now_ms)
        result: dict[str, int] = {}
        for gid in group_ids:
            err = self.state.group_error(gid, allow_empty=True)
            if err:
                result[gid] = err
                continue
            group = self.state.groups.get(gid)
            if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
                result[gid] = E.group_id_not_found
                continue
            if isinstance(group, ConsumerGroup | StreamsGroup):
                empty = group.is_empty()
            else:
                empty = group.is_in(S.EMPTY)
            if not empty:
                result[gid] = E.non_empty_group
                continue
            # pending transactional offsets are tombstoned too (Kafka 4.0's deleteAllOffsets)
            tps = set(group.offsets) | self.state.txn_offsets.unstable(gid)
            records: Records = [(rec.offset_key(gid, t, p), None) for t, p in sorted(tps)]
            if isinstance(group, ConsumerGroup):
                records += crec.group_tombstones(group)
            elif isinstance(group, ClassicGroup):
                records.append((rec.group_key(gid), None))
            # a streams group's membership is not on the log: only its offsets are
            err = self.state.append(gid, records, now_ms)
            if err:
                result[gid] = err
                continue
            self.drop_group(group, now_ms)
            result[gid] = E.none
        return result

    def drop_group(self, group: Group, now_ms: int) -> None:
        """The group's tombstones are written: cancel its timers and forget it."""
        self.state.txn_offsets.drop_groups([group.group_id])
        if isinstance(group, ConsumerGroup):
            for mid in list(group.members):
                self.sessions.cancel(group.group_id, mid)
            group.offsets.clear()
            self.state.groups.pop(group.group_id, None)
            return
        if isinstance(group, StreamsGroup):
            for mid in list(group.members):
                for kind in ("streams-session", "streams-rebalance"):
                    self.state.timers.cancel((kind, group.group_id, mid))
            self.state.timers.cancel(("streams-initial", group.group_id))
            group.offsets.clear()
            self.state.groups.pop(group.group_id, None)
            return
        self.rebalance.drop(group, now_ms)
