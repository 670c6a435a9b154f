"""The deadlines of a consumer group's members (sans-io): sessions, rebalance timeouts, and the
join and sync deadlines of members that use the classic protocol.

Timers, keyed in ``CoordinatorState.timers`` by (kind, group, member):

- "consumer-session": group.consumer.session.timeout.ms after each heartbeat (a classic member:
  its own session timeout); when it passes the member is fenced;
- "consumer-rebalance": a member of the consumer protocol that must revoke partitions has its
  rebalance timeout to do so, else it is fenced;
- "consumer-join", "consumer-sync": a classic member told to rejoin, or that joined, has its
  rebalance timeout to send JoinGroup or SyncGroup, else it is fenced.

What fencing does (remove the member, bump the group epoch, or downgrade the group) is not this
module's job: ``fence`` is given by the coordinator (``consumer_fencing.ConsumerFencing``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from .consumer import ConsumerGroup, ConsumerMember, MemberState
from .state import CoordinatorState

log = logging.getLogger("kafkapy.coordinator.group")

# (group, member, now_ms, why) -> error of the write (NONE when the member is gone)
FenceMember = Callable[[ConsumerGroup, ConsumerMember, int, str], int]

MEMBER_TIMER_KINDS = ("consumer-session", "consumer-rebalance", "consumer-join", "consumer-sync")
DEFAULT_REBALANCE_TIMEOUT_MS = 300_000  # a member that gave none


def _not_wired(group: ConsumerGroup, member: ConsumerMember, now_ms: int, why: str) -> int:
    raise RuntimeError("ConsumerSessions.fence is not set")


@dataclass(slots=True)
class ConsumerSessions:
    state: CoordinatorState
    fence: FenceMember = _not_wired  # set by the coordinator: ConsumerFencing.fence_member

    def schedule_session(
        self, gid: str, mid: str, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        """(Re)start a member's session: the group's consumer.session.timeout.ms (its group config,
        else the broker's group.consumer.session.timeout.ms), or ``timeout_ms``
        (a classic member's own session timeout)."""
        timeout = (
            self.state.config.session_timeout_ms(gid) if timeout_ms is None else timeout_ms
        )
        self.state.timers.schedule(
            ("consumer-session", gid, mid),
            now_ms + timeout,
            lambda now: self._on_session_expired(gid, mid, now),
        )

    def schedule_rebalance_timeout(
        self, group: ConsumerGroup, member: ConsumerMember, now_ms: int
    ) -> None:
        gid, mid, epoch = group.group_id, member.member_id, member.member_epoch
        timeout = (
            member.rebalance_timeout_ms
            if member.rebalance_timeout_ms > 0
            else DEFAULT_REBALANCE_TIMEOUT_MS
        )
        self.state.timers.schedule(
            ("consumer-rebalance", gid, mid),
            now_ms + timeout,
            lambda now: self._on_rebalance_expired(gid, mid, epoch, now),
        )

    def cancel_rebalance_timeout(self, gid: str, mid: str) -> None:
        self.state.timers.cancel(("consumer-rebalance", gid, mid))

    def schedule_member_deadline(
        self,
        kind: str,
        gid: str,
        mid: str,
        now_ms: int,
        timeout_ms: int,
        why: str,
    ) -> None:
        """A classic member must send JoinGroup ("consumer-join") or SyncGroup ("consumer-sync")
        within ``timeout_ms``, else it is fenced for ``why``."""
        timeout = timeout_ms if timeout_ms > 0 else DEFAULT_REBALANCE_TIMEOUT_MS

        def expired(now: int) -> None:
            group = self.state.groups.get(gid)
            if isinstance(group, ConsumerGroup) and mid in group.members:
                log.info("member=%s of consumer group=%s is fenced: %s", mid, gid, why)
                self.fence(group, group.members[mid], now, why)

        self.state.timers.schedule((kind, gid, mid), now_ms + timeout, expired)

    def cancel(self, gid: str, mid: str) -> None:
        """Cancel every deadline of a member that is gone."""
        for kind in MEMBER_TIMER_KINDS:
            self.state.timers.cancel((kind, gid, mid))

    def start_group(self, group: ConsumerGroup, now_ms: int) -> None:
        """A loaded group: every member's session starts now, and so does the rebalance timeout
        of a member of the consumer protocol that was revoking."""
        for member in group.members.values():
            classic = member.classic
            timeout = None if classic is None else classic.session_timeout_ms
            self.schedule_session(group.group_id, member.member_id, now_ms, timeout)
            if classic is None and member.state == MemberState.UNREVOKED_PARTITIONS:
                self.schedule_rebalance_timeout(group, member, now_ms)

    def _on_session_expired(self, gid: str, mid: str, now: int) -> None:
        group = self.state.groups.get(gid)
        if not isinstance(group, ConsumerGroup) or mid not in group.members:
            return
        log.info("member=%s of consumer group=%s failed its session timeout", mid, gid)
        if self.fence(group, group.members[mid], now, "the member session expired"):
            # the write failed: try again in a second
            self.state.timers.schedule(
                ("consumer-session", gid, mid),
                now + 1000,
                lambda t: self._on_session_expired(gid, mid, t),
            )

    def _on_rebalance_expired(self, gid: str, mid: str, epoch: int, now: int) -> None:
        group = self.state.groups.get(gid)
        if not isinstance(group, ConsumerGroup):
            return
        member = group.members.get(mid)
        if (
            member is None
            or member.member_epoch != epoch
            or member.state != MemberState.UNREVOKED_PARTITIONS
        ):
            return
        log.info("member=%s of consumer group=%s did not revoke in time", mid, gid)
        self.fence(group, member, now, "rebalance timeout")
