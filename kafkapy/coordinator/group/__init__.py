"""The group coordinator: classic consumer groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup),
committed offsets, and their storage as records of the internal topic __consumer_offsets.

Modules, each one job; ``coordinator`` wires them and none imports it back. The parts are
objects over one shared ``state.CoordinatorState`` (composition, no mixins):

- models and codecs (pure): ``classic`` (a classic group, its members, the state machine as a
  transition table), ``consumer`` (a consumer-protocol (KIP-848) group, its members,
  reconciliation), ``records`` (__consumer_offsets keys and values, per
  protocol_specs/consumer_offsets.json), ``consumer_records`` (a consumer group's records),
  ``embedded`` (the 'consumer' embedded protocol), ``assignors`` (uniform, range),
  ``partitioning`` (which partition owns a group), ``member_checks`` (member, generation and
  epoch fencing).
- plumbing: ``config``, ``state`` (groups, ownership, timers, the log interface), ``topics`` (the
  view of topics), ``timers`` (the deadline table), ``pending`` (answers completed later).
- classic groups: ``classic_join`` (JoinGroup), ``classic_sync`` (SyncGroup),
  ``classic_heartbeat`` (Heartbeat, LeaveGroup), ``classic_rebalance`` (the rebalance and its
  timers).
- consumer groups: ``modern`` (ConsumerGroupHeartbeat), ``member_update`` (a member's change:
  group epoch, target assignment, reconciliation), ``consumer_sessions`` (members' deadlines),
  ``consumer_fencing`` (removing a member), ``classic_members`` (classic-protocol members inside
  a consumer group), ``migration`` (online upgrade and downgrade,
  group.consumer.migration.policy).
- offsets and the rest: ``offsets`` (OffsetCommit/OffsetFetch/OffsetDelete; where transactional
  commits will go), ``offset_expiry``, ``admin`` (ListGroups, DescribeGroups,
  ConsumerGroupDescribe, DeleteGroups), ``loading`` (replaying a partition).
- ``coordinator``: ``GroupCoordinator``, one method per API, delegating to the parts.

Each group records its kind (``group_type``: "classic" or "consumer"); both kinds live in the
same coordinator and the same __consumer_offsets partitions, and a group with members changes
kind online when the migration policy allows it.
"""

from .coordinator import CoordinatorConfig, GroupCoordinator, OffsetsLog
from .partitioning import java_string_hash, partition_for
from .pending import Pending

__all__ = [
    "CoordinatorConfig",
    "GroupCoordinator",
    "OffsetsLog",
    "Pending",
    "java_string_hash",
    "partition_for",
]
