"""Members of the classic protocol inside a consumer group (KIP-848's online migration): their
JoinGroup, SyncGroup, Heartbeat and LeaveGroup served by the consumer group, as Kafka 4.0's
GroupMetadataManager does (classicGroupJoinToConsumerGroup and its siblings). The classic APIs
(``classic_join``, ``classic_sync``, ``classic_heartbeat``) hand a non-empty ``ConsumerGroup``
to ``ClassicMembersOfConsumerGroups``.

- **JoinGroup**: protocol type "consumer" and a protocol every classic member supports, else
  INCONSISTENT_GROUP_PROTOCOL; group.consumer.max.size, else GROUP_MAX_SIZE_REACHED; a dynamic
  member without an id gets MEMBER_ID_REQUIRED with a new id (v4+), like in a classic group. The
  member's subscription (topics, rack) comes from its JoinGroup metadata (the 'consumer' embedded
  protocol); the change runs steps 1-3 of ``member_update`` (group epoch, server-side target
  assignment, reconciliation with the partitions the subscription says it owns). The answer
  comes at once: generation = the member epoch, protocol = the member's first, no leader, no
  member list (so the client does not assign). A static member joining without an id replaces
  the member with its instance id. After the answer: the member's session timeout, and its
  rebalance timeout for the SyncGroup to come.
- **SyncGroup**: the member's current assignment, serialized in the version of its subscription.
  ILLEGAL_GENERATION unless generation = member epoch; INCONSISTENT_GROUP_PROTOCOL for another
  protocol type/name; REBALANCE_IN_PROGRESS when the group epoch moved past the member's epoch
  (unless it is revoking), so it rejoins.
- **Heartbeat**: restarts the session; REBALANCE_IN_PROGRESS when the member must rejoin to move
  on: the group epoch is ahead of its epoch, it has partitions to revoke, or the partitions it
  waited for are free. From then on it must rejoin within its rebalance timeout.
- **LeaveGroup**: the members leave (tombstones), the group epoch is bumped once.

A member that misses its session, join or sync deadline is fenced like any other.
UNKNOWN_MEMBER_ID for a member that is not there or does not use the classic protocol,
FENCED_INSTANCE_ID for a static member known under another member id.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from .classic import JoinRequest, JoinResult, SyncResult
from .consumer import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from .consumer_sessions import ConsumerSessions
from .embedded import EmbeddedProtocolError, encode_assignment, parse_subscription, version_of
from .member_update import MemberUpdates, new_member_id
from .state import CoordinatorState

log = logging.getLogger("kafkapy.coordinator.group")


@dataclass(slots=True)
class ClassicMembersOfConsumerGroups:
    state: CoordinatorState
    updates: MemberUpdates
    sessions: ConsumerSessions

    # ==== JoinGroup ===========================================================================
    def join(self, group: ConsumerGroup, r: JoinRequest, now_ms: int) -> JoinResult:
        gid = group.group_id
        unknown = not r.member_id
        mid = r.member_id or new_member_id()
        iid = r.group_instance_id
        cap = self.state.config.consumer_max_size
        if len(group.members) >= cap and (unknown or mid not in group.members):
            return JoinResult(E.group_max_size_reached, member_id=r.member_id)
        if not group.supports_classic_protocols(r.protocol_type, [n for n, _ in r.protocols]):
            return JoinResult(E.inconsistent_group_protocol, member_id=r.member_id)
        if unknown and iid is None and r.require_known_member_id:
            log.info("new classic member of consumer group=%s must rejoin as %s", gid, mid)
            return JoinResult(E.member_id_required, member_id=mid)

        replaced: ConsumerMember | None = None
        if iid is None:
            member = group.members.get(mid) or ConsumerMember(mid)
        else:
            existing = group.static_member(iid)
            if unknown:
                if existing is None:
                    member = ConsumerMember(mid, instance_id=iid)
                else:  # the instance restarted: it takes over the previous one's assignment
                    replaced = existing
                    member = existing.copy(member_id=mid, member_epoch=0, previous_member_epoch=0)
            elif existing is None:
                return JoinResult(E.unknown_member_id, member_id=r.member_id)
            elif existing.member_id != mid:
                return JoinResult(E.fenced_instance_id, member_id=r.member_id)
            else:
                member = existing
        try:
            sub = parse_subscription(r.protocols[0][1])
        except EmbeddedProtocolError as e:  # Kafka: an IllegalStateException
            log.warning("classic member=%s of consumer group=%s: %s", mid, gid, e)
            return JoinResult(E.unknown_server_error, member_id=r.member_id)
        owned = {}
        for topic, ps in sub.owned_partitions.items():
            found = self.state.topics.lookup(topic)
            if found is not None:
                owned[found[0]] = set(ps)
        updated = member.copy(
            instance_id=iid if iid is not None else member.instance_id,
            rack_id=sub.rack_id if sub.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                r.rebalance_timeout_ms
                if r.rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms
            ),
            subscribed_topic_names=sub.topics,
            client_id=r.client_id,
            client_host=r.client_host,
            classic=ClassicMetadata(r.session_timeout_ms, tuple(r.protocols)),
        )
        joining = replaced is None and mid not in group.members
        u = self.updates.plan(
            group, [], member, member, updated, owned, replaced=replaced, joining=joining
        )
        err = self.state.append(gid, u.records, now_ms)
        if err:
            return JoinResult(err, member_id=r.member_id)
        self.updates.apply(u, now_ms)
        reconciled = u.reconciled
        self.state.timers.cancel(("consumer-join", gid, mid))
        self.sessions.schedule_session(gid, mid, now_ms, r.session_timeout_ms)
        self.sessions.schedule_member_deadline(
            "consumer-sync",
            gid,
            mid,
            now_ms,
            reconciled.rebalance_timeout_ms,
            "the member failed to sync within timeout",
        )
        return JoinResult(
            E.none,
            member_id=mid,
            generation_id=reconciled.member_epoch,
            protocol_type="consumer",
            protocol_name=updated.classic.protocol_name,  # type: ignore[union-attr]
            leader="",
        )

    # ==== SyncGroup ===========================================================================
    def sync(
        self,
        group: ConsumerGroup,
        generation_id: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        now_ms: int,
    ) -> SyncResult:
        member, err = self._classic_member(group, member_id, instance_id)
        if member is None:
            return SyncResult(err)
        assert member.classic is not None
        if generation_id != member.member_epoch:
            return SyncResult(E.illegal_generation)
        if (protocol_type is not None and protocol_type != "consumer") or (
            protocol_name is not None and protocol_name != member.classic.protocol_name
        ):
            return SyncResult(E.inconsistent_group_protocol)
        gid = group.group_id
        if group.group_epoch > member.member_epoch and (
            member.state != MemberState.UNREVOKED_PARTITIONS
        ):
            self._expect_rejoin(group, member, now_ms)
            return SyncResult(E.rebalance_in_progress)
        self.state.timers.cancel(("consumer-sync", gid, member.member_id))
        self.sessions.schedule_session(
            gid, member.member_id, now_ms, member.classic.session_timeout_ms
        )
        return SyncResult(E.none, protocol_type, protocol_name, self._classic_assignment(member))

    def _classic_assignment(self, member: ConsumerMember) -> bytes:
        """The member's current assignment as the embedded protocol's Assignment."""
        assert member.classic is not None
        by_name: dict[str, set[int]] = {}
        for t, ps in member.assigned.items():
            name = self.state.topics.name_of(t)
            if name is not None and ps:
                by_name[name] = set(ps)
        return encode_assignment(by_name, version_of(member.classic.metadata))

    # ==== Heartbeat ===========================================================================
    def heartbeat(
        self,
        group: ConsumerGroup,
        generation_id: int,
        member_id: str,
        instance_id: str | None,
        now_ms: int,
    ) -> int:
        member, err = self._classic_member(group, member_id, instance_id)
        if member is None:
            return err
        assert member.classic is not None
        if generation_id != member.member_epoch:
            return E.illegal_generation
        gid = group.group_id
        self.sessions.schedule_session(
            gid, member.member_id, now_ms, member.classic.session_timeout_ms
        )
        if (
            member.member_epoch < group.group_epoch
            or member.state == MemberState.UNREVOKED_PARTITIONS
            or (
                member.state == MemberState.UNRELEASED_PARTITIONS
                and not group.waiting_on_unreleased(member)
            )
        ):
            self._expect_rejoin(group, member, now_ms)
            return E.rebalance_in_progress
        return E.none

    # ==== LeaveGroup ==========================================================================
    def leave(
        self,
        group: ConsumerGroup,
        members: list[tuple[str, str | None]],
        now_ms: int,
    ) -> tuple[int, list[int]]:
        gid = group.group_id
        leaving: dict[str, ConsumerMember] = {}
        errors = []
        for member_id, instance_id in members:
            if instance_id is None:
                member, err = self._classic_member(group, member_id, None)
            else:  # an admin may remove a static member by instance id alone
                member, err = self._classic_member(group, member_id or None, instance_id)
            if member is None:
                errors.append(err)
                continue
            leaving[member.member_id] = member
            errors.append(E.none)
        if not leaving:
            return E.none, errors
        remaining = [m for mid, m in group.members.items() if mid not in leaving]
        sub_meta = self.state.subscription_metadata(remaining)
        records: list[tuple[bytes, bytes | None]] = []
        for mid in leaving:
            records += crec.member_tombstones(gid, mid)
        if sub_meta != group.subscription_metadata:
            records.append(crec.partition_metadata_record(gid, sub_meta))
        records.append(crec.epoch_record(gid, group.group_epoch + 1))
        err = self.state.append(gid, records, now_ms)
        if err:
            return err, []
        for mid in leaving:
            group.remove_member(mid)
            self.sessions.cancel(gid, mid)
            log.info("classic member=%s leaves consumer group=%s", mid, gid)
        group.subscription_metadata = sub_meta
        group.group_epoch += 1
        return E.none, errors

    # ==== helpers =============================================================================
    @staticmethod
    def _classic_member(
        group: ConsumerGroup, member_id: str | None, instance_id: str | None
    ) -> tuple[ConsumerMember | None, int]:
        """The classic member a request names, or the error to answer (Kafka's
        validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol). ``member_id``
        None: any member id (LeaveGroup by instance id)."""
        if instance_id is None:
            member = group.members.get(member_id or "")
        else:
            member = group.static_member(instance_id)
            if member is not None and member_id is not None and member.member_id != member_id:
                return None, E.fenced_instance_id
        if member is None or member.classic is None:
            return None, E.unknown_member_id
        return member, E.none

    def _expect_rejoin(self, group: ConsumerGroup, member: ConsumerMember, now_ms: int) -> None:
        """The member was told to rejoin: it must within its rebalance timeout (once)."""
        key = ("consumer-join", group.group_id, member.member_id)
        if key not in self.state.timers:
            self.sessions.schedule_member_deadline(
                "consumer-join",
                group.group_id,
                member.member_id,
                now_ms,
                member.rebalance_timeout_ms,
                "the classic member failed to join within the rebalance timeout",
            )
