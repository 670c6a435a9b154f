"""A consumer group member's change, planned then applied (sans-io): the core of KIP-848 that
ConsumerGroupHeartbeat (``modern``) and the JoinGroup of classic members (``classic_members``)
share, following Kafka 4.0's GroupMetadataManager:

1. create or update the member (a new member, a subscription change, a change of the subscribed
   topics' partitions, or a new group bumps the *group epoch*);
2. when the group epoch is ahead of the *assignment epoch*, run the group's assignor (the one most
   members ask for, else the first of group.consumer.assignors) for a new target assignment;
3. reconcile this member towards its target (``consumer.reconcile``: revoke before assign).

``plan`` computes the records these steps need without changing anything; the caller appends
them to __consumer_offsets, and only then ``apply`` changes the group.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from . import consumer_records as crec
from .assignors import ASSIGNORS, GroupSpec, MemberSpec
from .consumer import (
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    assignment_equal,
    member_topics,
    reconcile,
)
from .consumer_sessions import ConsumerSessions
from .state import CoordinatorState, Records

log = logging.getLogger("kafkapy.coordinator.group")


def new_member_id() -> str:
    """A member id as Kafka's Uuid.randomUuid().toString() prints one: URL-safe base64, no pad."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def group_preferred(members: Iterable[ConsumerMember], default: str) -> str:
    counts: dict[str, int] = {}
    for m in members:
        if m.server_assignor:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    if not counts:
        return default
    return max(sorted(counts), key=lambda name: counts[name])


@dataclass(slots=True)
class MemberUpdate:
    """A member's change as ``MemberUpdates.plan`` computes it: the records to write, then what
    ``MemberUpdates.apply`` sets once they are written."""

    group: ConsumerGroup
    records: Records
    reconciled: ConsumerMember
    replaced: ConsumerMember | None
    restarted: ConsumerMember | None
    joining: bool
    group_epoch: int
    sub_meta: dict[str, tuple[uuid.UUID, int]]
    new_target: dict[str, Assignment] | None
    targets: dict[str, Assignment]
    target_epoch: int
    current_changed: bool


@dataclass(slots=True)
class MemberUpdates:
    state: CoordinatorState
    sessions: ConsumerSessions

    def plan(
        self,
        group: ConsumerGroup,
        records: Records,
        member: ConsumerMember,
        previous: ConsumerMember,
        updated: ConsumerMember,
        owned: Assignment | None,
        replaced: ConsumerMember | None = None,
        restarted: ConsumerMember | None = None,
        joining: bool = False,
    ) -> MemberUpdate:
        """Steps 1-3 for ``updated`` (the member as the request leaves it; ``member`` before the
        request, ``previous`` its current assignment before the request), appending the records
        they need to ``records``. Nothing changes until ``apply``."""
        gid = group.group_id
        state = self.state
        # -- 1. group epoch --------------------------------------------------------------------
        bump = group.group_epoch == 0 or joining or not updated.same_subscription(member)
        members_after = {
            mid: m
            for mid, m in group.members.items()
            if not (replaced is not None and mid == replaced.member_id)
        }
        members_after[updated.member_id] = updated
        sub_meta = state.subscription_metadata(members_after.values())
        if sub_meta != group.subscription_metadata:
            bump = True
            records.append(crec.partition_metadata_record(gid, sub_meta))
        if replaced is not None:
            records += crec.member_tombstones(gid, replaced.member_id)
        if joining or replaced is not None or not updated.same_metadata(member):
            records.append(crec.member_record(gid, updated))
        group_epoch = group.group_epoch + 1 if bump else group.group_epoch
        if bump:
            records.append(crec.epoch_record(gid, group_epoch))

        # -- 2. target assignment --------------------------------------------------------------
        targets = dict(group.target)
        if replaced is not None:
            targets[updated.member_id] = targets.pop(replaced.member_id, {})
        if restarted is not None:
            targets[updated.member_id] = {}
        new_target: dict[str, Assignment] | None = None
        target_epoch = group.assignment_epoch
        if group_epoch > group.assignment_epoch:
            assignor = group_preferred(members_after.values(), state.config.consumer_assignors[0])
            spec = GroupSpec(
                members={
                    mid: MemberSpec(
                        frozenset(
                            sub_meta[n][0]
                            for n in member_topics(m, state.regex_topics)
                            if n in sub_meta
                        ),
                        m.instance_id,
                        targets.get(mid, {}),
                    )
                    for mid, m in members_after.items()
                },
                partitions=dict(sub_meta.values()),
            )
            new_target = ASSIGNORS[assignor].assign(spec)
            for mid, a in new_target.items():
                if mid not in targets or not assignment_equal(targets[mid], a):
                    records.append(crec.target_record(gid, mid, a))
            records.append(crec.target_epoch_record(gid, group_epoch))
            target_epoch = group_epoch
            targets = new_target
        elif replaced is not None or restarted is not None:
            records.append(crec.target_record(gid, updated.member_id, targets[updated.member_id]))

        # -- 3. reconcile ----------------------------------------------------------------------
        ignore: set[tuple[uuid.UUID, int]] = set()
        if restarted is not None:
            for a in (restarted.assigned, restarted.pending_revocation):
                ignore |= {(t, p) for t, ps in a.items() for p in ps}

        def partition_epoch(t: uuid.UUID, p: int) -> int:
            return -1 if (t, p) in ignore else group.partition_epoch(t, p)

        reconciled = reconcile(
            updated, target_epoch, targets.get(updated.member_id, {}), owned, partition_epoch
        )
        current_changed = not reconciled.same_current(previous) or joining or replaced is not None
        if current_changed:
            records.append(crec.current_record(gid, reconciled))
        return MemberUpdate(
            group,
            records,
            reconciled,
            replaced,
            restarted,
            joining,
            group_epoch,
            sub_meta,
            new_target,
            targets,
            target_epoch,
            current_changed,
        )

    def apply(self, u: MemberUpdate, now_ms: int) -> None:
        """Apply a planned change once its records are on the log."""
        group, reconciled = u.group, u.reconciled
        gid = group.group_id
        if u.replaced is not None:
            group.remove_member(u.replaced.member_id)
            self.sessions.cancel(gid, u.replaced.member_id)
            log.info(
                "static member=%s instance=%s replaces member=%s in group=%s",
                reconciled.member_id,
                reconciled.instance_id,
                u.replaced.member_id,
                gid,
            )
        if u.restarted is not None:
            group.remove_member(u.restarted.member_id)
        if u.joining:
            log.info(
                "member=%s joins consumer group=%s using the %s protocol",
                reconciled.member_id,
                gid,
                "classic" if reconciled.classic is not None else "consumer",
            )
        group.put_member(reconciled)
        group.group_epoch = u.group_epoch
        group.subscription_metadata = u.sub_meta
        if u.new_target is not None:
            group.target = u.new_target
            group.assignment_epoch = u.target_epoch
            log.info(
                "new target assignment group=%s epoch=%d members=%d",
                gid,
                u.target_epoch,
                len(u.new_target),
            )
        elif u.replaced is not None or u.restarted is not None:
            group.target = u.targets
        # the rebalance timeout is for members of the consumer protocol; classic members have
        # their join and sync timeouts instead
        if u.current_changed and reconciled.classic is None:
            if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
                self.sessions.schedule_rebalance_timeout(group, reconciled, now_ms)
            else:
                self.sessions.cancel_rebalance_timeout(gid, reconciled.member_id)
