"""The rebalance of a classic group, driven by the coordinator's timers (sans-io).

``ClassicRebalance`` moves a ``ClassicGroup`` through its state machine (``classic.TRANSITIONS``)
as Kafka's classic group coordinator does: a member joining, leaving or failing its session
prepares a rebalance; the join phase ends when every member rejoined, when the rebalance timeout
passes, or, for a group that was empty, after group.initial.rebalance.delay.ms (extended while new
members keep arriving, up to the rebalance timeout); then the next generation starts and members
get their JoinGroup answers; the leader's SyncGroup stores the assignment (``classic_sync``), and
members that do not sync within the rebalance timeout are removed.

Timers, keyed in ``CoordinatorState.timers``: ("heartbeat", group, member) for each member's
session (and for members that still have to rejoin with the id they were given), ("join", group)
for the join phase, ("sync", group) for the sync phase.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode as E

from . import records as rec
from .classic import ClassicGroup, ClassicMember, GroupState, JoinResult, SyncResult
from .consumer import ConsumerGroup
from .state import CoordinatorState

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")


def classic_is_unused(group: ClassicGroup) -> bool:
    """A classic group without members, which a consumer group may replace."""
    return group.is_in(S.EMPTY, S.DEAD) and not group.members and not group.pending_members


@dataclass(slots=True)
class ClassicRebalance:
    state: CoordinatorState
    # groups in their initial delay -> what remains of their rebalance timeout after it
    _initial_remaining: dict[str, int] = field(default_factory=dict, init=False)

    # ---- sessions ----------------------------------------------------------------------------
    def schedule_heartbeat(
        self, group: ClassicGroup, member: ClassicMember, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self._schedule_session(group.group_id, member.member_id, now_ms + timeout)

    def schedule_pending_member(
        self, group: ClassicGroup, member_id: str, now_ms: int, timeout_ms: int
    ) -> None:
        """A member given an id (MEMBER_ID_REQUIRED) must rejoin with it within its session."""
        group.pending_members.add(member_id)
        self._schedule_session(group.group_id, member_id, now_ms + timeout_ms)

    def _schedule_session(self, gid: str, mid: str, deadline_ms: int) -> None:
        self.state.timers.schedule(
            ("heartbeat", gid, mid),
            deadline_ms,
            lambda now: self._on_heartbeat_expired(gid, mid, now),
        )

    def cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.state.timers.cancel(("heartbeat", group.group_id, member_id))

    def forget(self, group: ClassicGroup | ConsumerGroup) -> None:
        """Cancel every timer of a classic group that is being replaced or removed."""
        if isinstance(group, ClassicGroup):
            for mid in list(group.members) + list(group.pending_members):
                self.state.timers.cancel(("heartbeat", group.group_id, mid))
            for kind in ("join", "sync"):
                self.state.timers.cancel((kind, group.group_id))
            self._initial_remaining.pop(group.group_id, None)

    def drop(self, group: ClassicGroup, now_ms: int) -> None:
        """The group is deleted or expired: Dead, its timers cancelled, out of the table."""
        group.transition(S.DEAD, now_ms)
        self.forget(group)
        group.offsets.clear()
        self.state.groups.pop(group.group_id, None)

    def _on_heartbeat_expired(self, gid: str, mid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if not isinstance(group, ClassicGroup):
            return
        if mid in group.pending_members:
            group.pending_members.discard(mid)
            if group.is_in(S.PREPARING_REBALANCE):
                self.try_complete_join(group, now_ms)
            self.maybe_remove_unused(group)
            return
        member = group.members.get(mid)
        if member is None:
            return
        if not member.is_new and (member.awaiting_join or member.awaiting_sync):
            return  # members in a rebalance satisfy their heartbeats
        log.info("member=%s of group=%s failed its session timeout, removing it", mid, gid)
        self.remove_member_and_update(group, member, now_ms, "session timeout")

    # ---- the group -----------------------------------------------------------------------------
    def store_group(self, group: ClassicGroup, now_ms: int) -> int:
        value = rec.group_value(group.record_value())
        return self.state.append(group.group_id, [(rec.group_key(group.group_id), value)], now_ms)

    def maybe_remove_unused(self, group: ClassicGroup) -> None:
        """Forget a group that holds nothing (created by a join that never completed)."""
        if (
            group.is_in(S.EMPTY)
            and not group.members
            and not group.pending_members
            and not group.offsets
            and group.generation_id == 0
        ):
            self.state.groups.pop(group.group_id, None)

    def remove_member_and_update(
        self, group: ClassicGroup, member: ClassicMember, now_ms: int, reason: str
    ) -> None:
        member.complete_join(JoinResult(E.unknown_member_id, member_id=member.member_id))
        member.complete_sync(SyncResult(E.unknown_member_id))
        self.cancel_heartbeat(group, member.member_id)
        group.remove(member.member_id)
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance(group, now_ms, f"removing {member.member_id}: {reason}")
        elif group.is_in(S.PREPARING_REBALANCE):
            self.try_complete_join(group, now_ms)

    def current_generation_result(self, group: ClassicGroup, member: ClassicMember) -> JoinResult:
        return JoinResult(
            E.none,
            member_id=member.member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            members=group.current_member_metadata() if group.is_leader(member.member_id) else [],
        )

    def reset_and_propagate_assignment_error(self, group: ClassicGroup, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.complete_sync(SyncResult(error))

    # ---- the join phase ----------------------------------------------------------------------
    def maybe_prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, now_ms, reason)

    def prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        if group.is_in(S.COMPLETING_REBALANCE):
            self.reset_and_propagate_assignment_error(group, E.rebalance_in_progress)
        timers = self.state.timers
        timers.cancel(("sync", group.group_id))
        initial = group.is_in(S.EMPTY)
        group.transition(S.PREPARING_REBALANCE, now_ms)
        log.info(
            "preparing rebalance group=%s generation=%d reason=%r",
            group.group_id,
            group.generation_id,
            reason,
        )
        gid = group.group_id
        if initial:
            delay = self.state.config.initial_rebalance_delay_ms
            self._initial_remaining[gid] = max(group.rebalance_timeout_ms() - delay, 0)
            timers.schedule(
                ("join", gid), now_ms + delay, lambda now: self._on_initial_join(gid, now)
            )
        else:
            self._initial_remaining.pop(gid, None)
            timers.schedule(
                ("join", gid),
                now_ms + group.rebalance_timeout_ms(),
                lambda now: self._on_join_expired(gid, now),
            )
            self.try_complete_join(group, now_ms)

    def try_complete_join(self, group: ClassicGroup, now_ms: int) -> None:
        if group.group_id in self._initial_remaining:
            return  # the initial delay always runs its course
        if group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group, now_ms)

    def _on_initial_join(self, gid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if not isinstance(group, ClassicGroup) or not group.is_in(S.PREPARING_REBALANCE):
            self._initial_remaining.pop(gid, None)
            return
        remaining = self._initial_remaining.get(gid, 0)
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            configured = self.state.config.initial_rebalance_delay_ms
            delay = min(configured, remaining)
            self._initial_remaining[gid] = max(remaining - configured, 0)
            self.state.timers.schedule(
                ("join", gid), now_ms + delay, lambda now: self._on_initial_join(gid, now)
            )
            return
        self._initial_remaining.pop(gid, None)
        self._complete_join(group, now_ms)

    def _on_join_expired(self, gid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if isinstance(group, ClassicGroup) and group.is_in(S.PREPARING_REBALANCE):
            self._complete_join(group, now_ms)

    def _complete_join(self, group: ClassicGroup, now_ms: int) -> None:
        gid = group.group_id
        timers = self.state.timers
        timers.cancel(("join", gid))
        self._initial_remaining.pop(gid, None)
        for member in group.not_yet_rejoined():
            if member.group_instance_id is None:
                self.cancel_heartbeat(group, member.member_id)
                member.complete_sync(SyncResult(E.unknown_member_id))
                group.remove(member.member_id)
        if not group.maybe_elect_new_joined_leader() and group.members:
            # nobody rejoined: wait another rebalance timeout for session expiry to clean up
            timers.schedule(
                ("join", gid),
                now_ms + group.rebalance_timeout_ms(),
                lambda now: self._on_join_expired(gid, now),
            )
            return
        group.init_next_generation(now_ms)
        if group.is_in(S.EMPTY):
            log.info("group=%s generation=%d is now empty", gid, group.generation_id)
            self.store_group(group, now_ms)
            return
        log.info(
            "stabilized group=%s generation=%d protocol=%s members=%d",
            gid,
            group.generation_id,
            group.protocol_name,
            len(group.members),
        )
        for member in group.members.values():
            member.complete_join(self.current_generation_result(group, member))
            self.schedule_heartbeat(group, member, now_ms)
            member.is_new = False
        timers.schedule(
            ("sync", gid),
            now_ms + group.rebalance_timeout_ms(),
            lambda now: self._on_sync_expired(gid, now),
        )

    # ---- the sync phase ----------------------------------------------------------------------
    def _on_sync_expired(self, gid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if not isinstance(group, ClassicGroup) or not group.is_in(S.COMPLETING_REBALANCE, S.STABLE):
            return
        if not group.pending_sync:
            return
        for mid in list(group.pending_sync):
            member = group.members.get(mid)
            if member is not None:
                self.cancel_heartbeat(group, mid)
                member.complete_sync(SyncResult(E.unknown_member_id))
                group.remove(mid)
        group.pending_sync.clear()
        self.prepare_rebalance(group, now_ms, "members did not sync in time")
