"""The broker process (Kafka's ``kafka.server`` and ``kafka.network``): everything that runs on
trio. The sans-io core it drives lives beside it (protocol, storage, metadata, coordinator,
security, replication); here each job has its subpackage:

- ``network/``: listeners, connections and their channels, connection limits, peer connections;
- ``apis/``: one handler per Kafka API, registered in ``registry.py`` and called with a
  ``request_context.RequestContext``;
- ``config/``: broker and topic configs, dynamic changes and their notifications;
- ``security/``: the SASL stage, authorization for handlers, ACL and credential caches;
- ``replication/``: replica manager, follower fetchers, registration, the purgatory;
- ``coordinator/``: the group and transaction coordinators' topics, timers and markers;
- ``log_manager/``: flushing, retention, cleaning and log directory failures.

``broker.py`` wires them together; ``topics.py``, ``fetch_sessions.py``, ``metadata_cache.py``
and ``quota_enforcement.py`` are broker-wide services the handlers share.
"""
