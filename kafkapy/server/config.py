"""Broker configuration: Kafka's server.properties parsed into a frozen :class:`BrokerConfig`.

* :func:`parse_properties` reads the java.util.Properties text format (``key=value``,
  ``key: value``, ``key value``; ``#``/``!`` comment lines; backslash continuations; escapes).
* :meth:`BrokerConfig.from_properties` applies Kafka's defaults (kafkapy's own for ``broker.id``,
  ``listeners`` and ``log.dirs``), resolves Kafka's precedence rules (``log.roll.ms`` over
  ``log.roll.hours``, ``log.retention.ms`` over minutes over hours, ``log.dirs`` over
  ``log.dir``, ``node.id`` as an alias of ``broker.id``), validates every value it reads and raises
  :class:`ConfigError` naming key, value and what is allowed. Keys Kafka documents but kafkapy does
  not use are accepted silently (they stay in ``raw``); other keys are logged once each.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from kafkapy.security.authorizer import AuthorizerConfig, AuthorizerConfigError
from kafkapy.security.listener_security import (
    InterBrokerSecurity,
    ListenerSecurity,
    SecurityConfigError,
    inter_broker_listener,
)
from kafkapy.security.session import PLAINTEXT, SECURITY_PROTOCOLS

log = logging.getLogger(__name__)

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)

SUPPORTED_SECURITY_PROTOCOLS = SECURITY_PROTOCOLS
DEFAULT_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"


class ConfigError(ValueError):
    """A broker configuration value is invalid (one line: key, value, what is allowed)."""


def _invalid(key: str, value: object, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {value!r} for configuration {key}: {why}")


# --- java.util.Properties format -----------------------------------------------------------------

_WS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            if c != "\\":
                out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == "u":
            digits = s[i + 2 : i + 6]
            if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError(f"Malformed \\uxxxx encoding in properties: {s!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(n, n))
            i += 2
    return "".join(out)


def _ends_with_continuation(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _WS:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in _WS:
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in _WS:
            j += 1
    return _unescape(key), _unescape(line[j:])


def parse_properties(text: str) -> dict[str, str]:
    """Parse java.util.Properties text; later duplicates win."""
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _ends_with_continuation(line):
            line = line[:-1]
            if i >= len(lines):
                break
            line += lines[i].lstrip(_WS)
            i += 1
        key, value = _split_key_value(line)
        props[key] = value
    return props


# --- listeners -----------------------------------------------------------------------------------

_LISTENER_RE = re.compile(r"^([A-Za-z0-9_.-]+)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    host: str  # "" binds every interface
    port: int
    security_protocol: str = "PLAINTEXT"


def parse_listener(s: str, key: str = "listeners") -> tuple[str, str, int]:
    """``NAME://host:port`` -> (name, host, port); ConfigError otherwise."""
    m = _LISTENER_RE.match(s.strip())
    if not m:
        raise _invalid(
            key, s, "a listener must look like NAME://host:port, e.g. PLAINTEXT://127.0.0.1:9092"
        )
    port = int(m.group(3))
    if not 0 <= port <= 65535:
        raise _invalid(key, s, "the port must be between 0 and 65535")
    return m.group(1).upper(), m.group(2), port


def parse_protocol_map(value: str, key: str = "listener.security.protocol.map") -> dict[str, str]:
    result: dict[str, str] = {}
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        name, sep, proto = item.partition(":")
        proto = proto.strip().upper()
        if not sep or not name.strip() or proto not in SECURITY_PROTOCOLS:
            raise _invalid(
                key,
                value,
                f"entries must be LISTENER_NAME:PROTOCOL, PROTOCOL one of {SECURITY_PROTOCOLS}",
            )
        result[name.strip().upper()] = proto
    return result


