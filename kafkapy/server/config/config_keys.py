"""Which broker config keys kafkapy knows (sans-io): :data:`OPTIONS` maps each key read as is
to its BrokerConfig field and value parser; :data:`SPECIAL_KEYS` are resolved by hand
(precedence rules, aliases); :data:`KNOWN_UNUSED_KEYS` and :data:`KNOWN_PREFIXES` are Kafka's
other documented keys (3.x's among them), accepted silently; so is every broker config of Kafka
4.4's definition table (server/config/config_definitions.py). :func:`is_known_key` tells the rest
apart (the broker warns about them once each)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .config_values import (
    choice,
    int_parser,
    long_parser,
    optional_str,
    parse_assignors,
    parse_bool,
    parse_cleanup_policy,
    parse_connection_overrides,
)

# key -> (field name, parser). Fields not listed here are derived (see from_properties).
OPTIONS: dict[str, tuple[str, Callable[[str, str], Any]]] = {
    "num.partitions": ("num_partitions", int_parser(1)),
    "default.replication.factor": ("default_replication_factor", int_parser(1)),
    "auto.create.topics.enable": ("auto_create_topics_enable", parse_bool),
    "delete.topic.enable": ("delete_topic_enable", parse_bool),
    "log.segment.bytes": ("log_segment_bytes", int_parser(14)),
    "log.index.interval.bytes": ("log_index_interval_bytes", int_parser(0)),
    "log.index.size.max.bytes": ("log_index_size_max_bytes", int_parser(4)),
    "message.max.bytes": ("message_max_bytes", int_parser(0)),
    "socket.request.max.bytes": ("socket_request_max_bytes", int_parser(1)),
    "socket.send.buffer.bytes": ("socket_send_buffer_bytes", int_parser()),
    "socket.receive.buffer.bytes": ("socket_receive_buffer_bytes", int_parser()),
    "fetch.max.bytes": ("fetch_max_bytes", int_parser(0)),
    "max.incremental.fetch.session.cache.slots": (
        "max_incremental_fetch_session_cache_slots",
        int_parser(0),
    ),
    "log.flush.interval.messages": ("log_flush_interval_messages", long_parser(1)),
    "log.flush.scheduler.interval.ms": ("log_flush_scheduler_interval_ms", long_parser()),
    "log.flush.offset.checkpoint.interval.ms": (
        "log_flush_offset_checkpoint_interval_ms",
        int_parser(0),
    ),
    "log.flush.start.offset.checkpoint.interval.ms": (
        "log_flush_start_offset_checkpoint_interval_ms",
        int_parser(0),
    ),
    "log.message.timestamp.type": (
        "log_message_timestamp_type",
        choice("CreateTime", "LogAppendTime"),
    ),
    "log.cleanup.policy": ("log_cleanup_policy", parse_cleanup_policy),
    "log.cleaner.enable": ("log_cleaner_enable", parse_bool),
    "log.preallocate": ("log_preallocate", parse_bool),
    "compression.type": (
        "compression_type",
        choice("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    "min.insync.replicas": ("min_insync_replicas", int_parser(1)),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", parse_bool),
    "log.retention.bytes": ("log_retention_bytes", long_parser()),
    "log.retention.check.interval.ms": ("log_retention_check_interval_ms", long_parser(1)),
    "zookeeper.connect": ("zookeeper_connect", optional_str),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", int_parser(1)),
    "zookeeper.max.in.flight.requests": ("zookeeper_max_in_flight_requests", int_parser(1)),
    "broker.rack": ("broker_rack", optional_str),
    "inter.broker.listener.name": ("inter_broker_listener_name", optional_str),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", int_parser(1)),
    "offsets.topic.replication.factor": ("offsets_topic_replication_factor", int_parser(1)),
    "offsets.topic.segment.bytes": ("offsets_topic_segment_bytes", int_parser(1)),
    "offsets.retention.minutes": ("offsets_retention_minutes", int_parser(1)),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", long_parser(1)),
    "offsets.commit.timeout.ms": ("offsets_commit_timeout_ms", int_parser(1)),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", int_parser()),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", int_parser(0)),
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", int_parser()),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", int_parser()),
    "group.max.size": ("group_max_size", int_parser(1)),
    "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", int_parser(1)),
    "group.consumer.min.session.timeout.ms": (
        "group_consumer_min_session_timeout_ms",
        int_parser(1),
    ),
    "group.consumer.max.session.timeout.ms": (
        "group_consumer_max_session_timeout_ms",
        int_parser(1),
    ),
    "group.consumer.heartbeat.interval.ms": (
        "group_consumer_heartbeat_interval_ms",
        int_parser(1),
    ),
    "group.consumer.min.heartbeat.interval.ms": (
        "group_consumer_min_heartbeat_interval_ms",
        int_parser(1),
    ),
    "group.consumer.max.heartbeat.interval.ms": (
        "group_consumer_max_heartbeat_interval_ms",
        int_parser(1),
    ),
    "group.consumer.assignors": ("group_consumer_assignors", parse_assignors),
    "group.consumer.max.size": ("group_consumer_max_size", int_parser(1)),
    # streams groups (KIP-1071)
    "group.streams.session.timeout.ms": ("group_streams_session_timeout_ms", int_parser(1)),
    "group.streams.min.session.timeout.ms": (
        "group_streams_min_session_timeout_ms",
        int_parser(1),
    ),
    "group.streams.max.session.timeout.ms": (
        "group_streams_max_session_timeout_ms",
        int_parser(1),
    ),
    "group.streams.heartbeat.interval.ms": ("group_streams_heartbeat_interval_ms", int_parser(1)),
    "group.streams.min.heartbeat.interval.ms": (
        "group_streams_min_heartbeat_interval_ms",
        int_parser(1),
    ),
    "group.streams.max.heartbeat.interval.ms": (
        "group_streams_max_heartbeat_interval_ms",
        int_parser(1),
    ),
    "group.streams.max.size": ("group_streams_max_size", int_parser(1)),
    "group.streams.num.standby.replicas": ("group_streams_num_standby_replicas", int_parser(0)),
    "group.streams.max.standby.replicas": ("group_streams_max_standby_replicas", int_parser(0)),
    "group.streams.initial.rebalance.delay.ms": (
        "group_streams_initial_rebalance_delay_ms",
        int_parser(0),
    ),
    "group.streams.assignment.interval.ms": (
        "group_streams_assignment_interval_ms",
        int_parser(0),
    ),
    "group.consumer.migration.policy": (
        "group_consumer_migration_policy",
        choice("disabled", "upgrade", "downgrade", "bidirectional"),
    ),
    "transaction.state.log.num.partitions": (
        "transaction_state_log_num_partitions",
        int_parser(1),
    ),
    "transaction.state.log.replication.factor": (
        "transaction_state_log_replication_factor",
        int_parser(1),
    ),
    "transaction.state.log.min.isr": ("transaction_state_log_min_isr", int_parser(1)),
    "transaction.state.log.segment.bytes": ("transaction_state_log_segment_bytes", int_parser(1)),
    "transactional.id.expiration.ms": ("transactional_id_expiration_ms", int_parser(1)),
    "transaction.max.timeout.ms": ("transaction_max_timeout_ms", int_parser(1)),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
        "transaction_abort_timed_out_transaction_cleanup_interval_ms",
        int_parser(1),
    ),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "transaction_remove_expired_transaction_cleanup_interval_ms",
        int_parser(1),
    ),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", int_parser(1)),
    "transaction.partition.verification.enable": (
        "transaction_partition_verification_enable",
        parse_bool,
    ),
    "request.timeout.ms": ("request_timeout_ms", int_parser(0)),
    "num.network.threads": ("num_network_threads", int_parser(1)),
    "num.io.threads": ("num_io_threads", int_parser(1)),
    "num.recovery.threads.per.data.dir": ("num_recovery_threads_per_data_dir", int_parser(1)),
    "background.threads": ("background_threads", int_parser(1)),
    "queued.max.requests": ("queued_max_requests", int_parser(1)),
    "replica.fetch.max.bytes": ("replica_fetch_max_bytes", int_parser(0)),
    "replica.fetch.min.bytes": ("replica_fetch_min_bytes", int_parser()),
    "replica.fetch.wait.max.ms": ("replica_fetch_wait_max_ms", int_parser()),
    "replica.fetch.response.max.bytes": ("replica_fetch_response_max_bytes", int_parser(0)),
    "replica.lag.time.max.ms": ("replica_lag_time_max_ms", long_parser()),
    "replica.socket.timeout.ms": ("replica_socket_timeout_ms", int_parser()),
    "replica.high.watermark.checkpoint.interval.ms": (
        "replica_high_watermark_checkpoint_interval_ms",
        long_parser(),
    ),
    "num.replica.fetchers": ("num_replica_fetchers", int_parser()),
    "controlled.shutdown.enable": ("controlled_shutdown_enable", parse_bool),
    "connections.max.idle.ms": ("connections_max_idle_ms", long_parser()),
    "max.connections": ("max_connections", int_parser(0)),
    "max.connections.per.ip": ("max_connections_per_ip", int_parser(0)),
    "max.connections.per.ip.overrides": (
        "max_connections_per_ip_overrides",
        parse_connection_overrides,
    ),
    "queued.max.request.bytes": ("queued_max_request_bytes", long_parser()),
    "reserved.broker.max.id": ("reserved_broker_max_id", int_parser(0)),
    "broker.id.generation.enable": ("broker_id_generation_enable", parse_bool),
    "connection.failed.authentication.delay.ms": (
        "connection_failed_authentication_delay_ms",
        int_parser(0),
    ),
    "connections.max.reauth.ms": ("connections_max_reauth_ms", long_parser(0)),
    "delegation.token.secret.key": ("delegation_token_secret_key", optional_str),
    "delegation.token.max.lifetime.ms": ("delegation_token_max_lifetime_ms", long_parser(1)),
    "delegation.token.expiry.time.ms": ("delegation_token_expiry_time_ms", long_parser(1)),
    "delegation.token.expiry.check.interval.ms": (
        "delegation_token_expiry_check_interval_ms",
        long_parser(1),
    ),
    "quota.window.num": ("quota_window_num", int_parser(1)),
    "quota.window.size.seconds": ("quota_window_size_seconds", int_parser(1)),
    "max.connection.creation.rate": ("max_connection_creation_rate", int_parser(0)),
}

# Keys resolved by hand in from_properties.
SPECIAL_KEYS = frozenset(
    {
        "broker.id",
        "node.id",
        "listeners",
        "advertised.listeners",
        "listener.security.protocol.map",
        "security.inter.broker.protocol",
        "log.dirs",
        "log.dir",
        "log.roll.ms",
        "log.roll.hours",
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
        "log.flush.interval.ms",
        "zookeeper.connection.timeout.ms",
        "authorizer.class.name",
        "super.users",
        "allow.everyone.if.no.acl.found",
    }
)

# Other broker keys from Kafka's documentation: accepted silently (kept in ``raw``), unused.
KNOWN_UNUSED_KEYS = frozenset(
    """
