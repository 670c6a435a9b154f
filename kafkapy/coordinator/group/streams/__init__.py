"""Streams groups (KIP-1071) in the group coordinator: the group type Kafka Streams uses with
``group.protocol=streams``, where the broker assigns the application's tasks.

Modules: ``model`` (the group, its members, the topology, task tuples), ``request`` (a
heartbeat request, its answer and the request's own rules), ``configure`` (the topology against
the topics: task counts, internal topics to create, the statuses), ``assignor`` (the sticky task
assignor: active and standby tasks), ``reconcile`` (a member's next assignment, revoking before
assigning), ``heartbeat`` (StreamsGroupHeartbeat, sessions, fencing), ``admin``
(StreamsGroupDescribe, and what OffsetCommit/OffsetFetch check of streams members).

The package imports none of them, so ``state`` can import ``model`` without a cycle.
"""
