"""The consumer protocol (KIP-848) operations of the group coordinator, as a mixin of
``GroupCoordinator`` (it shares its groups, timers, log and partition ownership).

ConsumerGroupHeartbeat does everything in one call, following Kafka 4.0's GroupMetadataManager:

1. create or update the member (a new member, a subscription change, a change of the subscribed
   topics' partitions, or a new group bumps the *group epoch*);
2. when the group epoch is ahead of the *assignment epoch*, run the group's assignor (the one most
   members ask for, else the first of group.consumer.assignors) for a new target assignment;
3. reconcile this member towards its target (``consumer.reconcile``: revoke before assign), and
   answer with its epoch and, when it changed or the request was a full one, its assignment.

Steps 1-3 (``_plan_member_update``, then ``_apply_member_update``) are shared with the members
that use the classic protocol inside a consumer group (``classic_members``): their JoinGroup is
the same change with the subscription read from their JoinGroup metadata.

Other members learn about a new target on their next heartbeat (every
group.consumer.heartbeat.interval.ms). Every change is a list of __consumer_offsets records
(Kafka's schemas, protocol_specs/consumer_offsets.json; built by ``consumer_records``) appended
*before* the state changes.

Timers: a member that does not heartbeat within group.consumer.session.timeout.ms (a classic
member: its own session timeout) is fenced (removed, group epoch bumped); a member of the consumer
protocol that does not revoke within its rebalance timeout is fenced too. A static member leaving
with epoch -2 keeps its partitions until its session timeout, and a new instance with the same
instance id takes over its assignment without a rebalance.

Online migration (group.consumer.migration.policy, ``migration``): a ConsumerGroupHeartbeat
joining a classic group of the 'consumer' protocol type with members turns it into a consumer
group (upgrade); fencing the last member of the consumer protocol when every other member uses
the classic protocol turns the group back into a classic group (downgrade). An empty group of the
other kind is replaced (its offsets carry over).
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from . import records as rec
from .assignors import ASSIGNORS, GroupSpec, MemberSpec
from .classic import ClassicGroup
from .consumer import (
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    Assignment,
    ClassicMetadata,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
    assignment_equal,
    member_topics,
    reconcile,
)

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator

log = logging.getLogger("kafkapy.coordinator.group")

group_tombstones = crec.group_tombstones  # re-exported for the coordinator
Records = list[tuple[bytes, bytes | None]]

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class TopicsView(Protocol):
    """What the coordinator needs to know about topics: name -> (id, partition count)."""

    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None: ...

    def name_of(self, topic_id: uuid.UUID) -> str | None: ...

    def names(self) -> Iterable[str]: ...


class NoTopics:
    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None:
        return None

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        return None

    def names(self) -> Iterable[str]:
        return ()


class RegistryTopics:
    """A ``TopicsView`` over an object with ``by_name``/``by_id`` maps of topic infos (the broker's
    topic registry)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None:
        info = self.registry.by_name.get(name)
        return None if info is None else (info.topic_id, len(info.partitions))

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        info = self.registry.by_id.get(topic_id)
        return None if info is None else info.name

    def names(self) -> Iterable[str]:
        return list(self.registry.by_name)


@dataclass(slots=True)
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


@dataclass(slots=True)
class HeartbeatResult:
    error: int
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


@dataclass(slots=True)
class ConsumerDescription:
    error: int
    group_id: str
    message: str | None = None
    group: ConsumerGroup | None = None
    assignor: str = ""
    targets: dict[str, Assignment] = field(default_factory=dict)


@dataclass(slots=True)
class MemberUpdate:
    """A member's change as ``_plan_member_update`` computes it: the records to write, then what
    ``_apply_member_update`` sets once they are written."""

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


