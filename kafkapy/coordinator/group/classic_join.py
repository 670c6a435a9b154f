"""JoinGroup (sans-io): a member joins a classic group, or rejoins it for the next generation.

As Kafka's classic group coordinator does it: KIP-394 member ids (a dynamic member without an id
gets MEMBER_ID_REQUIRED and a new id to rejoin with, v4+), KIP-345 static membership (a static
member rejoining without its id replaces its previous incarnation, which is fenced, without a
rebalance when its protocols did not change), group.max.size (GROUP_MAX_SIZE_REACHED), protocol
type and protocol agreement (INCONSISTENT_GROUP_PROTOCOL). The answer is a ``Pending`` completed
when the join phase ends (``classic_rebalance``).

A JoinGroup aimed at a non-empty consumer group is served by it (``classic_members``); an empty
consumer group becomes a classic group (its offsets carry over).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from .classic import (
    ClassicGroup,
    ClassicMember,
    GroupState,
    JoinRequest,
    JoinResult,
    SyncResult,
)
from .classic_members import ClassicMembersOfConsumerGroups
from .classic_rebalance import ClassicRebalance
from .consumer import ConsumerGroup
from .member_checks import validate_classic_member
from .pending import Pending
from .state import CoordinatorState
from .streams.model import StreamsGroup

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")


@dataclass(slots=True)
class ClassicJoin:
    state: CoordinatorState
    rebalance: ClassicRebalance
    classic_members: ClassicMembersOfConsumerGroups

    def join_group(self, r: JoinRequest, now_ms: int) -> Pending[JoinResult]:
        answer: Pending[JoinResult] = Pending()
        state, config = self.state, self.state.config

        def fail(error: int, member_id: str = r.member_id) -> Pending[JoinResult]:
            return Pending.completed(JoinResult(error, member_id=member_id))

        err = state.group_error(r.group_id)
        if err:
            return fail(err)
        if not (
            config.min_session_timeout_ms <= r.session_timeout_ms <= config.max_session_timeout_ms
        ):
            return fail(E.invalid_session_timeout)
        unknown = r.member_id == ""
        group = state.groups.get(r.group_id)
        if isinstance(group, ConsumerGroup):
            if not group.is_empty():  # served by the consumer group (classic_members)
                return Pending.completed(self.classic_members.join(group, r, now_ms))
            # an empty consumer group becomes a classic group; its offsets carry over
            err = state.append(r.group_id, crec.group_tombstones(group), now_ms)
            if err:
                return fail(err)
            classic = ClassicGroup(r.group_id, now_ms)
            classic.offsets = group.offsets
            state.groups[r.group_id] = group = classic
            log.info("empty consumer group=%s becomes a classic group", r.group_id)
        if isinstance(group, StreamsGroup):
            # Kafka 4.4: a streams group with members is of another protocol; an empty one
            # (offsets only) becomes a classic group
            if group.members:
                return fail(E.inconsistent_group_protocol)
            classic = ClassicGroup(r.group_id, now_ms)
            classic.offsets = group.offsets
            state.groups[r.group_id] = group = classic
        if group is None:
            if not unknown:
                return fail(E.unknown_member_id)
            group = state.groups[r.group_id] = ClassicGroup(r.group_id, now_ms)
        if not self._accept_joining_member(group, r.member_id):
            member = group.members.get(r.member_id)
            if member is not None:
                self.rebalance.remove_member_and_update(group, member, now_ms, "group is full")
            return fail(E.group_max_size_reached, "")
        if unknown:
            self._join_new_member(group, r, answer, now_ms)
        else:
            self._join_existing_member(group, r, answer, now_ms)
        if group.is_in(S.PREPARING_REBALANCE):
            self.rebalance.try_complete_join(group, now_ms)
        if (
            answer.done
            and answer.result is not None
            and answer.result.error not in (E.none, E.member_id_required)
        ):
            self.rebalance.maybe_remove_unused(group)
        return answer

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        if group.is_in(S.EMPTY, S.DEAD):
            return True
        max_size = self.state.config.max_size
        member = group.members.get(member_id)
        if group.is_in(S.PREPARING_REBALANCE):
            return (member is not None and member.awaiting_join) or (
                group.num_awaiting_join() < max_size
            )
        return member is not None or len(group.members) < max_size

    def _join_new_member(
        self, group: ClassicGroup, r: JoinRequest, answer: Pending[JoinResult], now_ms: int
    ) -> None:
        if group.is_in(S.DEAD):
            answer.complete(JoinResult(E.coordinator_not_available, member_id=""))
            return
        if not group.supports_protocols(r.protocol_type, [n for n, _ in r.protocols]):
            answer.complete(JoinResult(E.inconsistent_group_protocol, member_id=""))
            return
        new_id = f"{r.group_instance_id or r.client_id}-{uuid.uuid4()}"
        if r.group_instance_id is not None:
            old_id = group.static_members.get(r.group_instance_id)
            if old_id is None:
                self._add_member_and_rebalance(group, new_id, r, answer, now_ms)
            else:
                self._replace_static_member(group, old_id, new_id, r, answer, now_ms)
        elif r.require_known_member_id:
            self.rebalance.schedule_pending_member(group, new_id, now_ms, r.session_timeout_ms)
            answer.complete(JoinResult(E.member_id_required, member_id=new_id))
        else:
            self._add_member_and_rebalance(group, new_id, r, answer, now_ms)

    def _join_existing_member(
        self, group: ClassicGroup, r: JoinRequest, answer: Pending[JoinResult], now_ms: int
    ) -> None:
        if group.is_in(S.DEAD):
            answer.complete(JoinResult(E.coordinator_not_available, member_id=r.member_id))
            return
        if not group.supports_protocols(r.protocol_type, [n for n, _ in r.protocols]):
            answer.complete(JoinResult(E.inconsistent_group_protocol, member_id=r.member_id))
            return
        if r.member_id in group.pending_members:
            group.pending_members.discard(r.member_id)
            self.rebalance.cancel_heartbeat(group, r.member_id)
            if r.group_instance_id is not None:  # a static member is never pending
                answer.complete(JoinResult(E.unknown_member_id, member_id=r.member_id))
                return
            self._add_member_and_rebalance(group, r.member_id, r, answer, now_ms)
            return
        err = validate_classic_member(group, r.member_id, r.group_instance_id)
        if err:
            answer.complete(JoinResult(err, member_id=r.member_id))
            return
        member = group.members[r.member_id]
        if group.is_in(S.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, r, answer, now_ms)
        elif group.is_in(S.COMPLETING_REBALANCE):
            if member.matches(r.protocols):
                # it lost the JoinGroup answer: give it the current generation again
                answer.complete(self.rebalance.current_generation_result(group, member))
            else:
                self._update_member_and_rebalance(group, member, r, answer, now_ms)
        elif group.is_in(S.STABLE):
            if group.is_leader(member.member_id) or not member.matches(r.protocols):
                self._update_member_and_rebalance(group, member, r, answer, now_ms)
            else:
                answer.complete(self.rebalance.current_generation_result(group, member))
        else:  # Empty
            answer.complete(JoinResult(E.unknown_member_id, member_id=r.member_id))

    def _add_member_and_rebalance(
        self,
        group: ClassicGroup,
        member_id: str,
        r: JoinRequest,
        answer: Pending[JoinResult],
        now_ms: int,
    ) -> None:
        member = ClassicMember(
            member_id,
            r.group_instance_id,
            r.client_id,
            r.client_host,
            r.rebalance_timeout_ms,
            r.session_timeout_ms,
            r.protocol_type,
            list(r.protocols),
            is_new=True,
        )
        if group.is_in(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, answer)
        # New members cannot heartbeat until their join completes; if they vanish meanwhile,
        # this longer deadline removes them.
        self.rebalance.schedule_heartbeat(
            group, member, now_ms, self.state.config.new_member_join_timeout_ms
        )
        self.rebalance.maybe_prepare_rebalance(group, now_ms, f"adding member {member_id}")

    def _update_member_and_rebalance(
        self,
        group: ClassicGroup,
        member: ClassicMember,
        r: JoinRequest,
        answer: Pending[JoinResult],
        now_ms: int,
    ) -> None:
        group.update_member(
            member, list(r.protocols), r.rebalance_timeout_ms, r.session_timeout_ms, answer
        )
        self.rebalance.maybe_prepare_rebalance(group, now_ms, f"member {member.member_id} rejoins")

    def _replace_static_member(
        self,
        group: ClassicGroup,
        old_id: str,
        new_id: str,
        r: JoinRequest,
        answer: Pending[JoinResult],
        now_ms: int,
    ) -> None:
        assert r.group_instance_id is not None
        rebalance = self.rebalance
        old = group.members[old_id]
        # the previous incarnation is fenced: its outstanding answers say so
        old.complete_join(JoinResult(E.fenced_instance_id, member_id=old_id))
        old.complete_sync(SyncResult(E.fenced_instance_id))
        rebalance.cancel_heartbeat(group, old_id)
        current_leader = group.leader_id
        saved = (old.protocols, old.rebalance_timeout_ms, old.session_timeout_ms)
        member = group.replace_static_member(r.group_instance_id, old_id, new_id)
        group.update_member(
            member, list(r.protocols), r.rebalance_timeout_ms, r.session_timeout_ms, answer
        )
        rebalance.schedule_heartbeat(group, member, now_ms)
        if group.is_in(S.STABLE):
            if group.select_protocol() == group.protocol_name:
                err = rebalance.store_group(group, now_ms)
                if err:
                    group.replace_static_member(r.group_instance_id, new_id, old_id)
                    group.update_member(member, *saved, None)
                    rebalance.cancel_heartbeat(group, new_id)
                    rebalance.schedule_heartbeat(group, member, now_ms)
                    answer.complete(JoinResult(err, member_id=""))
                    return
                # The old leader id is returned on purpose: a rejoining static leader must not
                # compute an assignment a Stable group would never hand out.
                member.complete_join(
                    JoinResult(
                        E.none,
                        member_id=new_id,
                        generation_id=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol_name=group.protocol_name,
                        leader=current_leader or "",
                    )
                )
            else:
                rebalance.maybe_prepare_rebalance(group, now_ms, "static member changed protocols")
        elif group.is_in(S.COMPLETING_REBALANCE):
            # the leader may have been given the old member id: assign again
            rebalance.prepare_rebalance(group, now_ms, "static member replaced during sync")
        # PreparingRebalance: the member now awaits the join like everyone else
