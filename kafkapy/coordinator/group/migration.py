"""Online migration between the classic protocol and the consumer protocol (KIP-848), as Kafka
4.0's GroupMetadataManager does it, governed by group.consumer.migration.policy:

========================  ===================================================================
policy                    allows
========================  ===================================================================
``disabled``              neither (a group changes kind only while empty)
``upgrade``               classic -> consumer
``downgrade``             consumer -> classic
``bidirectional``         both (Kafka 4.0's default)
========================  ===================================================================

**Upgrade.** A ConsumerGroupHeartbeat joining (epoch 0) a classic group with members converts it
when the policy allows it, the group's protocol type is "consumer" and it has no more members
than group.consumer.max.size; otherwise GROUP_ID_NOT_FOUND. Each classic member becomes a member
of the consumer group that keeps using the classic protocol (``ConsumerMember.classic``: its
session timeout and JoinGroup protocols): subscription from its JoinGroup metadata, current and
target assignment from its last SyncGroup assignment, member epoch = the group's generation,
state Stable. The group epoch and assignment epoch start at the generation. Records: the classic
group's tombstone, then the consumer group's records (``consumer_records.creation_records``),
before the joining member's own; pending JoinGroup/SyncGroup answers get REBALANCE_IN_PROGRESS
so those members rejoin (now served by ``classic_members``). A subscription or assignment that
does not parse, or an assignment carrying user data (a custom assignor's state, which the server
side assignors would lose), refuses the upgrade with GROUP_ID_NOT_FOUND.

**Downgrade.** When the last member of the consumer protocol is fenced (it leaves, or its session
or rebalance timeout expires) and every other member uses the classic protocol, the group
converts back when the policy allows it and the remaining members fit group.max.size: a classic
group in the Stable state at generation = the group epoch, protocol type "consumer", each member
with its JoinGroup protocols and its target assignment serialized as the embedded protocol's
Assignment (in the version of its subscription), the protocol every member supports (by vote).
Records: the consumer group's tombstones, then the classic group's GroupMetadata record. A
rebalance follows at once (PreparingRebalance: members learn it from their next heartbeat and
rejoin, and the leader computes a client-side assignment).

Not done: Kafka also downgrades when a static member of the classic protocol replaces the last
static member of the consumer protocol (JoinGroup with its group.instance.id); kafkapy keeps such a
group a consumer group until the next member of the consumer protocol is fenced.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from . import records as rec
from .classic import ClassicGroup, ClassicMember, GroupState, JoinResult, SyncResult
from .classic_rebalance import ClassicRebalance
from .consumer import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState, copy_assignment
from .consumer_sessions import ConsumerSessions
from .embedded import (
    EmbeddedProtocolError,
    encode_assignment,
    parse_assignment,
    parse_subscription,
    version_of,
)
from .state import CoordinatorState, Records
from .topics import TopicsView

log = logging.getLogger("kafkapy.coordinator.group")

POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")


def upgrade_enabled(policy: str) -> bool:
    return policy in ("upgrade", "bidirectional")


def downgrade_enabled(policy: str) -> bool:
    return policy in ("downgrade", "bidirectional")


class CustomAssignorError(ValueError):
    """A classic member's assignment carries user data the server-side assignors would lose."""


# -- the conversions (pure) --------------------------------------------------------------------


def consumer_group_from_classic(classic: ClassicGroup, topics: TopicsView) -> ConsumerGroup:
    """The consumer group a classic group becomes (Kafka's ConsumerGroup.fromClassicGroup).

    Raises EmbeddedProtocolError or CustomAssignorError."""
    group = ConsumerGroup(classic.group_id)
    group.group_epoch = group.assignment_epoch = classic.generation_id
    for m in classic.members.values():
        assigned = {}
        if m.assignment:  # empty: joined but never synced
            by_name, user_data = parse_assignment(m.assignment)
            if user_data:
                raise CustomAssignorError(f"member {m.member_id} has assignment user data")
            for topic, ps in by_name.items():
                found = topics.lookup(topic)
                if found is not None and ps:
                    assigned[found[0]] = set(ps)
        if classic.protocol_name is not None:
            metadata = m.metadata_for(classic.protocol_name)
        else:  # a first rebalance still running: every protocol carries the same subscription
            metadata = m.protocols[0][1] if m.protocols else b""
        sub = parse_subscription(metadata)
        member = ConsumerMember(
            m.member_id,
            instance_id=m.group_instance_id,
            rack_id=sub.rack_id,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=sub.topics,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            member_epoch=classic.generation_id,
            previous_member_epoch=classic.generation_id,
            state=MemberState.STABLE,
            assigned=assigned,
            classic=ClassicMetadata(m.session_timeout_ms, tuple(m.protocols)),
        )
        group.target[m.member_id] = copy_assignment(assigned)
        group.put_member(member)
    return group