def new_member_id() -> str:
    """A member id as Kafka's Uuid.randomUuid().toString() prints one: URL-safe base64, no pad."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(ps <= assigned.get(t, set()) for t, ps in owned.items())


class ConsumerProtocolMixin:
    # -- provided by GroupCoordinator ----------------------------------------------------------
    topics: TopicsView

    def _regex_topics(self, pattern: str) -> set[str]:
        try:
            compiled = re.compile(pattern)
        except re.error:
            return set()
        return {
            n for n in self.topics.names() if n not in INTERNAL_TOPICS and compiled.fullmatch(n)
        }

    def _subscription_metadata(
        self, members: Iterable[ConsumerMember]
    ) -> dict[str, tuple[uuid.UUID, int]]:
        names: set[str] = set()
        for m in members:
            names |= member_topics(m, self._regex_topics)
        out = {}
        for n in sorted(names):
            found = self.topics.lookup(n)
            if found is not None:
                out[n] = found
        return out

    # ==== ConsumerGroupHeartbeat ==============================================================
    def consumer_group_heartbeat(
        self: GroupCoordinator, r: HeartbeatRequest, now_ms: int
    ) -> HeartbeatResult:
        err, msg = self._validate_heartbeat(r)
        if err:
            return HeartbeatResult(err, msg)
        err = self.partition_error(r.group_id)
        if err:
            return HeartbeatResult(err)
        if r.subscribed_topic_regex is not None:
            try:
                re.compile(r.subscribed_topic_regex)
            except re.error as e:
                return HeartbeatResult(
                    E.invalid_regular_expression,
                    f"SubscribedTopicRegex `{r.subscribed_topic_regex}` is not a valid regular "
                    f"expression: {e}.",
                )
        if not r.member_id:  # v0: the coordinator names the member, as Kafka does
            r.member_id = new_member_id()
        if r.member_epoch in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH):
            return self._consumer_leave(r, now_ms)
        return self._consumer_heartbeat(r, now_ms)

    def _validate_heartbeat(self: GroupCoordinator, r: HeartbeatRequest) -> tuple[int, str | None]:
        bad = E.invalid_request
        if (r.version >= 1 or r.member_epoch > 0 or r.member_epoch == LEAVE_EPOCH) and (
            not r.member_id
        ):
            return bad, "MemberId can't be empty."
        if not r.group_id:
            return bad, "GroupId can't be empty."
        if r.instance_id == "":
            return bad, "InstanceId can't be empty."
        if r.rack_id == "":
            return bad, "RackId can't be empty."
        if r.member_epoch == 0:
            if r.rebalance_timeout_ms == -1:
                return bad, "RebalanceTimeoutMs must be provided in first request."
            if r.owned is None or any(r.owned.values()):
                return bad, "TopicPartitions must be empty when (re-)joining."
            if r.subscribed_topic_names is None and r.subscribed_topic_regex is None:
                return bad, (
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                    "(re-)joining."
                )
        elif r.member_epoch == LEAVE_STATIC_EPOCH:
            if r.instance_id is None:
                return bad, "InstanceId can't be null."
        elif r.member_epoch < LEAVE_STATIC_EPOCH:
            return bad, "MemberEpoch is invalid."
        assignors = self.config.consumer_assignors
        if r.server_assignor is not None and r.server_assignor not in assignors:
            return E.unsupported_assignor, (
                f"ServerAssignor {r.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(assignors)}."
            )
        return E.none, None

    def _consumer_group_for_join(
        self: GroupCoordinator, group_id: str, create: bool
    ) -> tuple[ConsumerGroup | None, list[tuple[bytes, bytes | None]], int, str | None]:
        """(group, records to write first, error, message); a new group is not registered yet."""
        group = self.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            return group, [], E.none, None
        if group is None:
            if not create:
                return None, [], E.group_id_not_found, f"Consumer group {group_id} not found."
            return ConsumerGroup(group_id), [], E.none, None
        if not create:
            return None, [], E.group_id_not_found, f"Group {group_id} is not a consumer group"
        if self._classic_is_unused(group):  # replaced; its offsets carry over
            new = ConsumerGroup(group_id)
            new.offsets = group.offsets
            return new, [(rec.group_key(group_id), None)], E.none, None
        return self._upgrade(group)  # a classic group with members: online upgrade

    def _consumer_heartbeat(
        self: GroupCoordinator, r: HeartbeatRequest, now_ms: int
    ) -> HeartbeatResult:
        cfg = self.config
        gid = r.group_id
        group, records, err, msg = self._consumer_group_for_join(gid, r.member_epoch == 0)
        if group is None:
            return HeartbeatResult(err, msg)
        fresh_group = self.groups.get(gid) is not group
        if len(group.members) >= cfg.consumer_max_size and r.member_id not in group.members:
            return HeartbeatResult(
                E.group_max_size_reached,
                f"The consumer group has reached its maximum capacity of "
                f"{cfg.consumer_max_size} members.",
            )

        # -- the member ------------------------------------------------------------------------
        replaced: ConsumerMember | None = None  # a static member's previous incarnation
        restarted: ConsumerMember | None = None  # a known member rejoining with epoch 0
        previous: ConsumerMember
        if r.instance_id is None:
            member = group.members.get(r.member_id)
            if member is None:
                if r.member_epoch != 0:
                    return HeartbeatResult(
                        E.unknown_member_id, f"Member {r.member_id} is not a member of group {gid}."
                    )
                member = previous = ConsumerMember(r.member_id)
            elif r.member_epoch == 0:
                restarted, member = member, ConsumerMember(r.member_id)
                previous = member
            else:
                err, msg = self._check_epoch(member, r.member_epoch, r.owned)
                if err:
                    return HeartbeatResult(err, msg)
                previous = member
        else:
            existing = group.static_member(r.instance_id)
            if r.member_epoch == 0:
                if existing is None:
                    member = previous = ConsumerMember(r.member_id, instance_id=r.instance_id)
                    old = group.members.get(r.member_id)
                    if old is not None:
                        restarted = old
                elif existing.member_id == r.member_id:
                    restarted = existing
                    member = previous = ConsumerMember(r.member_id, instance_id=r.instance_id)
                else:
                    if existing.member_epoch != LEAVE_STATIC_EPOCH:
                        return HeartbeatResult(
                            E.unreleased_instance_id,
                            f"Static member {r.member_id} with instance id {r.instance_id} cannot "
                            f"join the group because the instance id is owned by "
                            f"{existing.member_id} member.",
                        )
                    replaced = existing
                    member = existing.copy(
                        member_id=r.member_id, member_epoch=0, previous_member_epoch=0
                    )
                    previous = member
            else:
                if existing is None:
                    return HeartbeatResult(
                        E.unknown_member_id, f"Instance id {r.instance_id} is unknown."
                    )
                if existing.member_id != r.member_id:
                    return HeartbeatResult(
                        E.fenced_instance_id,
                        f"Static member {r.member_id} with instance id {r.instance_id} was "
                        f"fenced by member {existing.member_id}.",
                    )
                err, msg = self._check_epoch(existing, r.member_epoch, r.owned)
                if err:
                    return HeartbeatResult(err, msg)
                member = previous = existing

        updated = member.copy(
            instance_id=r.instance_id if r.instance_id is not None else member.instance_id,
            rack_id=r.rack_id if r.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                r.rebalance_timeout_ms
                if r.rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms
            ),
            server_assignor=(
                r.server_assignor if r.server_assignor is not None else member.server_assignor
            ),
            subscribed_topic_names=(
                tuple(r.subscribed_topic_names)
                if r.subscribed_topic_names is not None
                else member.subscribed_topic_names
            ),
            subscribed_topic_regex=(
                (r.subscribed_topic_regex or None)
                if r.subscribed_topic_regex is not None
                else member.subscribed_topic_regex
            ),
            client_id=r.client_id,
            client_host=r.client_host,
            classic=None,  # a member heartbeating with the consumer protocol uses it from now on
        )
        joining = previous.member_id not in group.members or restarted is not None
        if replaced is not None:
            joining = False
        u = self._plan_member_update(
            group, records, member, previous, updated, r.owned, replaced, restarted, joining
        )
        err = self._append(gid, u.records, now_ms)
        if err:
            return HeartbeatResult(err)
        if fresh_group:
            self._register_new_consumer_group(group, now_ms)
        self._apply_member_update(u, now_ms)
        reconciled = u.reconciled
        self._schedule_session(gid, reconciled.member_id, now_ms)

        full = r.member_epoch == 0 or (
            r.rebalance_timeout_ms != -1
            and (r.subscribed_topic_names is not None or r.subscribed_topic_regex is not None)
            and r.owned is not None
        )
        changed = not assignment_equal(previous.assigned, reconciled.assigned)
        return HeartbeatResult(
            E.none,
            member_id=reconciled.member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=cfg.consumer_heartbeat_interval_ms,
            assignment=reconciled.assigned if (full or changed) else None,
        )

    # ---- a member's change (shared with classic members, see classic_members) ----------------
    def _plan_member_update(
        self: GroupCoordinator,
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
        they need to ``records``. Nothing changes until ``_apply_member_update``."""
        gid = group.group_id
        # -- 1. group epoch --------------------------------------------------------------------
        bump = group.group_epoch == 0 or joining or not updated.same_subscription(member)
        members_after = {
            mid: m
            for mid, m in group.members.items()
            if not (replaced is not None and mid == replaced.member_id)
        }
        members_after[updated.member_id] = updated
        sub_meta = self._subscription_metadata(members_after.values())
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
            assignor = group_preferred(members_after.values(), self.config.consumer_assignors[0])
            spec = GroupSpec(
                members={
                    mid: MemberSpec(
                        frozenset(
                            sub_meta[n][0]
                            for n in member_topics(m, self._regex_topics)
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

    def _apply_member_update(self: GroupCoordinator, u: MemberUpdate, now_ms: int) -> None:
        """Apply a planned change once its records are on the log."""
        group, reconciled = u.group, u.reconciled
        gid = group.group_id
        if u.replaced is not None:
            group.remove_member(u.replaced.member_id)
            self._cancel_consumer_timers(gid, u.replaced.member_id)
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
                self._schedule_rebalance_timeout(group, reconciled, now_ms)
            else:
                self.timers.cancel(("consumer-rebalance", gid, reconciled.member_id))

    def _register_new_consumer_group(
        self: GroupCoordinator, group: ConsumerGroup, now_ms: int
    ) -> None:
        """A group built by a join becomes the group of its id: new, replacing an empty group of
        the other kind, or converted from a classic group with members (``migration``)."""
        old = self.groups.get(group.group_id)
        if isinstance(old, ClassicGroup) and group.members:
            self._finish_upgrade(old, group, now_ms)
        elif old is not None:
            self._forget_classic(old)
        self.groups[group.group_id] = group
        log.info("created consumer group=%s", group.group_id)

    @staticmethod
    def _check_epoch(
        member: ConsumerMember, received: int, owned: Assignment | None
    ) -> tuple[int, str | None]:
        if received > member.member_epoch:
            return E.fenced_member_epoch, (
                f"The consumer group member has a greater member epoch ({received}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                "all its partitions and rejoin."
            )
        if received < member.member_epoch and (
            received != member.previous_member_epoch or not _is_subset(owned, member.assigned)
        ):
            return E.fenced_member_epoch, (
                f"The consumer group member has a smaller member epoch ({received}) than the one "
                f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                "all its partitions and rejoin."
            )
        return E.none, None

    # ---- leaving -----------------------------------------------------------------------------
    def _consumer_leave(
        self: GroupCoordinator, r: HeartbeatRequest, now_ms: int
    ) -> HeartbeatResult:
        gid = r.group_id
        group = self.groups.get(gid)
        if not isinstance(group, ConsumerGroup):
            message = (
                f"Consumer group {gid} not found."
                if group is None
                else f"Group {gid} is not a consumer group"
            )
            return HeartbeatResult(E.group_id_not_found, message)
        if r.instance_id is None:
            member = group.members.get(r.member_id)
            if member is None:
                return HeartbeatResult(
                    E.unknown_member_id, f"Member {r.member_id} is not a member of group {gid}."
                )
        else:
            member = group.static_member(r.instance_id)
            if member is None:
                return HeartbeatResult(
                    E.unknown_member_id, f"Instance id {r.instance_id} is unknown."
                )
            if member.member_id != r.member_id:
                return HeartbeatResult(
                    E.fenced_instance_id,
                    f"Static member {r.member_id} with instance id {r.instance_id} was fenced by "
                    f"member {member.member_id}.",
                )
            if r.member_epoch == LEAVE_STATIC_EPOCH:
                left = member.copy(member_epoch=LEAVE_STATIC_EPOCH)
                err = self._append(gid, [crec.current_record(gid, left)], now_ms)
                if err:
                    return HeartbeatResult(err)
                group.put_member(left)
                self.timers.cancel(("consumer-rebalance", gid, member.member_id))
                log.info(
                    "static member=%s instance=%s temporarily left group=%s",
                    member.member_id,
                    member.instance_id,
                    gid,
                )
                return HeartbeatResult(
                    E.none, member_id=r.member_id, member_epoch=LEAVE_STATIC_EPOCH
                )
        err = self._fence_member(group, member, now_ms, "the member left the group")
        if err:
            return HeartbeatResult(err)
        return HeartbeatResult(E.none, member_id=r.member_id, member_epoch=r.member_epoch)

    def _fence_member(
        self: GroupCoordinator, group: ConsumerGroup, member: ConsumerMember, now_ms: int, why: str
    ) -> int:
        """Remove a member (it left, or a timeout expired) and bump the group epoch; when it was
        the last member of the consumer protocol among classic members, downgrade instead."""
        gid = group.group_id
        if self._can_downgrade(group, member.member_id):
            err = self._downgrade(group, member, now_ms, why)
            if err is not None:
                return err
        remaining = [m for mid, m in group.members.items() if mid != member.member_id]
        sub_meta = self._subscription_metadata(remaining)
        records = crec.member_tombstones(gid, member.member_id)
        if sub_meta != group.subscription_metadata:
            records.append(crec.partition_metadata_record(gid, sub_meta))
        records.append(crec.epoch_record(gid, group.group_epoch + 1))
        err = self._append(gid, records, now_ms)
        if err:
            return err
        group.remove_member(member.member_id)
        group.subscription_metadata = sub_meta
        group.group_epoch += 1
        self._cancel_consumer_timers(gid, member.member_id)
        log.info("member=%s removed from consumer group=%s: %s", member.member_id, gid, why)
        return E.none

    # ---- timers ------------------------------------------------------------------------------
    def _schedule_session(
        self: GroupCoordinator, gid: str, mid: str, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        """(Re)start a member's session: group.consumer.session.timeout.ms, or ``timeout_ms``
        (a classic member's own session timeout)."""
        timeout = self.config.consumer_session_timeout_ms if timeout_ms is None else timeout_ms
        self.timers.schedule(
            ("consumer-session", gid, mid),
            now_ms + timeout,
            lambda now: self._on_consumer_session_expired(gid, mid, now),
        )

    def _schedule_rebalance_timeout(
        self: GroupCoordinator, group: ConsumerGroup, member: ConsumerMember, now_ms: int
    ) -> None:
        gid, mid, epoch = group.group_id, member.member_id, member.member_epoch
        timeout = member.rebalance_timeout_ms if member.rebalance_timeout_ms > 0 else 300_000
        self.timers.schedule(
            ("consumer-rebalance", gid, mid),
            now_ms + timeout,
            lambda now: self._on_consumer_rebalance_expired(gid, mid, epoch, now),
        )

    def _cancel_consumer_timers(self: GroupCoordinator, gid: str, mid: str) -> None:
        for kind in ("consumer-session", "consumer-rebalance", "consumer-join", "consumer-sync"):
            self.timers.cancel((kind, gid, mid))

    def _on_consumer_session_expired(self: GroupCoordinator, gid: str, mid: str, now: int) -> None:
        group = self.groups.get(gid)
        if not isinstance(group, ConsumerGroup) or mid not in group.members:
            return
        log.info("member=%s of consumer group=%s failed its session timeout", mid, gid)
        if self._fence_member(group, group.members[mid], now, "the member session expired"):
            self.timers.schedule(
                ("consumer-session", gid, mid),
                now + 1000,
                lambda t: self._on_consumer_session_expired(gid, mid, t),
            )

    def _on_consumer_rebalance_expired(
        self: GroupCoordinator, gid: str, mid: str, epoch: int, now: int
    ) -> None:
        group = self.groups.get(gid)
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
        self._fence_member(group, member, now, "rebalance timeout")

    # ==== ConsumerGroupDescribe ===============================================================
    def consumer_group_describe(self: GroupCoordinator, group_id: str) -> ConsumerDescription:
        if not group_id:
            return ConsumerDescription(E.invalid_group_id, group_id)
        err = self.partition_error(group_id)
        if err:
            return ConsumerDescription(err, group_id)
        group = self.groups.get(group_id)
        if group is None:
            return ConsumerDescription(
                E.group_id_not_found, group_id, f"Group {group_id} not found."
            )
        if not isinstance(group, ConsumerGroup):
            return ConsumerDescription(
                E.group_id_not_found, group_id, f"Group {group_id} is not a consumer group"
            )
        return ConsumerDescription(
            E.none,
            group_id,
            group=group,
            assignor=group.preferred_assignor(self.config.consumer_assignors[0]),
            targets=group.target,
        )

    # ==== loading =============================================================================
    def _load_consumer_groups(
        self: GroupCoordinator,
        items: dict[str, dict[str, Any]],
        now_ms: int,
    ) -> dict[str, ConsumerGroup]:
        """Build groups from the latest value of each of their records (tombstones removed)."""
        out: dict[str, ConsumerGroup] = {}
        for gid, recs in items.items():
            epoch = recs.get(rec.GROUP_EPOCH)
            if epoch is None:
                continue
            group = ConsumerGroup(gid)
            group.group_epoch = epoch["epoch"]
            target_meta = recs.get(rec.TARGET_EPOCH)
            group.assignment_epoch = target_meta["assignment_epoch"] if target_meta else 0
            pmeta = recs.get(rec.PARTITION_METADATA)
            if pmeta:
                group.subscription_metadata = {
                    t["topic_name"]: (t["topic_id"], t["num_partitions"]) for t in pmeta["topics"]
                }
            for mid, v in recs.get(rec.TARGET_MEMBER, {}).items():
                if v is not None:
                    group.target[mid] = rec.assignment_from(v["topic_partitions"])
            currents = recs.get(rec.CURRENT_ASSIGNMENT, {})
            for mid, v in recs.get(rec.MEMBER_METADATA, {}).items():
                if v is None:
                    continue
                member = ConsumerMember(
                    mid,
                    instance_id=v["instance_id"],
                    rack_id=v["rack_id"],
                    client_id=v["client_id"],
                    client_host=v["client_host"],
                    subscribed_topic_names=tuple(v["subscribed_topic_names"]),
                    subscribed_topic_regex=v["subscribed_topic_regex"],
                    server_assignor=v["server_assignor"],
                    rebalance_timeout_ms=v["rebalance_timeout_ms"],
                    classic=_classic_from_record(v.get("classic_member_metadata")),
                )
                c = currents.get(mid)
                if c is not None:
                    member.member_epoch = c["member_epoch"]
                    member.previous_member_epoch = c["previous_member_epoch"]
                    try:
                        member.state = MemberState(c["state"])
                    except ValueError:
                        member.state = MemberState.UNKNOWN
                    member.assigned = rec.assignment_from(c["assigned_partitions"])
                    member.pending_revocation = rec.assignment_from(
                        c["partitions_pending_revocation"]
                    )
                group.put_member(member)
            group.target = {mid: a for mid, a in group.target.items() if mid in group.members}
            out[gid] = group
        return out

    def _start_consumer_group(self: GroupCoordinator, group: ConsumerGroup, now_ms: int) -> None:
        for member in group.members.values():
            classic = member.classic
            timeout = None if classic is None else classic.session_timeout_ms
            self._schedule_session(group.group_id, member.member_id, now_ms, timeout)
            if classic is None and member.state == MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group, member, now_ms)


def _classic_from_record(v: dict | None) -> ClassicMetadata | None:
    if v is None:
        return None
    protocols = tuple((p["name"], p["metadata"] or b"") for p in v["supported_protocols"] or ())
    if not protocols:
        return None
    return ClassicMetadata(v["session_timeout_ms"], protocols)


def group_preferred(members: Iterable[ConsumerMember], default: str) -> str:
    counts: dict[str, int] = {}
    for m in members:
        if m.server_assignor:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    if not counts:
        return default
    return max(sorted(counts), key=lambda name: counts[name])
