"""The group coordinator (sans-io): one object, one method per group API, over parts that each
do one job.

``GroupCoordinator`` owns the ``CoordinatorState`` (groups of the __consumer_offsets partitions
this broker leads, ownership, timers, the log) and wires the parts that work on it; it holds no
group logic itself. The server calls one method per API with ``now_ms``; methods either answer
at once or return a ``Pending`` that a later call (another member's join, a timer) completes.
Timers live in ``timers``; the server sleeps until ``next_deadline()`` and then calls
``poll(now_ms)``.

State changes that must survive a restart are appended to __consumer_offsets through
``OffsetsLog.append`` *before* the in-memory state changes and before the answer is given, so an
acknowledged commit is on the log. Loading a partition replays its records (``load_partition``);
until then every group of that partition answers COORDINATOR_LOAD_IN_PROGRESS.

The rules follow Apache Kafka 4.0's group coordinator (GroupMetadataManager, ClassicGroup,
ConsumerGroup); which part serves what:

==========================  ===============================================================
part                        serves
==========================  ===============================================================
``loading``                 begin_loading, add_empty_partitions, load_partition
``classic_join``            JoinGroup
``classic_sync``            SyncGroup (and a leader assignment that did not replicate)
``classic_heartbeat``       Heartbeat, LeaveGroup
``classic_rebalance``       the classic state machine and its timers
``classic_members``         classic APIs aimed at a non-empty consumer group
``modern``                  ConsumerGroupHeartbeat
``member_update``           a consumer group member's change (epochs, target, reconcile)
``consumer_sessions``       consumer members' deadlines; ``consumer_fencing`` what follows
``migration``               online upgrade/downgrade (group.consumer.migration.policy)
``offsets``                 OffsetCommit, OffsetFetch, OffsetDelete
``offset_expiry``           offsets.retention.minutes
``admin``                   ListGroups, DescribeGroups, ConsumerGroupDescribe, DeleteGroups
==========================  ===============================================================

The request and answer types are re-exported here for the server's API modules.
"""

from __future__ import annotations

from collections.abc import Iterable

from .admin import ConsumerDescription, GroupAdmin, GroupDescription, ListedGroup
from .admin import MemberDescription as MemberDescription
from .classic import JoinRequest, JoinResult, OffsetAndMetadata, SyncResult
from .classic_heartbeat import ClassicHeartbeat
from .classic_join import ClassicJoin
from .classic_members import ClassicMembersOfConsumerGroups
from .classic_rebalance import ClassicRebalance
from .classic_sync import ClassicSync
from .config import CoordinatorConfig
from .consumer_fencing import ConsumerFencing
from .consumer_sessions import ConsumerSessions
from .loading import PartitionLoader
from .member_update import MemberUpdates
from .migration import Migration
from .modern import ConsumerGroupHeartbeat, HeartbeatRequest, HeartbeatResult
from .offset_expiry import OffsetExpiry
from .offsets import CommitOffset, GroupOffsets, TopicPartition
from .pending import Pending
from .state import (
    CoordinatorState,
    Group,
    OffsetsLog,
    append_error_to_response_error,
    valid_group_id,
)
from .timers import Timers
from .topics import TopicsView

__all__ = [
    "CommitOffset",
    "ConsumerDescription",
    "CoordinatorConfig",
    "GroupCoordinator",
    "GroupDescription",
    "HeartbeatRequest",
    "HeartbeatResult",
    "JoinRequest",
    "ListedGroup",
    "MemberDescription",
    "OffsetsLog",
    "append_error_to_response_error",
    "valid_group_id",
]


