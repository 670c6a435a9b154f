"""ConsumerGroupHeartbeat (sans-io): a member of a consumer group (KIP-848) joins, heartbeats,
changes its subscription, or leaves, all in one call, following Kafka 4.0's GroupMetadataManager.

A join or heartbeat validates the request (INVALID_REQUEST with Kafka's messages), finds the
member (dynamic by member id, static by instance id: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
UNRELEASED_INSTANCE_ID, FENCED_MEMBER_EPOCH), then runs the member's change (``member_update``:
group epoch, target assignment, reconciliation), writes its records, and answers with the
member's epoch and, when it changed or the request was a full one, its assignment. Other members
learn about a new target on their next heartbeat (every group.consumer.heartbeat.interval.ms).

Leaving: epoch -1 fences the member (``consumer_fencing``); a static member leaving with epoch -2
keeps its partitions until its session timeout (``consumer_sessions``), and a new instance with
the same instance id takes over its assignment without a rebalance.

Online migration (group.consumer.migration.policy, ``migration``): a ConsumerGroupHeartbeat
joining a classic group of the 'consumer' protocol type with members turns it into a consumer
group (upgrade). An empty group of the other kind is replaced (its offsets carry over).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from . import records as rec
from .classic import ClassicGroup
from .classic_rebalance import ClassicRebalance, classic_is_unused
from .consumer import (
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    assignment_equal,
)
from .consumer_fencing import ConsumerFencing
from .consumer_sessions import ConsumerSessions
from .member_update import MemberUpdates, new_member_id
from .migration import Migration
from .state import CoordinatorState, Records
from .streams.model import StreamsGroup

log = logging.getLogger("kafkapy.coordinator.group")


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


def _static_member_error(
    holder: ConsumerMember | None, r: HeartbeatRequest
) -> HeartbeatResult | None:
    """Why a static member's heartbeat or leave is refused: no member holds its instance id
    (UNKNOWN_MEMBER_ID), or another member does (FENCED_INSTANCE_ID); None when it is ours."""
    if holder is None:
        return HeartbeatResult(E.unknown_member_id, f"Instance id {r.instance_id} is unknown.")
    if holder.member_id != r.member_id:
        return HeartbeatResult(
            E.fenced_instance_id,
            f"Static member {r.member_id} with instance id {r.instance_id} was fenced by "
            f"member {holder.member_id}.",
        )
    return None


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(ps <= assigned.get(t, set()) for t, ps in owned.items())


@dataclass(slots=True)
class ConsumerGroupHeartbeat:
    state: CoordinatorState
    updates: MemberUpdates
    sessions: ConsumerSessions
    fencing: ConsumerFencing
    migration: Migration
    rebalance: ClassicRebalance

    def heartbeat(self, r: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        err, msg = self._validate_heartbeat(r)
        if err:
            return HeartbeatResult(err, msg)
        err = self.state.partition_error(r.group_id)
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

    def _validate_heartbeat(self, r: HeartbeatRequest) -> tuple[int, str | None]:
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
        assignors = self.state.config.consumer_assignors
        if r.server_assignor is not None and r.server_assignor not in assignors:
            return E.unsupported_assignor, (
                f"ServerAssignor {r.server_assignor} is not supported. Supported assignors: "
                f"{', '.join(assignors)}."
            )
        return E.none, None

    def _consumer_group_for_join(
        self, group_id: str, create: bool
    ) -> tuple[ConsumerGroup | None, Records, int, str | None]:
        """(group, records to write first, error, message); a new group is not registered yet."""
        group = self.state.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            return group, [], E.none, None
        if group is None:
            if not create:
                return None, [], E.group_id_not_found, f"Consumer group {group_id} not found."
            return ConsumerGroup(group_id), [], E.none, None
        if isinstance(group, StreamsGroup):  # Kafka 4.4's words for a streams group
            return None, [], E.group_id_not_found, f"Group {group_id} is not a consumer group."
        if not create:
            return None, [], E.group_id_not_found, f"Group {group_id} is not a consumer group"
        if classic_is_unused(group):  # replaced; its offsets carry over
            new = ConsumerGroup(group_id)
            new.offsets = group.offsets
            return new, [(rec.group_key(group_id), None)], E.none, None
        return self.migration.upgrade(group)  # a classic group with members: online upgrade

    def _consumer_heartbeat(self, r: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        cfg = self.state.config
        gid = r.group_id
        group, records, err, msg = self._consumer_group_for_join(gid, r.member_epoch == 0)
        if group is None:
            return HeartbeatResult(err, msg)
        fresh_group = self.state.groups.get(gid) is not group
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
                refused = _static_member_error(existing, r)
                if refused is not None:
                    return refused
                assert existing is not None
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
        u = self.updates.plan(
            group, records, member, previous, updated, r.owned, replaced, restarted, joining
        )
        err = self.state.append(gid, u.records, now_ms)
        if err:
            return HeartbeatResult(err)
        if fresh_group:
            self._register_new_consumer_group(group, now_ms)
        self.updates.apply(u, now_ms)
        reconciled = u.reconciled
        self.sessions.schedule_session(gid, reconciled.member_id, now_ms)

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
            heartbeat_interval_ms=cfg.heartbeat_interval_ms(gid),
            assignment=reconciled.assigned if (full or changed) else None,
        )

    def _register_new_consumer_group(self, group: ConsumerGroup, now_ms: int) -> None:
        """A group built by a join becomes the group of its id: new, replacing an empty group of
        the other kind, or converted from a classic group with members (``migration``)."""
        old = self.state.groups.get(group.group_id)
        if isinstance(old, ClassicGroup) and group.members:
            self.migration.finish_upgrade(old, group, now_ms)
        elif old is not None and not isinstance(old, StreamsGroup):
            self.rebalance.forget(old)
        self.state.groups[group.group_id] = group
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
    def _consumer_leave(self, r: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        gid = r.group_id
        group = self.state.groups.get(gid)
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
            refused = _static_member_error(member, r)
            if refused is not None:
                return refused
            assert member is not None
            if r.member_epoch == LEAVE_STATIC_EPOCH:
                left = member.copy(member_epoch=LEAVE_STATIC_EPOCH)
                err = self.state.append(gid, [crec.current_record(gid, left)], now_ms)
                if err:
                    return HeartbeatResult(err)
                group.put_member(left)
                self.sessions.cancel_rebalance_timeout(gid, member.member_id)
                log.info(
                    "static member=%s instance=%s temporarily left group=%s",
                    member.member_id,
                    member.instance_id,
                    gid,
                )
                return HeartbeatResult(
                    E.none, member_id=r.member_id, member_epoch=LEAVE_STATIC_EPOCH
                )
        err = self.fencing.fence_member(group, member, now_ms, "the member left the group")
        if err:
            return HeartbeatResult(err)
        return HeartbeatResult(E.none, member_id=r.member_id, member_epoch=r.member_epoch)