advertised.host.name advertised.port host.name port process.roles controller.quorum.voters
controller.quorum.bootstrap.servers controller.listener.names controller.quorum.election.timeout.ms
controller.quorum.fetch.timeout.ms controller.quorum.election.backoff.max.ms
controller.quorum.append.linger.ms controller.quorum.request.timeout.ms
controller.quorum.retry.backoff.ms controller.socket.timeout.ms metadata.log.dir
metadata.log.segment.bytes metadata.log.segment.ms metadata.max.retention.bytes
metadata.max.retention.ms metadata.max.idle.interval.ms
metadata.log.max.record.bytes.between.snapshots
metadata.log.max.snapshot.interval.ms initial.broker.registration.timeout.ms
broker.heartbeat.interval.ms broker.session.timeout.ms node.id.generation.enable
log.cleaner.threads log.cleaner.io.max.bytes.per.second log.cleaner.dedupe.buffer.size
log.cleaner.io.buffer.size log.cleaner.io.buffer.load.factor log.cleaner.backoff.ms
log.cleaner.min.cleanable.ratio log.cleaner.delete.retention.ms log.cleaner.min.compaction.lag.ms
log.cleaner.max.compaction.lag.ms log.segment.delete.delay.ms log.roll.jitter.ms
log.roll.jitter.hours log.message.timestamp.difference.max.ms
log.message.timestamp.before.max.ms log.message.timestamp.after.max.ms
log.message.downconversion.enable log.message.format.version log.local.retention.ms
log.local.retention.bytes log.initial.task.delay.ms log.dir.failure.timeout.ms
compression.gzip.level compression.lz4.level compression.zstd.level
socket.listen.backlog.size socket.connection.setup.timeout.ms
socket.connection.setup.timeout.max.ms
max.request.partition.size.limit
metadata.max.age.ms num.replica.alter.log.dirs.threads
replica.fetch.backoff.ms replica.selector.class replica.socket.receive.buffer.bytes
leader.imbalance.check.interval.seconds leader.imbalance.per.broker.percentage
auto.leader.rebalance.enable auto.include.jmx.reporter controlled.shutdown.max.retries
controlled.shutdown.retry.backoff.ms controller.quota.window.num
controller.quota.window.size.seconds
delegation.token.master.key
delete.records.purgatory.purge.interval.requests fetch.purgatory.purge.interval.requests
producer.purgatory.purge.interval.requests producer.id.expiration.check.interval.ms
producer.id.quota.window.num producer.id.quota.window.size.seconds
group.coordinator.rebalance.protocols group.coordinator.new.enable group.coordinator.threads
group.coordinator.append.linger.ms
group.share.enable group.share.max.groups group.share.max.size
group.share.session.timeout.ms group.share.heartbeat.interval.ms group.share.record.lock.duration.ms
group.consumer.offset.metadata.max.bytes offsets.load.buffer.size offsets.commit.required.acks
transaction.state.log.load.buffer.size
transaction.two.phase.commit.enable
unstable.api.versions.enable unstable.feature.versions.enable
unstable.metadata.versions.enable inter.broker.protocol.version
zookeeper.clientCnxnSocket zookeeper.set.acl zookeeper.ssl.client.enable
zookeeper.ssl.cipher.suites zookeeper.ssl.crl.enable zookeeper.ssl.enabled.protocols
zookeeper.ssl.endpoint.identification.algorithm zookeeper.ssl.keystore.location
zookeeper.ssl.keystore.password zookeeper.ssl.keystore.type zookeeper.ssl.ocsp.enable
zookeeper.ssl.protocol zookeeper.ssl.truststore.location zookeeper.ssl.truststore.password
zookeeper.ssl.truststore.type zookeeper.metadata.migration.enable
zookeeper.sync.time.ms
replication.quota.window.num replication.quota.window.size.seconds
alter.log.dirs.replication.quota.window.num alter.log.dirs.replication.quota.window.size.seconds
client.quota.callback.class kafka.metrics.polling.interval.secs kafka.metrics.reporters
metric.reporters metrics.num.samples metrics.recording.level metrics.sample.window.ms
principal.builder.class
security.providers remote.log.storage.system.enable
remote.log.manager.thread.pool.size remote.log.metadata.manager.class.name
remote.log.storage.manager.class.name config.providers create.topic.policy.class.name
alter.config.policy.class.name password.encoder.secret password.encoder.old.secret
password.encoder.cipher.algorithm password.encoder.iterations password.encoder.key.length
password.encoder.keyfactory.algorithm telemetry.max.bytes eligible.leader.replicas.enable
early.start.listeners share.coordinator.state.topic.num.partitions
share.coordinator.state.topic.replication.factor share.coordinator.state.topic.min.isr
share.coordinator.state.topic.segment.bytes
""".split()
)

# Prefixes whose keys are accepted silently (per-listener, security and plugin settings).
KNOWN_PREFIXES = (
    "listener.name.",
    "ssl.",
    "sasl.",
    "zookeeper.ssl.",
    "remote.log.",
    "log.cleaner.",
    "metrics.",
    "kafkapy.",
)


def _in_44_table(key: str) -> bool:
    from .config_definitions import definitions

    return key in definitions("broker")


def is_known_key(key: str) -> bool:
    return (
        _in_44_table(key)
        or key in OPTIONS
        or key in SPECIAL_KEYS
        or key in KNOWN_UNUSED_KEYS
        or key.startswith(KNOWN_PREFIXES)
    )


def is_broker_config_name(key: str) -> bool:
    """Whether ``key`` is one of Kafka's broker config names (not a prefixed or custom key)."""
    return _in_44_table(key) or key in OPTIONS or key in SPECIAL_KEYS or key in KNOWN_UNUSED_KEYS
