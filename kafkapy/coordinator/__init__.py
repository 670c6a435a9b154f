"""Coordinators: the group coordinator (kafkapy.coordinator.group), later the transaction
coordinator.

Everything here is sans-io: no sockets, no trio, no sleeping. Time comes in as ``now_ms``
arguments; answers that must wait (JoinGroup, SyncGroup) are returned as small future-like
``Pending`` objects that the coordinator completes later; timers are kept in a table the server
asks for its next deadline. Durable state goes through a narrow log interface (append records to
a partition of an internal topic), which the server implements on top of kafkapy.storage.
"""