def parse_listeners(value: str, key: str, protocol_map: Mapping[str, str]) -> tuple[Listener, ...]:
    out: list[Listener] = []
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        name, host, port = parse_listener(item, key)
        proto = protocol_map.get(name)
        if proto is None:
            raise _invalid(
                key,
                value,
                f"listener name {name} is not in listener.security.protocol.map "
                f"({', '.join(protocol_map)})",
            )
        if proto not in SUPPORTED_SECURITY_PROTOCOLS:
            raise _invalid(
                key,
                value,
                f"security protocol {proto} of listener {name} is not supported; "
                f"kafkapy supports {', '.join(SUPPORTED_SECURITY_PROTOCOLS)}",
            )
        if any(lst.name == name for lst in out):
            raise _invalid(key, value, f"each listener must have a different name ({name} repeats)")
        out.append(Listener(name, host, port, proto))
    if not out:
        raise _invalid(key, value, "at least one listener is required")
    return tuple(out)


# --- value parsers -------------------------------------------------------------------------------


def _int_parser(lo: int = INT_MIN, hi: int = INT_MAX) -> Callable[[str, str], int]:
    def parse(key: str, value: str) -> int:
        v = value.strip()
        if not re.fullmatch(r"[+-]?\d+", v):
            raise _invalid(key, value, "expected an integer")
        n = int(v)
        if not lo <= n <= hi:
            if hi in (INT_MAX, LONG_MAX):
                raise _invalid(key, value, f"value must be at least {lo}")
            raise _invalid(key, value, f"value must be in [{lo}, {hi}]")
        return n

    return parse


def _long_parser(lo: int = LONG_MIN) -> Callable[[str, str], int]:
    return _int_parser(lo, LONG_MAX)


