"""The group coordinator (sans-io): classic groups, committed offsets, and their records.

One object owns every group of the __consumer_offsets partitions this broker leads. The server
calls one method per API with ``now_ms``; methods either answer at once or return a ``Pending``
that a later call (another member's join, a timer) completes. Timers live in ``self.timers``;
the server sleeps until ``next_deadline()`` and then calls ``poll(now_ms)``.

State changes that must survive a restart are appended to __consumer_offsets through
``OffsetsLog.append`` *before* the in-memory state changes and before the answer is given, so an
acknowledged commit is on the log. Loading a partition replays its records (``load_partition``);
until then every group of that partition answers COORDINATOR_LOAD_IN_PROGRESS.

The rules follow Apache Kafka's classic group coordinator (GroupMetadataManager and ClassicGroup
of Kafka 4.0): KIP-394 member ids, KIP-345 static membership, generation fencing, the initial
rebalance delay, pending-sync expiry, group.max.size, offset expiry (KIP-211). Consumer-protocol
groups (KIP-848) live in the same ``groups`` table; their operations are in ``modern``. A group is
one kind or the other, and may change kind online (``migration``, group.consumer.migration.policy).
Classic APIs aimed at a non-empty consumer group are served by it (``classic_members``): its
members of the classic protocol join, sync, heartbeat and leave there, while other members answer
UNKNOWN_MEMBER_ID; DescribeGroups answers GROUP_ID_NOT_FOUND (not a classic group). Offsets
committed by a consumer group's members are checked against their member epoch
(STALE_MEMBER_EPOCH; ILLEGAL_GENERATION for a member of the classic protocol).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kafkapy.protocol.errors import ErrorCode as E

from . import records as rec
from .classic import (
    ClassicGroup,
    ClassicMember,
    GroupState,
    JoinResult,
    OffsetAndMetadata,
    SyncResult,
)
from .classic_members import ClassicMembersMixin
from .consumer import ConsumerGroup
from .migration import MigrationMixin
from .modern import ConsumerProtocolMixin, NoTopics, TopicsView, group_tombstones
from .partitioning import partition_for
from .pending import Pending
from .timers import Timers

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")

MAX_GROUP_ID_BYTES = 32767  # the record key holds it as an int16-length string


class OffsetsLog(Protocol):
    """Where the coordinator's records go: one __consumer_offsets partition per call, all or
    nothing. Raises on failure: an exception with an ``error_code`` (a produce error) is answered
    as ``append_error_to_response_error`` says, any other with COORDINATOR_NOT_AVAILABLE."""

    def append(
        self, partition: int, records: list[tuple[bytes, bytes | None]], now_ms: int
    ) -> None: ...


def append_error_to_response_error(error: int) -> int:
    """The group API error for a failed __consumer_offsets write (Kafka's
    appendGroupMetadataErrorToResponseError, plus NOT_ENOUGH_REPLICAS_AFTER_APPEND as the
    ZooKeeper-era coordinator mapped it: writes there are acks=all)."""
    if error in (
        E.unknown_topic_or_partition,
        E.not_enough_replicas,
        E.not_enough_replicas_after_append,
        E.request_timed_out,
    ):
        return E.coordinator_not_available
    if error in (E.not_leader_or_follower, E.kafka_storage_error):
        return E.not_coordinator
    if error in (E.message_too_large, E.record_list_too_large, E.invalid_fetch_size):
        return E.unknown_server_error
    return error


@dataclass(slots=True)
class CoordinatorConfig:
    num_partitions: int = 50
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    initial_rebalance_delay_ms: int = 3000
    max_size: int = 2**31 - 1
    offsets_retention_ms: int = 10080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    new_member_join_timeout_ms: int = 300_000
    consumer_session_timeout_ms: int = 45_000
    consumer_heartbeat_interval_ms: int = 5_000
    consumer_assignors: tuple[str, ...] = ("uniform", "range")
    consumer_max_size: int = 2**31 - 1
    consumer_migration_policy: str = "bidirectional"  # disabled, upgrade, downgrade


@dataclass(slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    require_known_member_id: bool = True  # JoinGroup v4+
    reason: str | None = None


@dataclass(slots=True)
class CommitOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@dataclass(slots=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupDescription:
    error: int
    group_id: str
    state: str = "Dead"
    protocol_type: str = ""
    protocol_data: str = ""
    members: list[MemberDescription] = field(default_factory=list)
    message: str | None = None


@dataclass(slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str


def valid_group_id(group_id: str | None) -> bool:
    return bool(group_id) and len(group_id.encode("utf-8")) <= MAX_GROUP_ID_BYTES  # type: ignore[union-attr]


class GroupCoordinator(ConsumerProtocolMixin, ClassicMembersMixin, MigrationMixin):
    def __init__(
        self, config: CoordinatorConfig, log_: OffsetsLog, topics: TopicsView | None = None
    ) -> None:
        self.config = config
        self.log = log_
        self.topics = topics if topics is not None else NoTopics()
        self.groups: dict[str, ClassicGroup | ConsumerGroup] = {}
        self.timers = Timers()
        self.owned: set[int] = set()
        self.loading: set[int] = set()
        self._initial_remaining: dict[str, int] = {}

    # ==== ownership and loading ===============================================================
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.config.num_partitions)

    def partition_error(self, group_id: str) -> int:
        p = self.partition_for(group_id)
        if p in self.loading:
            return E.coordinator_load_in_progress
        if p not in self.owned:
            return E.not_coordinator
        return E.none

    def begin_loading(self, partitions: Iterable[int]) -> None:
        self.loading.update(partitions)

    def add_empty_partitions(self, partitions: Iterable[int], now_ms: int) -> None:
        """Partitions just created: nothing to load."""
        for p in partitions:
            self.loading.discard(p)
            self.owned.add(p)
        self._ensure_retention_timer(now_ms)

    def load_partition(
        self, partition: int, records: Iterable[tuple[bytes, bytes | None]], now_ms: int
    ) -> None:
        """Replay a partition's records (in log order) and start serving its groups."""
        metas: dict[str, rec.GroupValue | None] = {}
        offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata]] = {}
        modern: dict[str, dict] = {}
        kind_at: dict[str, tuple[int, str]] = {}  # group -> (position, kind) of its last metadata
        skipped = 0
        for pos, (key_bytes, value_bytes) in enumerate(records):
            try:
                key = rec.decode_key(key_bytes)
                if key is None:
                    skipped += 1
                elif isinstance(key, rec.ConsumerKey):
                    value = (
                        None
                        if value_bytes is None
                        else rec.decode_consumer_value(key.kind, value_bytes)
                    )
                    recs = modern.setdefault(key.group, {})
                    if key.member_id is None:
                        recs[key.kind] = value
                    else:
                        recs.setdefault(key.kind, {})[key.member_id] = value
                    if key.kind == rec.GROUP_EPOCH and value is not None:
                        kind_at[key.group] = (pos, "consumer")
                elif isinstance(key, rec.OffsetKey):
                    group_offsets = offsets.setdefault(key.group, {})
                    tp = (key.topic, key.partition)
                    if value_bytes is None:
                        group_offsets.pop(tp, None)
                    else:
                        v = rec.decode_offset_value(value_bytes)
                        group_offsets[tp] = OffsetAndMetadata(
                            v.offset,
                            v.leader_epoch,
                            v.metadata,
                            v.commit_timestamp,
                            v.expire_timestamp,
                        )
                else:
                    metas[key.group] = (
                        None if value_bytes is None else rec.decode_group_value(value_bytes)
                    )
                    if value_bytes is not None:
                        kind_at[key.group] = (pos, "classic")
            except rec.RecordFormatError as e:
                skipped += 1
                log.warning("skipping undecodable record partition=%d error=%s", partition, e)
        if skipped:
            log.info("skipped %d records of other kinds partition=%d", skipped, partition)
        for gid, value in metas.items():
            if value is not None and kind_at.get(gid, (0, "classic"))[1] == "classic":
                self.groups[gid] = self._group_from_record(gid, value, now_ms)
        for gid, cgroup in self._load_consumer_groups(modern, now_ms).items():
            if kind_at.get(gid, (0, "consumer"))[1] == "consumer":
                self.groups[gid] = cgroup
                self._start_consumer_group(cgroup, now_ms)
        for gid, tps in offsets.items():
            if not tps:
                continue
            group = self.groups.get(gid)
            if group is None:
                group = self.groups[gid] = ClassicGroup(gid, now_ms)
            group.offsets.update(tps)
        self.loading.discard(partition)
        self.owned.add(partition)
        for group in self.groups.values():
            if isinstance(group, ClassicGroup) and self.partition_for(group.group_id) == partition:
                for member in group.members.values():
                    self._schedule_heartbeat(group, member, now_ms)
        self._ensure_retention_timer(now_ms)

    def _group_from_record(self, gid: str, v: rec.GroupValue, now_ms: int) -> ClassicGroup:
        group = ClassicGroup(gid, now_ms, S.STABLE if v.members else S.EMPTY)
        group.state_timestamp = v.current_state_timestamp if v.current_state_timestamp >= 0 else -1
        group.generation_id = v.generation
        group.protocol_type = v.protocol_type or None
        group.protocol_name = v.protocol
        for m in v.members:
            member = ClassicMember(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                m.session_timeout,
                v.protocol_type,
                [(v.protocol or "", m.subscription)],
                m.assignment,
            )
            group.add(member)
        group.protocol_type = v.protocol_type or None
        group.leader_id = v.leader if v.leader in group.members else group.leader_id
        return group

    # ==== timers ==============================================================================
    def next_deadline(self) -> int | None:
        return self.timers.next_deadline()

    def poll(self, now_ms: int) -> int:
        """Fire every timer due at ``now_ms``."""
        return self.timers.expire(now_ms)

    def _ensure_retention_timer(self, now_ms: int) -> None:
        if ("retention",) not in self.timers:
            self.timers.schedule(
                ("retention",),
                now_ms + self.config.offsets_retention_check_interval_ms,
                self._on_retention_check,
            )

    def _schedule_heartbeat(
        self, group: ClassicGroup, member: ClassicMember, now_ms: int, timeout_ms: int | None = None
    ) -> None:
        gid, mid = group.group_id, member.member_id
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self.timers.schedule(
            ("heartbeat", gid, mid),
            now_ms + timeout,
            lambda now: self._on_heartbeat_expired(gid, mid, now),
        )

    def _cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.timers.cancel(("heartbeat", group.group_id, member_id))

    # ==== helpers =============================================================================
    def _store_group(self, group: ClassicGroup, now_ms: int) -> int:
        value = rec.group_value(group.record_value())
        return self._append(group.group_id, [(rec.group_key(group.group_id), value)], now_ms)

    def _append(self, group_id: str, records: list[tuple[bytes, bytes | None]], now_ms: int) -> int:
        if not records:
            return E.none
        try:
            self.log.append(self.partition_for(group_id), records, now_ms)
        except Exception as e:  # storage or replication failure: the client retries
            log.warning("cannot append to __consumer_offsets group=%s error=%r", group_id, e)
            code = getattr(e, "error_code", None)
            if isinstance(code, int) and code:
                return append_error_to_response_error(code)
            return E.coordinator_not_available
        return E.none

    def _validate_member(self, group: ClassicGroup, member_id: str, instance_id: str | None) -> int:
        if instance_id is not None:
            existing = group.static_members.get(instance_id)
            if existing is None:
                return E.unknown_member_id
            if existing != member_id:
                return E.fenced_instance_id
        elif member_id not in group.members:
            return E.unknown_member_id
        return E.none

    def _classic_is_unused(self, group: ClassicGroup) -> bool:
        """A classic group without members, which a consumer group may replace."""
        return group.is_in(S.EMPTY, S.DEAD) and not group.members and not group.pending_members

    def _forget_classic(self, group: ClassicGroup | ConsumerGroup) -> None:
        if isinstance(group, ClassicGroup):
            for mid in list(group.members) + list(group.pending_members):
                self.timers.cancel(("heartbeat", group.group_id, mid))
            for kind in ("join", "sync"):
                self.timers.cancel((kind, group.group_id))
            self._initial_remaining.pop(group.group_id, None)

    def _maybe_remove_unused(self, group: ClassicGroup) -> None:
        """Forget a group that holds nothing (created by a join that never completed)."""
        if (
            group.is_in(S.EMPTY)
            and not group.members
            and not group.pending_members
            and not group.offsets
            and group.generation_id == 0
        ):
            self.groups.pop(group.group_id, None)

    # ==== JoinGroup ===========================================================================
    def join_group(self, r: JoinRequest, now_ms: int) -> Pending[JoinResult]:
        answer: Pending[JoinResult] = Pending()

        def fail(error: int, member_id: str = r.member_id) -> Pending[JoinResult]:
            return Pending.completed(JoinResult(error, member_id=member_id))

        if not valid_group_id(r.group_id):
            return fail(E.invalid_group_id)
        err = self.partition_error(r.group_id)
        if err:
            return fail(err)
        if not (
            self.config.min_session_timeout_ms
            <= r.session_timeout_ms
            <= self.config.max_session_timeout_ms
        ):
            return fail(E.invalid_session_timeout)
        unknown = r.member_id == ""
        group = self.groups.get(r.group_id)
        if isinstance(group, ConsumerGroup):
            if not group.is_empty():  # served by the consumer group (classic_members)
                return Pending.completed(self._classic_join_to_consumer_group(group, r, now_ms))
            # an empty consumer group becomes a classic group; its offsets carry over
            err = self._append(r.group_id, group_tombstones(group), now_ms)
            if err:
                return fail(err)
            classic = ClassicGroup(r.group_id, now_ms)
            classic.offsets = group.offsets
            self.groups[r.group_id] = group = classic
            log.info("empty consumer group=%s becomes a classic group", r.group_id)
        if group is None:
            if not unknown:
                return fail(E.unknown_member_id)
            group = self.groups[r.group_id] = ClassicGroup(r.group_id, now_ms)
        if not self._accept_joining_member(group, r.member_id):
            member = group.members.get(r.member_id)
            if member is not None:
                self._remove_member_and_update(group, member, now_ms, "group is full")
            return fail(E.group_max_size_reached, "")
        if unknown:
            self._join_new_member(group, r, answer, now_ms)
        else:
            self._join_existing_member(group, r, answer, now_ms)
        if group.is_in(S.PREPARING_REBALANCE):
            self._try_complete_join(group, now_ms)
        if (
            answer.done
            and answer.result is not None
            and answer.result.error
            not in (
                E.none,
                E.member_id_required,
            )
        ):
            self._maybe_remove_unused(group)
        return answer

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        if group.is_in(S.EMPTY, S.DEAD):
            return True
        member = group.members.get(member_id)
        if group.is_in(S.PREPARING_REBALANCE):
            return (member is not None and member.awaiting_join) or (
                group.num_awaiting_join() < self.config.max_size
            )
        return member is not None or len(group.members) < self.config.max_size

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
            group.pending_members.add(new_id)
            self.timers.schedule(
                ("heartbeat", group.group_id, new_id),
                now_ms + r.session_timeout_ms,
                lambda now, g=group.group_id, m=new_id: self._on_heartbeat_expired(g, m, now),
            )
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
            self.timers.cancel(("heartbeat", group.group_id, r.member_id))
            if r.group_instance_id is not None:  # a static member is never pending
                answer.complete(JoinResult(E.unknown_member_id, member_id=r.member_id))
                return
            self._add_member_and_rebalance(group, r.member_id, r, answer, now_ms)
            return
        err = self._validate_member(group, r.member_id, r.group_instance_id)
        if err:
            answer.complete(JoinResult(err, member_id=r.member_id))
            return
        member = group.members[r.member_id]
        if group.is_in(S.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, r, answer, now_ms)
        elif group.is_in(S.COMPLETING_REBALANCE):
            if member.matches(r.protocols):
                # it lost the JoinGroup answer: give it the current generation again
                answer.complete(self._current_generation_result(group, member))
            else:
                self._update_member_and_rebalance(group, member, r, answer, now_ms)
        elif group.is_in(S.STABLE):
            if group.is_leader(member.member_id) or not member.matches(r.protocols):
                self._update_member_and_rebalance(group, member, r, answer, now_ms)
            else:
                answer.complete(self._current_generation_result(group, member))
        else:  # Empty
            answer.complete(JoinResult(E.unknown_member_id, member_id=r.member_id))

    def _current_generation_result(self, group: ClassicGroup, member: ClassicMember) -> JoinResult:
        return JoinResult(
            E.none,
            member_id=member.member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            members=group.current_member_metadata() if group.is_leader(member.member_id) else [],
        )

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
        self._schedule_heartbeat(group, member, now_ms, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group, now_ms, f"adding member {member_id}")

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
        self._maybe_prepare_rebalance(group, now_ms, f"member {member.member_id} rejoins")

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
        old = group.members[old_id]
        # the previous incarnation is fenced: its outstanding answers say so
        old.complete_join(JoinResult(E.fenced_instance_id, member_id=old_id))
        old.complete_sync(SyncResult(E.fenced_instance_id))
        self._cancel_heartbeat(group, old_id)
        current_leader = group.leader_id
        saved = (old.protocols, old.rebalance_timeout_ms, old.session_timeout_ms)
        member = group.replace_static_member(r.group_instance_id, old_id, new_id)
        group.update_member(
            member, list(r.protocols), r.rebalance_timeout_ms, r.session_timeout_ms, answer
        )
        self._schedule_heartbeat(group, member, now_ms)
        if group.is_in(S.STABLE):
            if group.select_protocol() == group.protocol_name:
                err = self._store_group(group, now_ms)
                if err:
                    group.replace_static_member(r.group_instance_id, new_id, old_id)
                    group.update_member(member, *saved, None)
                    self._cancel_heartbeat(group, new_id)
                    self._schedule_heartbeat(group, member, now_ms)
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
                self._maybe_prepare_rebalance(group, now_ms, "static member changed protocols")
        elif group.is_in(S.COMPLETING_REBALANCE):
            # the leader may have been given the old member id: assign again
            self._prepare_rebalance(group, now_ms, "static member replaced during sync")
        # PreparingRebalance: the member now awaits the join like everyone else

    # ---- the join phase ----------------------------------------------------------------------
    def _maybe_prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, now_ms, reason)

    def _prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        if group.is_in(S.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, E.rebalance_in_progress)
        self.timers.cancel(("sync", group.group_id))
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
            delay = self.config.initial_rebalance_delay_ms
            self._initial_remaining[gid] = max(group.rebalance_timeout_ms() - delay, 0)
            self.timers.schedule(
                ("join", gid), now_ms + delay, lambda now: self._on_initial_join(gid, now)
            )
        else:
            self._initial_remaining.pop(gid, None)
            self.timers.schedule(
                ("join", gid),
                now_ms + group.rebalance_timeout_ms(),
                lambda now: self._on_join_expired(gid, now),
            )
            self._try_complete_join(group, now_ms)

    def _try_complete_join(self, group: ClassicGroup, now_ms: int) -> None:
        if group.group_id in self._initial_remaining:
            return  # the initial delay always runs its course
        if group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(group, now_ms)

    def _on_initial_join(self, gid: str, now_ms: int) -> None:
        group = self.groups.get(gid)
        if not isinstance(group, ClassicGroup) or not group.is_in(S.PREPARING_REBALANCE):
            self._initial_remaining.pop(gid, None)
            return
        remaining = self._initial_remaining.get(gid, 0)
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, remaining)
            self._initial_remaining[gid] = max(
                remaining - self.config.initial_rebalance_delay_ms, 0
            )
            self.timers.schedule(
                ("join", gid), now_ms + delay, lambda now: self._on_initial_join(gid, now)
            )
            return
        self._initial_remaining.pop(gid, None)
        self._complete_join(group, now_ms)

    def _on_join_expired(self, gid: str, now_ms: int) -> None:
        group = self.groups.get(gid)
        if isinstance(group, ClassicGroup) and group.is_in(S.PREPARING_REBALANCE):
            self._complete_join(group, now_ms)

    def _complete_join(self, group: ClassicGroup, now_ms: int) -> None:
        gid = group.group_id
        self.timers.cancel(("join", gid))
        self._initial_remaining.pop(gid, None)
        for member in group.not_yet_rejoined():
            if member.group_instance_id is None:
                self._cancel_heartbeat(group, member.member_id)
                member.complete_sync(SyncResult(E.unknown_member_id))
                group.remove(member.member_id)
        if not group.maybe_elect_new_joined_leader() and group.members:
            # nobody rejoined: wait another rebalance timeout for session expiry to clean up
            self.timers.schedule(
                ("join", gid),
                now_ms + group.rebalance_timeout_ms(),
                lambda now: self._on_join_expired(gid, now),
            )
            return
        group.init_next_generation(now_ms)
        if group.is_in(S.EMPTY):
            log.info("group=%s generation=%d is now empty", gid, group.generation_id)
            self._store_group(group, now_ms)
            return
        log.info(
            "stabilized group=%s generation=%d protocol=%s members=%d",
            gid,
            group.generation_id,
            group.protocol_name,
            len(group.members),
        )
        for member in group.members.values():
            member.complete_join(self._current_generation_result(group, member))
            self._schedule_heartbeat(group, member, now_ms)
            member.is_new = False
        self.timers.schedule(
            ("sync", gid),
            now_ms + group.rebalance_timeout_ms(),
            lambda now: self._on_sync_expired(gid, now),
        )

    def _reset_and_propagate_assignment_error(self, group: ClassicGroup, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.complete_sync(SyncResult(error))

    def _on_sync_expired(self, gid: str, now_ms: int) -> None:
        group = self.groups.get(gid)
        if not isinstance(group, ClassicGroup) or not group.is_in(S.COMPLETING_REBALANCE, S.STABLE):
            return
        if not group.pending_sync:
            return
        for mid in list(group.pending_sync):
            member = group.members.get(mid)
            if member is not None:
                self._cancel_heartbeat(group, mid)
                member.complete_sync(SyncResult(E.unknown_member_id))
                group.remove(mid)
        group.pending_sync.clear()
        self._prepare_rebalance(group, now_ms, "members did not sync in time")

    def _on_heartbeat_expired(self, gid: str, mid: str, now_ms: int) -> None:
        group = self.groups.get(gid)
        if not isinstance(group, ClassicGroup):
            return
        if mid in group.pending_members:
            group.pending_members.discard(mid)
            if group.is_in(S.PREPARING_REBALANCE):
                self._try_complete_join(group, now_ms)
            self._maybe_remove_unused(group)
            return
        member = group.members.get(mid)
        if member is None:
            return
        if not member.is_new and (member.awaiting_join or member.awaiting_sync):
            return  # members in a rebalance satisfy their heartbeats
        log.info("member=%s of group=%s failed its session timeout, removing it", mid, gid)
        self._remove_member_and_update(group, member, now_ms, "session timeout")

    def _remove_member_and_update(
        self, group: ClassicGroup, member: ClassicMember, now_ms: int, reason: str
    ) -> None:
        member.complete_join(JoinResult(E.unknown_member_id, member_id=member.member_id))
        member.complete_sync(SyncResult(E.unknown_member_id))
        self._cancel_heartbeat(group, member.member_id)
        group.remove(member.member_id)
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, now_ms, f"removing {member.member_id}: {reason}")
        elif group.is_in(S.PREPARING_REBALANCE):
            self._try_complete_join(group, now_ms)

    # ==== SyncGroup ===========================================================================
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

        if not valid_group_id(group_id):
            return fail(E.invalid_group_id)
        err = self.partition_error(group_id)
        if err == E.coordinator_load_in_progress:
            # the rebalance state is gone with the load: start over at JoinGroup
            return fail(E.rebalance_in_progress)
        if err:
            return fail(err)
        group = self.groups.get(group_id)
        if group is None or (isinstance(group, ConsumerGroup) and group.is_empty()):
            return fail(E.unknown_member_id)
        if isinstance(group, ConsumerGroup):
            return Pending.completed(
                self._classic_sync_to_consumer_group(
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
        err = self._validate_member(group, member_id, group_instance_id)
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
        self._schedule_heartbeat(group, member, now_ms)
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
            self.timers.cancel(("sync", group_id))
        return answer

    def assignment_not_replicated(
        self, group_id: str, generation_id: int, member_id: str, error: int, now_ms: int
    ) -> None:
        """The leader's SyncGroup stored the assignment, but the write did not reach the ISR
        (``error`` already mapped): as Kafka does when storing the assignment fails, clear the
        assignment and rebalance again."""
        group = self.groups.get(group_id)
        if (
            not isinstance(group, ClassicGroup)
            or group.generation_id != generation_id
            or not group.is_leader(member_id)
            or not group.is_in(S.STABLE)
        ):
            return
        self._reset_and_propagate_assignment_error(group, error)
        self._maybe_prepare_rebalance(
            group, now_ms, f"error {error} when replicating the group assignment"
        )

    def _apply_leader_assignment(
        self, group: ClassicGroup, assignments: dict[str, bytes], now_ms: int
    ) -> None:
        previous = {mid: m.assignment for mid, m in group.members.items()}
        for mid, member in group.members.items():
            # members the leader left out get an empty assignment; unknown ids are ignored
            member.assignment = assignments.get(mid, b"")
        err = self._store_group(group, now_ms)
        if err:
            for mid, member in group.members.items():
                member.assignment = previous[mid]
            self._reset_and_propagate_assignment_error(group, err)
            self._maybe_prepare_rebalance(group, now_ms, "storing the assignment failed")
            return
        group.transition(S.STABLE, now_ms)
        for member in group.members.values():
            member.complete_sync(
                SyncResult(E.none, group.protocol_type, group.protocol_name, member.assignment)
            )

    # ==== Heartbeat ===========================================================================
    def heartbeat(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        now_ms: int,
    ) -> int:
        if not valid_group_id(group_id):
            return E.invalid_group_id
        err = self.partition_error(group_id)
        if err == E.coordinator_load_in_progress:
            return E.none  # the group is still loading: answer blindly
        if err:
            return err
        group = self.groups.get(group_id)
        if group is None:
            return E.unknown_member_id
        if isinstance(group, ConsumerGroup):
            return self._classic_heartbeat_to_consumer_group(
                group, generation_id, member_id, group_instance_id, now_ms
            )
        if group.is_in(S.DEAD):
            return E.coordinator_not_available
        err = self._validate_member(group, member_id, group_instance_id)
        if err:
            return err
        if generation_id != group.generation_id:
            return E.illegal_generation
        if group.is_in(S.EMPTY):
            return E.unknown_member_id
        self._schedule_heartbeat(group, group.members[member_id], now_ms)
        if group.is_in(S.PREPARING_REBALANCE):
            return E.rebalance_in_progress
        return E.none

    # ==== LeaveGroup ==========================================================================
    def leave_group(
        self, group_id: str, members: list[tuple[str, str | None]], now_ms: int
    ) -> tuple[int, list[int]]:
        """Return (group-level error, one error per leaving member)."""
        if not valid_group_id(group_id):
            return E.invalid_group_id, []
        err = self.partition_error(group_id)
        if err:
            return err, []
        group = self.groups.get(group_id)
        if group is None:
            return E.none, [E.unknown_member_id] * len(members)
        if isinstance(group, ConsumerGroup):
            return self._classic_leave_to_consumer_group(group, members, now_ms)
        if group.is_in(S.DEAD):
            return E.coordinator_not_available, []
        errors = []
        for member_id, instance_id in members:
            if instance_id is None:
                if member_id in group.pending_members:
                    group.pending_members.discard(member_id)
                    self.timers.cancel(("heartbeat", group_id, member_id))
                    if group.is_in(S.PREPARING_REBALANCE):
                        self._try_complete_join(group, now_ms)
                    errors.append(E.none)
                    continue
                target = member_id
            else:
                target = group.static_members.get(instance_id)
                if target is None:
                    errors.append(E.unknown_member_id)
                    continue
                if member_id and member_id != target:
                    errors.append(E.fenced_instance_id)
                    continue
            member = group.members.get(target)
            if member is None:
                errors.append(E.unknown_member_id)
                continue
            log.info("member=%s leaves group=%s", target, group_id)
            self._remove_member_and_update(group, member, now_ms, "the member left the group")
            errors.append(E.none)
        return E.none, errors

    # ==== offsets =============================================================================
    def _validate_offset_commit(
        self, group: ClassicGroup, generation_id: int, member_id: str, instance_id: str | None
    ) -> int:
        if group.is_in(S.DEAD):
            return E.coordinator_not_available
        if generation_id < 0 and group.is_in(S.EMPTY):
            return E.none  # a simple consumer or an admin client
        if generation_id >= 0 or member_id or instance_id is not None:
            err = self._validate_member(group, member_id, instance_id)
            if err:
                return err
            if generation_id != group.generation_id:
                return E.illegal_generation
        elif not group.is_in(S.EMPTY):
            return E.unknown_member_id
        if group.is_in(S.COMPLETING_REBALANCE):
            return E.rebalance_in_progress
        return E.none

    @staticmethod
    def _validate_consumer_commit(
        group: ConsumerGroup, member_epoch: int, member_id: str, api_version: int
    ) -> int:
        """Kafka's ConsumerGroup.validateOffsetCommit: an epoch below zero is an admin client or
        a simple consumer, allowed while the group is empty; members of the consumer protocol
        must use v9+ and commit at their current member epoch (else STALE_MEMBER_EPOCH), members
        of the classic protocol with their generation = member epoch (else ILLEGAL_GENERATION)."""
        if member_epoch < 0 and group.is_empty():
            return E.none
        member = group.members.get(member_id)
        if member is None:
            return E.unknown_member_id
        if member.classic is None and api_version < 9:
            return E.unsupported_version
        if member_epoch != member.member_epoch:
            return E.illegal_generation if member.classic is not None else E.stale_member_epoch
        return E.none

    def commit_offsets(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: dict[tuple[str, int], CommitOffset],
        now_ms: int,
        *,
        retention_ms: int = -1,
        api_version: int = 9,
    ) -> dict[tuple[str, int], int]:
        """Commit offsets; return the error of each partition."""

        def all_(error: int) -> dict[tuple[str, int], int]:
            return dict.fromkeys(offsets, error)

        if not valid_group_id(group_id):
            return all_(E.invalid_group_id)
        err = self.partition_error(group_id)
        if err:
            return all_(err)
        group = self.groups.get(group_id)
        created = False
        if group is None:
            if generation_id >= 0:
                return all_(E.group_id_not_found if api_version >= 9 else E.illegal_generation)
            group = self.groups[group_id] = ClassicGroup(group_id, now_ms)
            created = True
        elif isinstance(group, ConsumerGroup):
            err = self._validate_consumer_commit(group, generation_id, member_id, api_version)
            if err:
                return all_(err)
        else:
            err = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
            if err:
                return all_(err)
            classic_member = group.members.get(member_id)
            if classic_member is not None and generation_id >= 0:
                self._schedule_heartbeat(group, classic_member, now_ms)
        result: dict[tuple[str, int], int] = {}
        records: list[tuple[bytes, bytes | None]] = []
        updates: dict[tuple[str, int], OffsetAndMetadata] = {}
        expire = now_ms + retention_ms if retention_ms >= 0 else -1
        for (topic, partition), c in offsets.items():
            metadata = c.metadata or ""
            if len(metadata.encode("utf-8")) > self.config.offset_metadata_max_bytes:
                result[(topic, partition)] = E.offset_metadata_too_large
                continue
            om = OffsetAndMetadata(c.offset, c.leader_epoch, metadata, now_ms, expire)
            updates[(topic, partition)] = om
            records.append(
                (
                    rec.offset_key(group_id, topic, partition),
                    rec.offset_value(
                        rec.OffsetValue(om.offset, om.leader_epoch, metadata, now_ms, expire)
                    ),
                )
            )
        err = self._append(group_id, records, now_ms)
        if err:
            if created:
                self.groups.pop(group_id, None)
            for tp in updates:
                result[tp] = err
            return result
        group.offsets.update(updates)
        for tp in updates:
            result[tp] = E.none
        return result

    def fetch_offsets(
        self,
        group_id: str,
        topics: list[tuple[str, list[int]]] | None,
        require_stable: bool = False,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[int, list[tuple[str, int, OffsetAndMetadata | None]]]:
        """(group error, [(topic, partition, committed or None)]); topics None means all.

        ``require_stable`` matters only with pending transactional commits, which do not exist
        before the transaction coordinator does. ``member_id``/``member_epoch`` (OffsetFetch v9)
        are checked for consumer groups, as Kafka does: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH."""
        if not valid_group_id(group_id):
            return E.invalid_group_id, []
        err = self.partition_error(group_id)
        if err:
            return err, []
        group = self.groups.get(group_id)
        if isinstance(group, ConsumerGroup) and not (member_epoch < 0 and member_id is None):
            member = group.members.get(member_id or "")
            if member is None:
                return E.unknown_member_id, []
            if member.member_epoch != member_epoch:
                classic = member.classic is not None
                return (E.illegal_generation if classic else E.stale_member_epoch), []
        if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
            committed = {}
        else:
            committed = group.offsets
        if topics is None:
            return E.none, [(t, p, om) for (t, p), om in sorted(committed.items())]
        return E.none, [(t, p, committed.get((t, p))) for t, parts in topics for p in parts]

    def delete_offsets(
        self, group_id: str, partitions: list[tuple[str, int]], now_ms: int
    ) -> tuple[int, dict[tuple[str, int], int]]:
        if not valid_group_id(group_id):
            return E.invalid_group_id, {}
        err = self.partition_error(group_id)
        if err:
            return err, {}
        group = self.groups.get(group_id)
        if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
            return E.group_id_not_found, {}
        if isinstance(group, ConsumerGroup):
            subscribed = group.subscribed_topic_names(self._regex_topics)

            def is_subscribed(topic: str) -> bool:
                return topic in subscribed
        else:
            if not group.is_in(S.EMPTY) and group.protocol_type != "consumer":
                return E.non_empty_group, {}
            is_subscribed = group.is_subscribed_to
        result: dict[tuple[str, int], int] = {}
        records: list[tuple[bytes, bytes | None]] = []
        for topic, partition in partitions:
            if is_subscribed(topic):
                result[(topic, partition)] = E.group_subscribed_to_topic
                continue
            result[(topic, partition)] = E.none
            if (topic, partition) in group.offsets:
                records.append((rec.offset_key(group_id, topic, partition), None))
        err = self._append(group_id, records, now_ms)
        if err:
            return err, {}
        for tp, e in result.items():
            if e == E.none:
                group.offsets.pop(tp, None)
        return E.none, result

    # ==== admin ===============================================================================
    def list_groups(
        self, states: set[str] | None = None, types: set[str] | None = None
    ) -> tuple[int, list[ListedGroup]]:
        states = {s.lower() for s in states} if states else None
        types = {t.lower() for t in types} if types else None
        out = []
        for group in self.groups.values():
            if self.partition_for(group.group_id) not in self.owned:
                continue
            if isinstance(group, ConsumerGroup):
                state = group.state
            elif group.is_in(S.DEAD):
                continue
            else:
                state = group.state.value
            if states is not None and state.lower() not in states:
                continue
            if types is not None and group.group_type not in types:
                continue
            out.append(
                ListedGroup(group.group_id, group.protocol_type or "", state, group.group_type)
            )
        err = E.coordinator_load_in_progress if self.loading else E.none
        return err, out

    def describe_group(self, group_id: str) -> GroupDescription:
        if not valid_group_id(group_id):
            return GroupDescription(E.invalid_group_id, group_id)
        err = self.partition_error(group_id)
        if err:
            return GroupDescription(err, group_id)
        group = self.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            return GroupDescription(
                E.group_id_not_found, group_id, message=f"Group {group_id} is not a classic group."
            )
        if group is None or group.is_in(S.DEAD):
            return GroupDescription(E.group_id_not_found, group_id)
        stable = group.is_in(S.STABLE)
        protocol = group.protocol_name if stable else None
        return GroupDescription(
            E.none,
            group_id,
            group.state.value,
            group.protocol_type or "",
            protocol or "",
            [
                MemberDescription(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.metadata_for(protocol) if protocol else b"",
                    m.assignment if stable else b"",
                )
                for m in group.members.values()
            ],
        )

    def delete_groups(self, group_ids: list[str], now_ms: int) -> dict[str, int]:
        result: dict[str, int] = {}
        for gid in group_ids:
            if not valid_group_id(gid):
                result[gid] = E.invalid_group_id
                continue
            err = self.partition_error(gid)
            if err:
                result[gid] = err
                continue
            group = self.groups.get(gid)
            if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
                result[gid] = E.group_id_not_found
                continue
            if not (group.is_empty() if isinstance(group, ConsumerGroup) else group.is_in(S.EMPTY)):
                result[gid] = E.non_empty_group
                continue
            records: list[tuple[bytes, bytes | None]] = [
                (rec.offset_key(gid, t, p), None) for t, p in group.offsets
            ]
            if isinstance(group, ConsumerGroup):
                records += group_tombstones(group)
            else:
                records.append((rec.group_key(gid), None))
            err = self._append(gid, records, now_ms)
            if err:
                result[gid] = err
                continue
            self._drop_group(group, now_ms)
            result[gid] = E.none
        return result

    def _drop_group(self, group: ClassicGroup | ConsumerGroup, now_ms: int) -> None:
        if isinstance(group, ConsumerGroup):
            for mid in list(group.members):
                self._cancel_consumer_timers(group.group_id, mid)
            group.offsets.clear()
            self.groups.pop(group.group_id, None)
            return
        group.transition(S.DEAD, now_ms)
        for mid in list(group.members) + list(group.pending_members):
            self.timers.cancel(("heartbeat", group.group_id, mid))
        for kind in ("join", "sync"):
            self.timers.cancel((kind, group.group_id))
        self._initial_remaining.pop(group.group_id, None)
        group.offsets.clear()
        self.groups.pop(group.group_id, None)

    # ==== offset expiry =======================================================================
    def _on_retention_check(self, now_ms: int) -> None:
        self.expire_offsets(now_ms)
        self.timers.schedule(
            ("retention",),
            now_ms + self.config.offsets_retention_check_interval_ms,
            self._on_retention_check,
        )

    def _expire_consumer_offsets(self, group: ConsumerGroup, now_ms: int) -> int:
        """Offsets of topics no member subscribes to expire offsets.retention.minutes after their
        commit (Kafka's consumer-group rule); an empty group with no offsets left is removed."""
        subscribed = group.subscribed_topic_names(self._regex_topics)
        expired = []
        for (topic, partition), om in group.offsets.items():
            if topic in subscribed:
                continue
            if om.expire_timestamp >= 0:
                gone = now_ms >= om.expire_timestamp
            else:
                gone = now_ms - om.commit_timestamp >= self.config.offsets_retention_ms
            if gone:
                expired.append((topic, partition))
        records: list[tuple[bytes, bytes | None]] = [
            (rec.offset_key(group.group_id, t, p), None) for t, p in expired
        ]
        drop = group.is_empty() and len(expired) == len(group.offsets)
        if drop:
            records += group_tombstones(group)
        if not records or self._append(group.group_id, records, now_ms):
            return 0
        for tp in expired:
            group.offsets.pop(tp, None)
        if drop:
            log.info("removed empty consumer group=%s", group.group_id)
            self._drop_group(group, now_ms)
        return len(expired)

    def expire_offsets(self, now_ms: int) -> int:
        """Remove expired offsets (tombstones) and then groups left empty; return how many
        offsets expired."""
        retention = self.config.offsets_retention_ms
        total = 0
        for group in list(self.groups.values()):
            if self.partition_for(group.group_id) not in self.owned:
                continue
            if isinstance(group, ConsumerGroup):
                total += self._expire_consumer_offsets(group, now_ms)
                continue
            subscribed: set[str] | None = None
            if group.protocol_type is not None:
                if group.is_in(S.EMPTY):
                    state_ts = group.state_timestamp

                    def base(om, ts=state_ts):  # noqa: E306
                        return ts if ts >= 0 else om.commit_timestamp
                elif group.protocol_type == "consumer" and group.is_in(S.STABLE):
                    subscribed = group.subscribed_topics()
                    if subscribed is None:
                        continue

                    def base(om):  # noqa: E306
                        return om.commit_timestamp
                else:
                    continue
            else:

                def base(om):  # noqa: E306
                    return om.commit_timestamp

            expired = []
            for (topic, partition), om in group.offsets.items():
                if subscribed is not None and topic in subscribed:
                    continue
                if om.expire_timestamp >= 0:
                    gone = now_ms >= om.expire_timestamp
                else:
                    gone = now_ms - base(om) >= retention
                if gone:
                    expired.append((topic, partition))
            records: list[tuple[bytes, bytes | None]] = [
                (rec.offset_key(group.group_id, t, p), None) for t, p in expired
            ]
            drop = group.is_in(S.EMPTY) and not group.members and len(expired) == len(group.offsets)
            drop = drop and not group.pending_members
            if drop:
                records.append((rec.group_key(group.group_id), None))
            if not records or self._append(group.group_id, records, now_ms):
                continue
            for tp in expired:
                group.offsets.pop(tp, None)
            total += len(expired)
            if expired:
                log.info("expired offsets group=%s count=%d", group.group_id, len(expired))
            if drop:
                log.info("removed empty group=%s", group.group_id)
                self._drop_group(group, now_ms)
        return total