def classic_group_from_consumer(
    group: ConsumerGroup, leaving_id: str, topics: TopicsView, now_ms: int
) -> ClassicGroup:
    """The classic group a consumer group becomes without ``leaving_id`` (Kafka's
    ClassicGroup.fromConsumerGroup): Stable at generation = the group epoch."""
    classic = ClassicGroup(group.group_id, now_ms, GroupState.STABLE)
    classic.generation_id = group.group_epoch
    for mid, m in group.members.items():
        if mid == leaving_id or m.classic is None:
            continue
        rebalance = m.rebalance_timeout_ms if m.rebalance_timeout_ms > 0 else None
        classic.add(
            ClassicMember(
                mid,
                m.instance_id,
                m.client_id,
                m.client_host,
                rebalance or m.classic.session_timeout_ms,
                m.classic.session_timeout_ms,
                "consumer",
                list(m.classic.protocols),
            )
        )
    classic.protocol_type = "consumer"
    classic.protocol_name = classic.select_protocol()
    for mid, member in classic.members.items():
        by_name: dict[str, set[int]] = {}
        for t, ps in group.target.get(mid, {}).items():
            name = topics.name_of(t)
            if name is not None and ps:
                by_name[name] = set(ps)
        version = version_of(member.metadata_for(classic.protocol_name))
        member.assignment = encode_assignment(by_name, version)
    return classic


# -- the coordinator's side --------------------------------------------------------------------


@dataclass(slots=True)
class Migration:
    """Upgrade and downgrade of a group, over the coordinator's shared state."""

    state: CoordinatorState
    rebalance: ClassicRebalance
    sessions: ConsumerSessions

    def upgrade(
        self, classic: ClassicGroup
    ) -> tuple[ConsumerGroup | None, Records, int, str | None]:
        """(the converted group, not registered yet; the records converting it; error; message).
        ``finish_upgrade`` completes it once the joining member's records are written too."""
        gid = classic.group_id
        config = self.state.config
        policy = config.consumer_migration_policy
        if not upgrade_enabled(policy):
            why = "online upgrade is disabled"
        elif classic.protocol_type != "consumer":
            why = "the group does not use the consumer embedded protocol"
        elif len(classic.members) > config.consumer_max_size:
            why = "the group size exceeds the consumer group maximum size"
        else:
            try:
                group = consumer_group_from_classic(classic, self.state.topics)
            except EmbeddedProtocolError as e:
                log.warning("cannot upgrade classic group=%s: %s", gid, e)
                why = "the embedded consumer protocol is malformed"
            except CustomAssignorError as e:
                log.warning("cannot upgrade classic group=%s: %s", gid, e)
                why = (
                    "an unsupported custom assignor is in use. Please refer to the "
                    "documentation or switch to a default assignor before re-attempting the "
                    "upgrade"
                )
            else:
                group.offsets = classic.offsets
                records: Records = [(rec.group_key(gid), None)]
                records += crec.creation_records(group)
                return group, records, E.none, None
        log.info("cannot upgrade classic group=%s to a consumer group: %s", gid, why)
        return (
            None,
            [],
            E.group_id_not_found,
            f"Cannot upgrade classic group {gid} to consumer group because {why}.",
        )

    def finish_upgrade(self, classic: ClassicGroup, group: ConsumerGroup, now_ms: int) -> None:
        """The conversion is on the log: the classic group's members rejoin, now as members of
        the consumer group, each with its own session timeout."""
        for m in classic.members.values():
            m.complete_join(JoinResult(E.rebalance_in_progress, member_id=m.member_id))
            m.complete_sync(SyncResult(E.rebalance_in_progress))
        self.rebalance.forget(classic)
        gid = group.group_id
        for member in group.members.values():
            if member.classic is not None:
                self.sessions.schedule_session(
                    gid, member.member_id, now_ms, member.classic.session_timeout_ms
                )
        log.info(
            "converted classic group=%s (generation %d, %d members) to a consumer group",
            gid,
            classic.generation_id,
            len(classic.members),
        )

    def can_downgrade(self, group: ConsumerGroup, leaving_id: str) -> bool:
        """Kafka's validateOnlineDowngradeWithFencedMember."""
        if not group.all_classic_except(leaving_id) or len(group.members) <= 1:
            return False
        gid = group.group_id
        config = self.state.config
        if not downgrade_enabled(config.consumer_migration_policy):
            log.info("cannot downgrade consumer group=%s: online downgrade is disabled", gid)
            return False
        if len(group.members) - 1 > config.max_size:
            log.info("cannot downgrade consumer group=%s: larger than group.max.size", gid)
            return False
        return True

    def downgrade(
        self, group: ConsumerGroup, leaving: ConsumerMember, now_ms: int, why: str
    ) -> int | None:
        """Fence ``leaving`` by converting the group; None when the remaining members share no
        protocol (then the member is only removed)."""
        gid = group.group_id
        try:
            classic = classic_group_from_consumer(
                group, leaving.member_id, self.state.topics, now_ms
            )
        except ValueError as e:
            log.warning("cannot downgrade consumer group=%s: %s", gid, e)
            return None
        records = crec.group_tombstones(group)
        records.append((rec.group_key(gid), rec.group_value(classic.record_value())))
        err = self.state.append(gid, records, now_ms)
        if err:
            return err
        for mid in group.members:
            self.sessions.cancel(gid, mid)
        classic.offsets = group.offsets
        self.state.groups[gid] = classic
        log.info(
            "member=%s removed from consumer group=%s: %s; converted the group to a classic group "
            "(generation %d, %d members)",
            leaving.member_id,
            gid,
            why,
            classic.generation_id,
            len(classic.members),
        )
        for m in classic.members.values():
            self.rebalance.schedule_heartbeat(classic, m, now_ms)
        self.rebalance.prepare_rebalance(
            classic, now_ms, f"Downgrade group {gid} from consumer to classic."
        )
        return E.none