def _bool(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise _invalid(key, value, "expected true or false")
    return v == "true"


def _opt_str(key: str, value: str) -> str | None:
    return value.strip() or None


def _choice(*allowed: str) -> Callable[[str, str], str]:
    def parse(key: str, value: str) -> str:
        v = value.strip()
        for a in allowed:
            if v.lower() == a.lower():
                return a
        raise _invalid(key, value, f"allowed values are {', '.join(allowed)}")

    return parse


_ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def _assignors(key: str, value: str) -> tuple[str, ...]:
    """group.consumer.assignors: names (uniform, range) or Kafka's class names for them."""
    items = tuple(
        _ASSIGNOR_CLASSES.get(x.strip(), x.strip().lower()) for x in value.split(",") if x.strip()
    )
    if not items or any(x not in ("uniform", "range") for x in items):
        raise _invalid(key, value, "a comma-separated list of uniform, range")
    return items


def _cleanup_policy(key: str, value: str) -> tuple[str, ...]:
    items = tuple(x.strip().lower() for x in value.split(",") if x.strip())
    if not items or any(x not in ("delete", "compact") for x in items):
        raise _invalid(key, value, "a comma-separated list of delete, compact")
    return items


def _ip_overrides(key: str, value: str) -> Mapping[str, int]:
    from .connection_quotas import ConnectionLimitError, parse_ip_overrides

    try:
        return MappingProxyType(parse_ip_overrides(key, value))
    except ConnectionLimitError as e:
        raise ConfigError(str(e)) from None


# key -> (field name, parser). Fields not listed here are derived (see from_properties).
_OPTIONS: dict[str, tuple[str, Callable[[str, str], Any]]] = {
    "num.partitions": ("num_partitions", _int_parser(1)),
    "default.replication.factor": ("default_replication_factor", _int_parser(1)),
    "auto.create.topics.enable": ("auto_create_topics_enable", _bool),
    "delete.topic.enable": ("delete_topic_enable", _bool),
    "log.segment.bytes": ("log_segment_bytes", _int_parser(14)),
    "log.index.interval.bytes": ("log_index_interval_bytes", _int_parser(0)),
    "log.index.size.max.bytes": ("log_index_size_max_bytes", _int_parser(4)),
    "message.max.bytes": ("message_max_bytes", _int_parser(0)),
    "socket.request.max.bytes": ("socket_request_max_bytes", _int_parser(1)),
    "socket.send.buffer.bytes": ("socket_send_buffer_bytes", _int_parser()),
    "socket.receive.buffer.bytes": ("socket_receive_buffer_bytes", _int_parser()),
    "fetch.max.bytes": ("fetch_max_bytes", _int_parser(0)),
    "log.flush.interval.messages": ("log_flush_interval_messages", _long_parser(1)),
    "log.flush.scheduler.interval.ms": ("log_flush_scheduler_interval_ms", _long_parser()),
    "log.flush.offset.checkpoint.interval.ms": (
        "log_flush_offset_checkpoint_interval_ms",
        _int_parser(0),
    ),
    "log.flush.start.offset.checkpoint.interval.ms": (
        "log_flush_start_offset_checkpoint_interval_ms",
        _int_parser(0),
    ),
    "log.message.timestamp.type": (
        "log_message_timestamp_type",
        _choice("CreateTime", "LogAppendTime"),
    ),
    "log.cleanup.policy": ("log_cleanup_policy", _cleanup_policy),
    "log.cleaner.enable": ("log_cleaner_enable", _bool),
    "log.preallocate": ("log_preallocate", _bool),
    "compression.type": (
        "compression_type",
        _choice("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    "min.insync.replicas": ("min_insync_replicas", _int_parser(1)),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", _bool),
    "log.retention.bytes": ("log_retention_bytes", _long_parser()),
    "log.retention.check.interval.ms": ("log_retention_check_interval_ms", _long_parser(1)),
    "zookeeper.connect": ("zookeeper_connect", _opt_str),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", _int_parser(1)),
    "zookeeper.max.in.flight.requests": ("zookeeper_max_in_flight_requests", _int_parser(1)),
    "broker.rack": ("broker_rack", _opt_str),
    "inter.broker.listener.name": ("inter_broker_listener_name", _opt_str),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", _int_parser(1)),
    "offsets.topic.replication.factor": ("offsets_topic_replication_factor", _int_parser(1)),
    "offsets.topic.segment.bytes": ("offsets_topic_segment_bytes", _int_parser(1)),
    "offsets.retention.minutes": ("offsets_retention_minutes", _int_parser(1)),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", _long_parser(1)),
    "offsets.commit.timeout.ms": ("offsets_commit_timeout_ms", _int_parser(1)),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", _int_parser()),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", _int_parser(0)),
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", _int_parser()),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", _int_parser()),
    "group.max.size": ("group_max_size", _int_parser(1)),
    "group.consumer.session.timeout.ms": ("group_consumer_session_timeout_ms", _int_parser(1)),
    "group.consumer.min.session.timeout.ms": (
        "group_consumer_min_session_timeout_ms",
        _int_parser(1),
    ),
    "group.consumer.max.session.timeout.ms": (
        "group_consumer_max_session_timeout_ms",
        _int_parser(1),
    ),
    "group.consumer.heartbeat.interval.ms": (
        "group_consumer_heartbeat_interval_ms",
        _int_parser(1),
    ),
    "group.consumer.min.heartbeat.interval.ms": (
        "group_consumer_min_heartbeat_interval_ms",
        _int_parser(1),
    ),
    "group.consumer.max.heartbeat.interval.ms": (
        "group_consumer_max_heartbeat_interval_ms",
        _int_parser(1),
    ),
    "group.consumer.assignors": ("group_consumer_assignors", _assignors),
    "group.consumer.max.size": ("group_consumer_max_size", _int_parser(1)),
    "group.consumer.migration.policy": (
        "group_consumer_migration_policy",
        _choice("disabled", "upgrade", "downgrade", "bidirectional"),
    ),
    "transaction.state.log.num.partitions": (
        "transaction_state_log_num_partitions",
        _int_parser(1),
    ),
    "transaction.state.log.replication.factor": (
        "transaction_state_log_replication_factor",
        _int_parser(1),
    ),
    "transaction.state.log.min.isr": ("transaction_state_log_min_isr", _int_parser(1)),
    "transaction.state.log.segment.bytes": ("transaction_state_log_segment_bytes", _int_parser(1)),
    "transactional.id.expiration.ms": ("transactional_id_expiration_ms", _int_parser(1)),
    "transaction.max.timeout.ms": ("transaction_max_timeout_ms", _int_parser(1)),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
        "transaction_abort_timed_out_transaction_cleanup_interval_ms",
        _int_parser(1),
    ),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "transaction_remove_expired_transaction_cleanup_interval_ms",
        _int_parser(1),
    ),
    "producer.id.expiration.ms": ("producer_id_expiration_ms", _int_parser(1)),
    "transaction.partition.verification.enable": (
        "transaction_partition_verification_enable",
        _bool,
    ),
    "request.timeout.ms": ("request_timeout_ms", _int_parser(0)),
    "num.network.threads": ("num_network_threads", _int_parser(1)),
    "num.io.threads": ("num_io_threads", _int_parser(1)),
    "num.recovery.threads.per.data.dir": ("num_recovery_threads_per_data_dir", _int_parser(1)),
    "background.threads": ("background_threads", _int_parser(1)),
    "queued.max.requests": ("queued_max_requests", _int_parser(1)),
    "replica.fetch.max.bytes": ("replica_fetch_max_bytes", _int_parser(0)),
    "replica.fetch.min.bytes": ("replica_fetch_min_bytes", _int_parser()),
    "replica.fetch.wait.max.ms": ("replica_fetch_wait_max_ms", _int_parser()),
    "replica.fetch.response.max.bytes": ("replica_fetch_response_max_bytes", _int_parser(0)),
    "replica.lag.time.max.ms": ("replica_lag_time_max_ms", _long_parser()),
    "replica.socket.timeout.ms": ("replica_socket_timeout_ms", _int_parser()),
    "replica.high.watermark.checkpoint.interval.ms": (
        "replica_high_watermark_checkpoint_interval_ms",
        _long_parser(),
    ),
    "num.replica.fetchers": ("num_replica_fetchers", _int_parser()),
    "controlled.shutdown.enable": ("controlled_shutdown_enable", _bool),
    "connections.max.idle.ms": ("connections_max_idle_ms", _long_parser()),
    "max.connections": ("max_connections", _int_parser(0)),
    "max.connections.per.ip": ("max_connections_per_ip", _int_parser(0)),
    "max.connections.per.ip.overrides": ("max_connections_per_ip_overrides", _ip_overrides),
    "queued.max.request.bytes": ("queued_max_request_bytes", _long_parser()),
    "reserved.broker.max.id": ("reserved_broker_max_id", _int_parser(0)),
    "broker.id.generation.enable": ("broker_id_generation_enable", _bool),
    "connection.failed.authentication.delay.ms": (
        "connection_failed_authentication_delay_ms",
        _int_parser(0),
    ),
    "connections.max.reauth.ms": ("connections_max_reauth_ms", _long_parser(0)),
    "quota.window.num": ("quota_window_num", _int_parser(1)),
    "quota.window.size.seconds": ("quota_window_size_seconds", _int_parser(1)),
    "max.connection.creation.rate": ("max_connection_creation_rate", _int_parser(0)),
}

