"""The share group type of the group coordinator (sans-io): Kafka's ShareGroup, ShareGroupMember
and GroupMetadataManager.shareGroupHeartbeat/shareGroupDescribe.

A member joins with epoch 0 and its subscribed topic names, heartbeats with its member epoch, and
leaves with epoch -1. The group epoch is bumped when a member joins or leaves or changes its
subscription, or when the subscribed topics' partition counts change; the target assignment is
then recomputed at once by the ``simple`` assignor and every member takes its new assignment on
its next heartbeat (share groups never revoke: a partition may be shared by several members, so
a member's epoch is simply the assignment epoch). A member that does not heartbeat within
``share.session.timeout.ms`` is removed. States: Empty (no members), Stable, Dead (deleted).

Share groups and the other group types share one namespace of group ids (a heartbeat for the id
of a classic or consumer group answers GROUP_ID_NOT_FOUND "Group x is not a share group.").
Membership is kept in memory (Kafka also writes it to __consumer_offsets; a member whose
coordinator restarted rejoins with UNKNOWN_MEMBER_ID as after a session timeout); what must
survive a restart, the share-partitions' delivery state, is kept by the share coordinator.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkapy.protocol.errors import ErrorCode as E

from .assignor import Assignment, assign
from .config import ShareSettings

if TYPE_CHECKING:
    from ..group.state import CoordinatorState

log = logging.getLogger("kafkapy.coordinator.share")

LEAVE_EPOCH = -1
PROTOCOL_TYPE = "share"
GROUP_TYPE = "share"
ASSIGNOR = "simple"


@dataclass(slots=True)
class ShareMember:
    member_id: str
    member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assigned: Assignment = field(default_factory=dict)


@dataclass(slots=True)
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    subscription_metadata: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return "Empty" if not self.members else "Stable"

    def subscribed_topics(self) -> set[str]:
        out: set[str] = set()
        for m in self.members.values():
            out.update(m.subscribed_topic_names)
        return out


@dataclass(slots=True)
class ShareHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    client_id: str = ""
    client_host: str = ""


@dataclass(slots=True)
class ShareHeartbeatResult:
    error: int
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


def _validate(r: ShareHeartbeat) -> str | None:
    """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid: INVALID_REQUEST's message."""
    if not r.group_id:
        return "GroupId can't be empty."
    if r.rack_id is not None and not r.rack_id:
        return "RackId can't be empty."
    if r.member_epoch == 0 and not r.subscribed_topic_names:
        return "SubscribedTopicNames must be set in first request."
    if r.member_epoch < LEAVE_EPOCH:
        return "MemberEpoch is invalid."
    return None