class GroupCoordinator:
    def __init__(
        self, config: CoordinatorConfig, log_: OffsetsLog, topics: TopicsView | None = None
    ) -> None:
        state = self.state = CoordinatorState(config, log_, topics)
        rebalance = ClassicRebalance(state)
        sessions = ConsumerSessions(state)
        migration = Migration(state, rebalance, sessions)
        fencing = ConsumerFencing(state, sessions, migration)
        sessions.fence = fencing.fence_member
        updates = MemberUpdates(state, sessions)
        classic_members = ClassicMembersOfConsumerGroups(state, updates, sessions)
        self._admin = GroupAdmin(state, rebalance, sessions)
        self._expiry = OffsetExpiry(state, self._admin.drop_group)
        self._loader = PartitionLoader(state, rebalance, sessions, self._expiry)
        self._join = ClassicJoin(state, rebalance, classic_members)
        self._sync = ClassicSync(state, rebalance, classic_members)
        self._heartbeat = ClassicHeartbeat(state, rebalance, classic_members)
        self._consumer_heartbeat = ConsumerGroupHeartbeat(
            state, updates, sessions, fencing, migration, rebalance
        )
        self._offsets = GroupOffsets(state, rebalance)

    # ==== the shared state ====================================================================
    @property
    def config(self) -> CoordinatorConfig:
        return self.state.config

    @property
    def log(self) -> OffsetsLog:
        return self.state.log

    @property
    def topics(self) -> TopicsView:
        return self.state.topics

    @property
    def groups(self) -> dict[str, Group]:
        return self.state.groups

    @property
    def timers(self) -> Timers:
        return self.state.timers

    @property
    def owned(self) -> set[int]:
        return self.state.owned

    @property
    def loading(self) -> set[int]:
        return self.state.loading

    def partition_for(self, group_id: str) -> int:
        return self.state.partition_for(group_id)

    def partition_error(self, group_id: str) -> int:
        return self.state.partition_error(group_id)

    # ==== ownership and loading ===============================================================
    def begin_loading(self, partitions: Iterable[int]) -> None:
        self._loader.begin_loading(partitions)

    def add_empty_partitions(self, partitions: Iterable[int], now_ms: int) -> None:
        """Partitions just created: nothing to load."""
        self._loader.add_empty_partitions(partitions, now_ms)

    def load_partition(
        self, partition: int, records: Iterable[tuple[bytes, bytes | None]], now_ms: int
    ) -> None:
        """Replay a partition's records (in log order) and start serving its groups."""
        self._loader.load_partition(partition, records, now_ms)

    # ==== timers ==============================================================================
    def next_deadline(self) -> int | None:
        return self.state.timers.next_deadline()

    def poll(self, now_ms: int) -> int:
        """Fire every timer due at ``now_ms``."""
        return self.state.timers.expire(now_ms)

    # ==== classic groups ======================================================================
    def join_group(self, r: JoinRequest, now_ms: int) -> Pending[JoinResult]:
        return self._join.join_group(r, now_ms)

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
        return self._sync.sync_group(
            group_id,
            generation_id,
            member_id,
            group_instance_id,
            assignments,
            now_ms,
            protocol_type,
            protocol_name,
        )

    def assignment_not_replicated(
        self, group_id: str, generation_id: int, member_id: str, error: int, now_ms: int
    ) -> None:
        self._sync.assignment_not_replicated(group_id, generation_id, member_id, error, now_ms)

    def heartbeat(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        now_ms: int,
    ) -> int:
        return self._heartbeat.heartbeat(
            group_id, generation_id, member_id, group_instance_id, now_ms
        )

    def leave_group(
        self, group_id: str, members: list[tuple[str, str | None]], now_ms: int
    ) -> tuple[int, list[int]]:
        """Return (group-level error, one error per leaving member)."""
        return self._heartbeat.leave_group(group_id, members, now_ms)

    # ==== consumer groups (KIP-848) ===========================================================
    def consumer_group_heartbeat(self, r: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        return self._consumer_heartbeat.heartbeat(r, now_ms)

    def consumer_group_describe(self, group_id: str) -> ConsumerDescription:
        return self._admin.consumer_group_describe(group_id)

    # ==== offsets =============================================================================
    def commit_offsets(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: dict[TopicPartition, CommitOffset],
        now_ms: int,
        *,
        retention_ms: int = -1,
        api_version: int = 9,
    ) -> dict[TopicPartition, int]:
        """Commit offsets; return the error of each partition."""
        return self._offsets.commit(
            group_id,
            generation_id,
            member_id,
            group_instance_id,
            offsets,
            now_ms,
            retention_ms=retention_ms,
            api_version=api_version,
        )

    def fetch_offsets(
        self,
        group_id: str,
        topics: list[tuple[str, list[int]]] | None,
        require_stable: bool = False,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[int, list[tuple[str, int, OffsetAndMetadata | None]]]:
        """(group error, [(topic, partition, committed or None)]); topics None means all."""
        return self._offsets.fetch(group_id, topics, require_stable, member_id, member_epoch)

    def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition], now_ms: int
    ) -> tuple[int, dict[TopicPartition, int]]:
        return self._offsets.delete(group_id, partitions, now_ms)

    def expire_offsets(self, now_ms: int) -> int:
        """Remove expired offsets (tombstones) and then groups left empty; return how many
        offsets expired."""
        return self._expiry.expire_offsets(now_ms)

    # ==== admin ===============================================================================
    def list_groups(
        self, states: set[str] | None = None, types: set[str] | None = None
    ) -> tuple[int, list[ListedGroup]]:
        return self._admin.list_groups(states, types)

    def describe_group(self, group_id: str) -> GroupDescription:
        return self._admin.describe_group(group_id)

    def delete_groups(self, group_ids: list[str], now_ms: int) -> dict[str, int]:
        return self._admin.delete_groups(group_ids, now_ms)