# Keys resolved by hand in from_properties.
_SPECIAL_KEYS = frozenset(
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
max.incremental.fetch.session.cache.slots
max.request.partition.size.limit
metadata.max.age.ms num.replica.alter.log.dirs.threads
replica.fetch.backoff.ms replica.selector.class replica.socket.receive.buffer.bytes
leader.imbalance.check.interval.seconds leader.imbalance.per.broker.percentage
auto.leader.rebalance.enable auto.include.jmx.reporter controlled.shutdown.max.retries
controlled.shutdown.retry.backoff.ms controller.quota.window.num
controller.quota.window.size.seconds
delegation.token.expiry.check.interval.ms delegation.token.expiry.time.ms
delegation.token.max.lifetime.ms delegation.token.secret.key delegation.token.master.key
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


def is_known_key(key: str) -> bool:
    return (
        key in _OPTIONS
        or key in _SPECIAL_KEYS
        or key in KNOWN_UNUSED_KEYS
        or key.startswith(KNOWN_PREFIXES)
    )


def is_broker_config_name(key: str) -> bool:
    """Whether ``key`` is one of Kafka's broker config names (not a prefixed or custom key)."""
    return key in _OPTIONS or key in _SPECIAL_KEYS or key in KNOWN_UNUSED_KEYS


def _check_log_synonyms(props: Mapping[str, str]) -> None:
    """Validate the broker-level synonyms of topic configs (log.message.format.version,
    log.local.retention.ms, ...) that are not parsed above, as Kafka does at start; say once
    which ones are accepted but not applied."""
    from .log_configs import SYNONYM_OF, TOPIC_CONFIGS, validate_broker_value

    for key, value in props.items():
        if key not in SYNONYM_OF or key in _OPTIONS or key in _SPECIAL_KEYS:
            continue
        msg = validate_broker_value(key, value)
        if msg is not None:
            raise ConfigError(msg)
        why = TOPIC_CONFIGS[SYNONYM_OF[key]].not_applied
        if why:
            log.warning(
                "broker config accepted, not applied config=%s value=%s reason=%r", key, value, why
            )


@dataclass(frozen=True)
class BrokerConfig:
    """Static broker configuration with Kafka's defaults (kafkapy's for id, listeners, dirs)."""

    broker_id: int = 0
    listeners: tuple[Listener, ...] = (Listener("PLAINTEXT", "127.0.0.1", 9092),)
    advertised_listeners: tuple[Listener, ...] = (Listener("PLAINTEXT", "127.0.0.1", 9092),)
    inter_broker_listener_name: str | None = None  # as given
    #: the listener brokers use to reach each other (inter.broker.listener.name, else the one
    #: named by security.inter.broker.protocol)
    inter_broker_listener: str = PLAINTEXT
    #: each listener's security (TLS context, SASL mechanisms, users), by listener name
    listener_security: Mapping[str, ListenerSecurity] = field(
        default_factory=lambda: MappingProxyType(
            {PLAINTEXT: ListenerSecurity(PLAINTEXT, PLAINTEXT)}
        )
    )
    connection_failed_authentication_delay_ms: int = 100
    connections_max_reauth_ms: int = 0
    #: the built-in ACL authorizer's settings; None: no authorizer (everything is allowed)
    authorizer: AuthorizerConfig | None = None
    quota_window_num: int = 11  # samples kept by client quota rates
    quota_window_size_seconds: int = 1  # the span of one sample
    max_connection_creation_rate: int = INT_MAX  # new connections per second, broker-wide
    log_dirs: tuple[str, ...] = ("./data/kafka-logs",)
    num_partitions: int = 1
    default_replication_factor: int = 1
    auto_create_topics_enable: bool = True
    delete_topic_enable: bool = True
    log_segment_bytes: int = 1073741824
    log_roll_ms: int = 168 * 3600 * 1000  # log.roll.ms, else log.roll.hours
    log_index_interval_bytes: int = 4096
    log_index_size_max_bytes: int = 10485760
    message_max_bytes: int = 1048588
    socket_request_max_bytes: int = 104857600
    socket_send_buffer_bytes: int = 102400
    socket_receive_buffer_bytes: int = 102400
    fetch_max_bytes: int = 57671680
    log_flush_interval_messages: int = LONG_MAX
    log_flush_interval_ms: int | None = None  # None: log.flush.scheduler.interval.ms applies
    log_flush_scheduler_interval_ms: int = LONG_MAX
    log_flush_offset_checkpoint_interval_ms: int = 60000
    log_flush_start_offset_checkpoint_interval_ms: int = 60000
    log_message_timestamp_type: str = "CreateTime"
    log_cleanup_policy: tuple[str, ...] = ("delete",)
    log_cleaner_enable: bool = True
    log_preallocate: bool = False
    compression_type: str = "producer"
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    log_retention_ms: int = 168 * 3600 * 1000  # ms, else minutes, else hours; -1 unlimited
    log_retention_bytes: int = -1
    log_retention_check_interval_ms: int = 300000
    zookeeper_connect: str | None = None  # None: embedded metadata store
    zookeeper_session_timeout_ms: int = 18000
    zookeeper_connection_timeout_ms: int = 18000  # defaults to the session timeout
    zookeeper_max_in_flight_requests: int = 10
    broker_rack: str | None = None
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_topic_segment_bytes: int = 104857600
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600000
    offsets_commit_timeout_ms: int = 5000
    offset_metadata_max_bytes: int = 4096
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_max_size: int = INT_MAX
    group_consumer_session_timeout_ms: int = 45000
    group_consumer_min_session_timeout_ms: int = 45000
    group_consumer_max_session_timeout_ms: int = 60000
    group_consumer_heartbeat_interval_ms: int = 5000
    group_consumer_min_heartbeat_interval_ms: int = 5000
    group_consumer_max_heartbeat_interval_ms: int = 15000
    group_consumer_assignors: tuple[str, ...] = ("uniform", "range")
    group_consumer_max_size: int = INT_MAX
    #: online migration of non-empty groups between the classic and consumer protocols
    group_consumer_migration_policy: str = "bidirectional"
    transaction_state_log_num_partitions: int = 50
    transaction_state_log_replication_factor: int = 3
    transaction_state_log_min_isr: int = 2
    transaction_state_log_segment_bytes: int = 104857600
    transactional_id_expiration_ms: int = 604800000
    transaction_max_timeout_ms: int = 900000
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = 10000
    transaction_remove_expired_transaction_cleanup_interval_ms: int = 3600000
    producer_id_expiration_ms: int = 86400000
    #: KIP-890: leaders ask the coordinator before a producer's first transactional write
    transaction_partition_verification_enable: bool = True
    #: how long WriteTxnMarkers waits for the ISR (Kafka uses request.timeout.ms)
    request_timeout_ms: int = 30000
    num_network_threads: int = 3
    num_io_threads: int = 8
    num_recovery_threads_per_data_dir: int = 1
    background_threads: int = 10
    queued_max_requests: int = 500
    replica_fetch_max_bytes: int = 1048576
    replica_fetch_min_bytes: int = 1
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_response_max_bytes: int = 10485760
    replica_lag_time_max_ms: int = 30000
    replica_socket_timeout_ms: int = 30000
    replica_high_watermark_checkpoint_interval_ms: int = 5000
    num_replica_fetchers: int = 1
    controlled_shutdown_enable: bool = True
    connections_max_idle_ms: int = 600000
    max_connections: int = INT_MAX
    max_connections_per_ip: int = INT_MAX
    max_connections_per_ip_overrides: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({})
    )
    queued_max_request_bytes: int = -1
    reserved_broker_max_id: int = 1000
    broker_id_generation_enable: bool = True
    #: every property given (known or not), as strings
    raw: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None
    ) -> BrokerConfig:
        """Read a server.properties file; ``overrides`` (e.g. from --override) win."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = Path(path).read_text(encoding="latin-1")
        props = parse_properties(text)
        props.update(overrides or {})
        return cls.from_properties(props)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> BrokerConfig:
        """Build and validate a config from string properties (unknown keys warned about)."""
        props = {str(k).strip(): str(v) for k, v in props.items()}
        for key in props:
            if not is_known_key(key):
                log.warning("The configuration '%s' was supplied but isn't a known config.", key)
        _check_log_synonyms(props)
        kw: dict[str, Any] = {}
        for key, (name, parse) in _OPTIONS.items():
            if key in props:
                kw[name] = parse(key, props[key])
        kw["broker_id"] = _broker_id(props)
        kw.update(_listeners(props))
        kw.update(_security(props, kw["listeners"], kw["advertised_listeners"]))
        kw["log_dirs"] = _log_dirs(props)
        try:
            kw["authorizer"] = AuthorizerConfig.from_properties(props)
        except AuthorizerConfigError as e:
            raise ConfigError(str(e)) from None
        kw["log_roll_ms"] = _ms_with_units(
            props, ("log.roll.ms", 1, 1), None, ("log.roll.hours", 3600000, 1), 168
        )
        kw["log_retention_ms"] = _retention_ms(props)
        if "log.flush.interval.ms" in props:
            kw["log_flush_interval_ms"] = _long_parser()(
                "log.flush.interval.ms", props["log.flush.interval.ms"]
            )
        session = kw.get("zookeeper_session_timeout_ms", 18000)
        if "zookeeper.connection.timeout.ms" in props:
            kw["zookeeper_connection_timeout_ms"] = _int_parser(1)(
                "zookeeper.connection.timeout.ms", props["zookeeper.connection.timeout.ms"]
            )
        else:
            kw["zookeeper_connection_timeout_ms"] = session
        kw["raw"] = MappingProxyType(dict(props))
        config = cls(**kw)
        config._check_consistency()
        if config.zookeeper_connect:
            config.inter_broker_security  # noqa: B018  (validates how brokers reach each other)
        return config

    def _check_consistency(self) -> None:
        for name, lo, hi in (
            (
                "group.consumer.session.timeout.ms",
                self.group_consumer_min_session_timeout_ms,
                self.group_consumer_max_session_timeout_ms,
            ),
            (
                "group.consumer.heartbeat.interval.ms",
                self.group_consumer_min_heartbeat_interval_ms,
                self.group_consumer_max_heartbeat_interval_ms,
            ),
        ):
            value = getattr(self, name.replace(".", "_"))
            if not lo <= value <= hi:
                raise _invalid(name, value, f"must be between {lo} and {hi} (the min/max settings)")
        if self.group_consumer_heartbeat_interval_ms >= self.group_consumer_session_timeout_ms:
            raise _invalid(
                "group.consumer.heartbeat.interval.ms",
                self.group_consumer_heartbeat_interval_ms,
                "must be less than group.consumer.session.timeout.ms",
            )
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise _invalid(
                "group.min.session.timeout.ms",
                self.group_min_session_timeout_ms,
                "must not exceed group.max.session.timeout.ms",
            )
        self._check_connection_limits()
        if self.broker_id < 0 and not self.broker_id_generation_enable:
            raise _invalid("broker.id", self.broker_id, "must be >= 0 (generation is disabled)")
        if self.broker_id > self.reserved_broker_max_id:
            raise _invalid(
                "broker.id",
                self.broker_id,
                f"must not exceed reserved.broker.max.id ({self.reserved_broker_max_id})",
            )

    def _check_connection_limits(self) -> None:
        """Kafka's rules: queued.max.request.bytes <= 0 or >= socket.request.max.bytes;
        max.connections.per.ip 0 only with overrides; listener-prefixed max.connections."""
        from .connection_quotas import (
            ConnectionLimitError,
            listener_max_connections,
            resolve_overrides,
        )

        if 0 < self.queued_max_request_bytes < self.socket_request_max_bytes:
            raise _invalid(
                "queued.max.request.bytes",
                self.queued_max_request_bytes,
                f"must be larger or equal to socket.request.max.bytes "
                f"({self.socket_request_max_bytes}), or -1 for no bound",
            )
        if self.max_connections_per_ip == 0 and not self.max_connections_per_ip_overrides:
            raise _invalid(
                "max.connections.per.ip",
                0,
                "can be set to zero only if max.connections.per.ip.overrides is set",
            )
        try:
            for lst in self.listeners:
                listener_max_connections(self.raw, lst.name)
            resolve_overrides(self.max_connections_per_ip_overrides)
        except ConnectionLimitError as e:
            raise ConfigError(str(e)) from None

    # --- derived values -----------------------------------------------------------------------

    def get(self, key: str, default: str | None = None) -> str | None:
        """The property ``key`` exactly as given (Kafka's originals), else ``default``.

        Lets a BrokerConfig stand where a ``Mapping[str, str]`` of broker properties is read
        with ``.get`` (topic config synonyms); unset keys are not filled with defaults.
        """
        return self.raw.get(key, default)

    @property
    def listener_host(self) -> str:
        """Bind address of the first listener ("" means every interface)."""
        return self.listeners[0].host

    @property
    def listener_port(self) -> int:
        return self.listeners[0].port

    @property
    def advertised_host(self) -> str:
        return self.advertised_listeners[0].host

    @property
    def advertised_port(self) -> int:
        return self.advertised_listeners[0].port

    @property
    def inter_broker_security(self) -> InterBrokerSecurity:
        """The client side of the inter-broker listener (TLS context, SASL credentials); built
        on first use, which validates the settings (ZooKeeper mode does at startup)."""
        cached = self.__dict__.get("_inter_broker_security")
        if cached is None:
            protocol = self.listener_security[self.inter_broker_listener].protocol
            try:
                cached = InterBrokerSecurity.build(self.raw, self.inter_broker_listener, protocol)
            except SecurityConfigError as e:
                raise ConfigError(str(e)) from None
            object.__setattr__(self, "_inter_broker_security", cached)
        return cached

    @property
    def log_dir_paths(self) -> list[Path]:
        return [Path(d) for d in self.log_dirs]

    @property
    def effective_log_flush_interval_ms(self) -> int:
        """log.flush.interval.ms, or log.flush.scheduler.interval.ms when unset."""
        if self.log_flush_interval_ms is None:
            return self.log_flush_scheduler_interval_ms
        return self.log_flush_interval_ms

    @property
    def uses_zookeeper(self) -> bool:
        return self.zookeeper_connect is not None

    @property
    def zookeeper_hosts(self) -> str | None:
        """zookeeper.connect without its chroot."""
        if self.zookeeper_connect is None:
            return None
        return self.zookeeper_connect.split("/", 1)[0]

    @property
    def zookeeper_chroot(self) -> str:
        """The chroot of zookeeper.connect ("/" when none)."""
        if self.zookeeper_connect is None or "/" not in self.zookeeper_connect:
            return "/"
        return "/" + self.zookeeper_connect.split("/", 1)[1].strip("/")

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


# --- resolution helpers --------------------------------------------------------------------------


def _broker_id(props: Mapping[str, str]) -> int:
    parse = _int_parser(-1)
    ids = {k: parse(k, props[k]) for k in ("broker.id", "node.id") if k in props}
    if len(set(ids.values())) > 1:
        raise _invalid(
            "node.id",
            props["node.id"],
            f"must equal broker.id ({props['broker.id']}) when both are set",
        )
    return next(iter(ids.values()), 0)


def _listeners(props: Mapping[str, str]) -> dict[str, Any]:
    pmap = parse_protocol_map(props.get("listener.security.protocol.map", DEFAULT_PROTOCOL_MAP))
    listeners = parse_listeners(
        props.get("listeners", "PLAINTEXT://127.0.0.1:9092"), "listeners", pmap
    )
    if "advertised.listeners" in props and props["advertised.listeners"].strip():
        key = "advertised.listeners"
        advertised = parse_listeners(props[key], key, pmap)
        names = {lst.name for lst in listeners}
        for a in advertised:
            if a.name not in names:
                raise _invalid(
                    key,
                    props[key],
                    f"listener name {a.name} is not defined in listeners ({', '.join(names)})",
                )
    else:
        key = "listeners"
        advertised = listeners
    resolved = []
    for a in advertised:
        if a.host in ("0.0.0.0", "::"):
            raise _invalid(
                "advertised.listeners",
                props.get(key, ""),
                f"cannot advertise the non-routable meta-address {a.host}; "
                "set advertised.listeners to a host clients can reach",
            )
        host = a.host or socket.getfqdn()
        resolved.append(Listener(a.name, host, a.port, a.security_protocol))
    return {"listeners": listeners, "advertised_listeners": tuple(resolved)}


def _security(
    props: Mapping[str, str], listeners: tuple[Listener, ...], advertised: tuple[Listener, ...]
) -> dict[str, Any]:
    """The inter-broker listener and every listener's security (kafkapy.security)."""
    try:
        name = inter_broker_listener(props, [lst.name for lst in advertised])
        security = {
            lst.name: ListenerSecurity.build(props, lst.name, lst.security_protocol)
            for lst in listeners
        }
    except SecurityConfigError as e:
        raise ConfigError(str(e)) from None
    return {"inter_broker_listener": name, "listener_security": MappingProxyType(security)}


def _log_dirs(props: Mapping[str, str]) -> tuple[str, ...]:
    key = "log.dirs" if "log.dirs" in props else "log.dir" if "log.dir" in props else None
    if key is None:
        return ("./data/kafka-logs",)
    dirs = tuple(d.strip() for d in props[key].split(",") if d.strip())
    if not dirs:
        raise _invalid(key, props[key], "at least one directory is required")
    return dirs


def _ms_with_units(
    props: Mapping[str, str],
    first: tuple[str, int, int],
    second: tuple[str, int, int] | None,
    third: tuple[str, int, int],
    default_units: int,
) -> int:
    for option in (first, second, third):
        if option is None:
            continue
        key, factor, lo = option
        if key in props:
            return _long_parser(lo)(key, props[key]) * factor
    return default_units * third[1]


def _retention_ms(props: Mapping[str, str]) -> int:
    ms = _ms_with_units(
        props,
        ("log.retention.ms", 1, LONG_MIN),
        ("log.retention.minutes", 60000, INT_MIN),
        ("log.retention.hours", 3600000, INT_MIN),
        168,
    )
    return -1 if ms < 0 else ms
