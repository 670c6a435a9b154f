"""Heartbeat and LeaveGroup of classic groups (sans-io): a member keeps its session alive, learns
of a rebalance (REBALANCE_IN_PROGRESS), or leaves.

Heartbeat restarts the member's session timer (``classic_rebalance``) after the member and
generation checks; while the group's partition loads it is answered blindly with NONE. LeaveGroup
(v3+: a batch of members, each by member id or static instance id) removes each member and
rebalances; a member still pending (given an id it has not joined with) is just forgotten. Both
are served by the consumer group for a consumer group (``classic_members``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from .classic import GroupState
from .classic_members import ClassicMembersOfConsumerGroups
from .classic_rebalance import ClassicRebalance
from .consumer import ConsumerGroup
from .member_checks import validate_classic_member
from .state import CoordinatorState
from .streams.model import StreamsGroup

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")


@dataclass(slots=True)
class ClassicHeartbeat:
    state: CoordinatorState
    rebalance: ClassicRebalance
    classic_members: ClassicMembersOfConsumerGroups

    def heartbeat(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        now_ms: int,
    ) -> int:
        err = self.state.group_error(group_id)
        if err == E.coordinator_load_in_progress:
            return E.none  # the group is still loading: answer blindly
        if err:
            return err
        group = self.state.groups.get(group_id)
        if group is None or isinstance(group, StreamsGroup):  # no classic group of that id
            return E.unknown_member_id
        if isinstance(group, ConsumerGroup):
            return self.classic_members.heartbeat(
                group, generation_id, member_id, group_instance_id, now_ms
            )
        if group.is_in(S.DEAD):
            return E.coordinator_not_available
        err = validate_classic_member(group, member_id, group_instance_id)
        if err:
            return err
        if generation_id != group.generation_id:
            return E.illegal_generation
        if group.is_in(S.EMPTY):
            return E.unknown_member_id
        self.rebalance.schedule_heartbeat(group, group.members[member_id], now_ms)
        if group.is_in(S.PREPARING_REBALANCE):
            return E.rebalance_in_progress
        return E.none

    def leave_group(
        self, group_id: str, members: list[tuple[str, str | None]], now_ms: int
    ) -> tuple[int, list[int]]:
        """Return (group-level error, one error per leaving member)."""
        err = self.state.group_error(group_id)
        if err:
            return err, []
        group = self.state.groups.get(group_id)
        if group is None or isinstance(group, StreamsGroup):  # no classic group of that id
            return E.none, [E.unknown_member_id] * len(members)
        if isinstance(group, ConsumerGroup):
            return self.classic_members.leave(group, members, now_ms)
        if group.is_in(S.DEAD):
            return E.coordinator_not_available, []
        errors = []
        for member_id, instance_id in members:
            if instance_id is None:
                if member_id in group.pending_members:
                    group.pending_members.discard(member_id)
                    self.rebalance.cancel_heartbeat(group, member_id)
                    if group.is_in(S.PREPARING_REBALANCE):
                        self.rebalance.try_complete_join(group, now_ms)
                    errors.append(E.none)
                    continue
                target = member_id
            else:
                target = group.static_members.get(instance_id)
                if target is None:
                    errors.append(E.unknown_member_id)
                    continue
                if member_id and member_id != target:
                    errors.append(E.fenced_instance_id)
                    continue
            member = group.members.get(target)
            if member is None:
                errors.append(E.unknown_member_id)
                continue
            log.info("member=%s leaves group=%s", target, group_id)
            self.rebalance.remove_member_and_update(
                group, member, now_ms, "the member left the group"
            )
            errors.append(E.none)
        return E.none, errors