class ShareGroups:
    """The share groups of the __consumer_offsets partitions this coordinator owns.

    ``state`` is the group coordinator's CoordinatorState (ownership, timers, topics, and the
    other group types' table for the shared namespace); ``settings(group_id)`` the group's
    effective share settings. The ``on_delete(group_id)`` and ``on_member_removed(group_id,
    member_id)`` hooks tell the share-partition manager to forget or release state."""

    def __init__(self, state: CoordinatorState, settings: Callable[[str], ShareSettings]) -> None:
        self.state = state
        self.settings = settings
        self.groups: dict[str, ShareGroup] = {}
        self.on_delete: list[Callable[[str], None]] = []
        self.on_member_removed: list[Callable[[str, str], None]] = []

    # -- ShareGroupHeartbeat -------------------------------------------------------------------
    def heartbeat(self, r: ShareHeartbeat, now_ms: int) -> ShareHeartbeatResult:
        if not r.member_id:  # refused before the coordinator, without a message, as Kafka does
            return ShareHeartbeatResult(E.invalid_request)
        msg = _validate(r)
        if msg is not None:
            return ShareHeartbeatResult(E.invalid_request, msg)
        st = self.state
        err = st.partition_error(r.group_id)
        if err:
            return ShareHeartbeatResult(err)
        if r.group_id in st.groups:
            return ShareHeartbeatResult(
                E.group_id_not_found, f"Group {r.group_id} is not a share group."
            )
        cfg = self.settings(r.group_id)
        group = self.groups.get(r.group_id)
        if r.member_epoch == LEAVE_EPOCH:
            return self._leave(group, r, now_ms)
        if group is None:
            if r.member_epoch != 0:
                return ShareHeartbeatResult(
                    E.group_id_not_found, f"Share group {r.group_id} not found."
                )
            group = ShareGroup(r.group_id)
        member = group.members.get(r.member_id)
        if member is None and len(group.members) >= cfg.max_size:
            return ShareHeartbeatResult(
                E.group_max_size_reached,
                f"The share group has reached its maximum capacity of {cfg.max_size} members.",
            )
        if r.member_epoch == 0:
            if member is None:
                member = ShareMember(r.member_id)
                log.info("[GroupId %s] Member %s joins the share group.", r.group_id, r.member_id)
        else:
            if member is None:
                return ShareHeartbeatResult(
                    E.unknown_member_id,
                    f"Member {r.member_id} is not a member of group {r.group_id}.",
                )
            if r.member_epoch != member.member_epoch:
                which = "greater" if r.member_epoch > member.member_epoch else "smaller"
                return ShareHeartbeatResult(
                    E.fenced_member_epoch,
                    f"The share group member has a {which} member epoch ({r.member_epoch}) than "
                    f"the one known by the group coordinator ({member.member_epoch}). The member "
                    "must abandon all its partitions and rejoin.",
                )
        self.groups[group.group_id] = group
        bump = member.member_id not in group.members
        if r.rack_id is not None:
            member.rack_id = r.rack_id
        if r.subscribed_topic_names is not None:
            names = tuple(r.subscribed_topic_names)
            if sorted(set(names)) != sorted(set(member.subscribed_topic_names)):
                bump = True
            member.subscribed_topic_names = names
        member.client_id = r.client_id
        member.client_host = r.client_host
        group.members[member.member_id] = member
        self._refresh(group, bump)
        previous = {t: set(ps) for t, ps in member.assigned.items()}
        member.member_epoch = group.assignment_epoch
        member.assigned = {t: set(ps) for t, ps in group.target.get(member.member_id, {}).items()}
        self._schedule_session(group.group_id, member.member_id, cfg, now_ms)
        changed = r.member_epoch == 0 or previous != member.assigned
        return ShareHeartbeatResult(
            E.none,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            assignment=member.assigned if changed else None,
        )

    def _leave(
        self, group: ShareGroup | None, r: ShareHeartbeat, now_ms: int
    ) -> ShareHeartbeatResult:
        if group is None:
            return ShareHeartbeatResult(
                E.group_id_not_found, f"Share group {r.group_id} not found."
            )
        if r.member_id not in group.members:
            return ShareHeartbeatResult(
                E.unknown_member_id,
                f"Member {r.member_id} is not a member of group {r.group_id}.",
            )
        self.remove_member(group, r.member_id)
        log.info("[GroupId %s] Member %s left the share group.", r.group_id, r.member_id)
        return ShareHeartbeatResult(E.none, member_id=r.member_id, member_epoch=LEAVE_EPOCH)

    def remove_member(self, group: ShareGroup, member_id: str) -> None:
        group.members.pop(member_id, None)
        self.state.timers.cancel(("share-session", group.group_id, member_id))
        self._refresh(group, True)
        for hook in self.on_member_removed:
            hook(group.group_id, member_id)

    def _refresh(self, group: ShareGroup, bump: bool) -> None:
        """Recompute the subscription metadata; bump the group epoch and recompute the target
        assignment when it or the membership changed."""
        topics = self.state.topics
        metadata = {}
        for name in sorted(group.subscribed_topics()):
            found = topics.lookup(name)
            if found is not None:
                metadata[name] = found
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if not bump:
            return
        group.group_epoch += 1
        subs = {
            mid: frozenset(m.subscribed_topic_names) for mid, m in group.members.items()
        }
        group.target = assign(subs, metadata)
        group.assignment_epoch = group.group_epoch

    def _schedule_session(
        self, group_id: str, member_id: str, cfg: ShareSettings, now_ms: int
    ) -> None:
        def expire(_now: int) -> None:
            group = self.groups.get(group_id)
            if group is not None and member_id in group.members:
                log.info(
                    "[GroupId %s] Member %s fenced from the share group: session timeout.",
                    group_id, member_id,
                )
                self.remove_member(group, member_id)

        self.state.timers.schedule(
            ("share-session", group_id, member_id), now_ms + cfg.session_timeout_ms, expire
        )

    # -- describe, list, delete ----------------------------------------------------------------
    def describe(self, group_id: str) -> tuple[int, str | None, ShareGroup | None]:
        """(error, message, group) of ShareGroupDescribe."""
        if not group_id:
            return E.invalid_group_id, None, None
        err = self.state.partition_error(group_id)
        if err:
            return err, None, None
        group = self.groups.get(group_id)
        if group is None:
            if group_id in self.state.groups:
                return E.group_id_not_found, f"Group {group_id} is not a share group.", None
            return E.group_id_not_found, f"Group {group_id} not found.", None
        self._refresh(group, False)
        return E.none, None, group

    def admin_group(
        self, group_id: str, *, create: bool = False
    ) -> tuple[int, str | None, ShareGroup | None]:
        """The share group the offset admin APIs act on: (error, message, group or None when
        it does not exist); ``create`` makes an empty one (AlterShareGroupOffsets)."""
        if not group_id:
            return E.invalid_group_id, None, None
        err = self.state.partition_error(group_id)
        if err:
            return err, None, None
        if group_id in self.state.groups:
            return E.group_id_not_found, f"Group {group_id} is not a share group.", None
        group = self.groups.get(group_id)
        if group is None and create:
            group = self.groups[group_id] = ShareGroup(group_id)
        return E.none, None, group

    def listed(self) -> Iterable[ShareGroup]:
        return [g for g in self.groups.values() if self.state.owns(g.group_id)]

    def delete(self, group_id: str) -> int | None:
        """DeleteGroups for a share group: its error (NON_EMPTY_GROUP) or NONE; None when the id
        is not a share group's."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        err = self.state.partition_error(group_id)
        if err:
            return err
        if group.members:
            return E.non_empty_group
        del self.groups[group_id]
        for hook in self.on_delete:
            hook(group_id)
        return E.none

    def forget_partition(self, partition: int) -> None:
        """The coordinator lost a __consumer_offsets partition: forget its share groups."""
        for gid in [g for g in self.groups if self.state.partition_for(g) == partition]:
            group = self.groups.pop(gid)
            for mid in list(group.members):
                self.state.timers.cancel(("share-session", gid, mid))
