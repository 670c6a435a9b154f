"""The group coordinator: classic consumer groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup),
committed offsets, and their storage as records of the internal topic __consumer_offsets.

Modules:

- ``records``: __consumer_offsets keys and values, per protocol_specs/consumer_offsets.json.
- ``partitioning``: which __consumer_offsets partition (and so which broker) owns a group.
- ``pending``: the future-like answers the coordinator completes later.
- ``timers``: the deadline table (session, rebalance, initial delay, sync, offset expiry).
- ``classic``: a classic group and its members, with the state machine as a transition table.
- ``consumer``: a consumer-protocol (KIP-848) group, its members and reconciliation.
- ``consumer_records``: the __consumer_offsets records of a consumer-protocol group.
- ``embedded``: the 'consumer' embedded protocol (JoinGroup subscriptions, SyncGroup assignments).
- ``assignors``: the server-side assignors of the consumer protocol, uniform and range.
- ``modern``: the ConsumerGroupHeartbeat/ConsumerGroupDescribe operations (a coordinator mixin).
- ``classic_members``: JoinGroup/SyncGroup/Heartbeat/LeaveGroup of members that still use the
  classic protocol inside a consumer group (a coordinator mixin).
- ``migration``: online upgrade and downgrade between the two kinds
  (group.consumer.migration.policy; a coordinator mixin).
- ``coordinator``: the operations behind each API, loading, expiry.

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
