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
``txn_offsets``             TxnOffsetCommit and the transaction markers' group hook
``offset_expiry``           offsets.retention.minutes
``admin``                   ListGroups, DescribeGroups, ConsumerGroupDescribe, DeleteGroups
``streams``                 StreamsGroupHeartbeat, StreamsGroupDescribe (KIP-1071)
``share`` (coordinator.share) ShareGroupHeartbeat, ShareGroupDescribe (share groups, KIP-932)
==========================  ===============================================================

The request and answer types are re-exported here for the server's API modules.
"""

from __future__ import annotations

import functools

from ..share.config import ShareSettings
from ..share.groups import ShareGroups
from .admin import (
    ConsumerDescription,
    GroupAdmin,
    GroupDescription,
    ListedGroup,
    MemberDescription,
)
from .classic import JoinRequest
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
from .offsets import CommitOffset, GroupOffsets
from .state import (
    CoordinatorState,
    Group,
    OffsetsLog,
    append_error_to_response_error,
    valid_group_id,
)
from .streams import admin as streams_admin
from .streams.heartbeat import StreamsHeartbeat
from .timers import Timers
from .topics import TopicsView
from .txn_offsets import GroupTxnOffsets

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
    """The parts, wired over one shared state; each API method is the bound method of the part
    that serves it (see the table above), so the signatures live in one place."""

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
        admin = GroupAdmin(state, rebalance, sessions)
        expiry = OffsetExpiry(state, admin.drop_group)
        loader = PartitionLoader(state, rebalance, sessions, expiry)
        classic_sync = ClassicSync(state, rebalance, classic_members)
        classic_heartbeat = ClassicHeartbeat(state, rebalance, classic_members)
        offsets = GroupOffsets(state, rebalance)

        # ownership and loading
        self.partition_for = state.partition_for
        self.partition_error = state.partition_error
        self.begin_loading = loader.begin_loading
        self.add_empty_partitions = loader.add_empty_partitions
        self.load_partition = loader.load_partition
        # classic groups
        self.join_group = ClassicJoin(state, rebalance, classic_members).join_group
        self.sync_group = classic_sync.sync_group
        self.assignment_not_replicated = classic_sync.assignment_not_replicated
        self.heartbeat = classic_heartbeat.heartbeat
        self.leave_group = classic_heartbeat.leave_group
        # consumer groups (KIP-848)
        self.consumer_group_heartbeat = ConsumerGroupHeartbeat(
            state, updates, sessions, fencing, migration, rebalance
        ).heartbeat
        self.consumer_group_describe = admin.consumer_group_describe
        # offsets
        self.commit_offsets = offsets.commit
        self.fetch_offsets = offsets.fetch
        self.delete_offsets = offsets.delete
        self.expire_offsets = expiry.expire_offsets
        txn_offsets = GroupTxnOffsets(state)
        self.commit_txn_offsets = txn_offsets.commit
        self.complete_txn_offsets = txn_offsets.complete
        self.unstable_offsets = txn_offsets.unstable_offsets
        # streams groups (KIP-1071)
        self.streams_group_heartbeat = StreamsHeartbeat(state).heartbeat
        self.streams_group_describe = functools.partial(streams_admin.describe, state)
        # admin
        self.list_groups = admin.list_groups
        self.describe_group = admin.describe_group
        self.delete_groups = admin.delete_groups
        # share groups (KIP-932), in the same namespace; the server sets their settings
        self.share = ShareGroups(state, lambda _group_id: ShareSettings())

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

    # ==== timers ==============================================================================
    def next_deadline(self) -> int | None:
        return self.state.timers.next_deadline()

    def poll(self, now_ms: int) -> int:
        """Fire every timer due at ``now_ms``."""
        return self.state.timers.expire(now_ms)
