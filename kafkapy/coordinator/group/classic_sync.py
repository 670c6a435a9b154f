"""SyncGroup (sans-io): members of a classic group collect their assignments.

In CompletingRebalance every member's answer waits (a ``Pending``) until the leader's SyncGroup
brings the assignment, which is stored on __consumer_offsets before the group becomes Stable and
the answers go out; members the leader left out get an empty assignment. In Stable the member
gets its assignment at once. If storing the assignment fails, or it is stored but not replicated
(``assignment_not_replicated``), members get the error and the group rebalances again.

A SyncGroup aimed at a consumer group is served by it (``classic_members``). While the group's
partition loads the answer is REBALANCE_IN_PROGRESS: the rebalance state is gone with the load.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from .classic import ClassicGroup, GroupState, SyncResult
from .classic_members import ClassicMembersOfConsumerGroups
from .classic_rebalance import ClassicRebalance
from .consumer import ConsumerGroup
from .member_checks import validate_classic_member
from .pending import Pending
from .state import CoordinatorState
from .streams.model import StreamsGroup

S = GroupState


@dataclass(slots=True)
class ClassicSync:
    state: CoordinatorState
    rebalance: ClassicRebalance
    classic_members: ClassicMembersOfConsumerGroups

    def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
        now_ms: int,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
    ) -> Pending[SyncResult]:
        def fail(error: int) -> Pending[SyncResult]:
            return Pending.completed(SyncResult(error))

        err = self.state.group_error(group_id)
        if err == E.coordinator_load_in_progress:
            # the rebalance state is gone with the load: start over at JoinGroup
            return fail(E.rebalance_in_progress)
        if err:
            return fail(err)
        group = self.state.groups.get(group_id)
        if (
            group is None
            or isinstance(group, StreamsGroup)
            or (isinstance(group, ConsumerGroup) and group.is_empty())
        ):
            return fail(E.unknown_member_id)
        if isinstance(group, ConsumerGroup):
            return Pending.completed(
                self.classic_members.sync(
                    group,
                    generation_id,
                    member_id,
                    group_instance_id,
                    protocol_type,
                    protocol_name,
                    now_ms,
                )
            )
        if group.is_in(S.DEAD):
            return fail(E.coordinator_not_available)
        err = validate_classic_member(group, member_id, group_instance_id)
        if err:
            return fail(err)
        if generation_id != group.generation_id:
            return fail(E.illegal_generation)
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return fail(E.inconsistent_group_protocol)
        if group.is_in(S.EMPTY):
            return fail(E.unknown_member_id)
        if group.is_in(S.PREPARING_REBALANCE):
            return fail(E.rebalance_in_progress)
        member = group.members[member_id]
        group.pending_sync.discard(member_id)
        self.rebalance.schedule_heartbeat(group, member, now_ms)
        if group.is_in(S.STABLE):
            answer = Pending.completed(
                SyncResult(E.none, group.protocol_type, group.protocol_name, member.assignment)
            )
        else:  # CompletingRebalance
            answer = Pending()
            member.sync_pending = answer
            if group.is_leader(member_id):
                self._apply_leader_assignment(group, assignments, now_ms)
        if not group.pending_sync:
            self.state.timers.cancel(("sync", group_id))
        return answer

    def assignment_not_replicated(
        self, group_id: str, generation_id: int, member_id: str, error: int, now_ms: int
    ) -> None:
        """The leader's SyncGroup stored the assignment, but the write did not reach the ISR
        (``error`` already mapped): as Kafka does when storing the assignment fails, clear the
        assignment and rebalance again."""
        group = self.state.groups.get(group_id)
        if (
            not isinstance(group, ClassicGroup)
            or group.generation_id != generation_id
            or not group.is_leader(member_id)
            or not group.is_in(S.STABLE)
        ):
            return
        self.rebalance.reset_and_propagate_assignment_error(group, error)
        self.rebalance.maybe_prepare_rebalance(
            group, now_ms, f"error {error} when replicating the group assignment"
        )

    def _apply_leader_assignment(
        self, group: ClassicGroup, assignments: dict[str, bytes], now_ms: int
    ) -> None:
        previous = {mid: m.assignment for mid, m in group.members.items()}
        for mid, member in group.members.items():
            # members the leader left out get an empty assignment; unknown ids are ignored
            member.assignment = assignments.get(mid, b"")
        err = self.rebalance.store_group(group, now_ms)
        if err:
            for mid, member in group.members.items():
                member.assignment = previous[mid]
            self.rebalance.reset_and_propagate_assignment_error(group, err)
            self.rebalance.maybe_prepare_rebalance(group, now_ms, "storing the assignment failed")
            return
        group.transition(S.STABLE, now_ms)
        for member in group.members.values():
            member.complete_sync(
                SyncResult(E.none, group.protocol_type, group.protocol_name, member.assignment)
            )
