"""Broker configuration: Kafka's server.properties parsed into a frozen :class:`BrokerConfig`.

* :func:`parse_properties` reads the java.util.Properties text format (kafkapy.java_properties).
* :meth:`BrokerConfig.from_properties` applies Kafka's defaults (kafkapy's own for ``broker.id``,
  ``listeners`` and ``log.dirs``), resolves Kafka's precedence rules (``log.roll.ms`` over
  ``log.roll.hours``, ``log.retention.ms`` over minutes over hours, ``log.dirs`` over
  ``log.dir``, ``node.id`` as an alias of ``broker.id``), validates every value it reads and raises
  :class:`ConfigError` naming key, value and what is allowed. Keys Kafka documents but kafkapy does
  not use are accepted silently (they stay in ``raw``); other keys are logged once each.

The parts live beside it: the known keys and their parsers (config_keys), the value parsers
(config_values), the listeners and their security (listener_config).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from kafkapy.java_properties import PropertiesFormatError, read_properties
from kafkapy.security.authorizer import AuthorizerConfig, AuthorizerConfigError
from kafkapy.security.listener_security import (
    InterBrokerSecurity,
    ListenerSecurity,
    SecurityConfigError,
)
from kafkapy.security.session import PLAINTEXT

from .config_keys import OPTIONS, SPECIAL_KEYS, is_known_key
from .config_values import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    ConfigError,
    int_parser,
    invalid,
    long_parser,
)
from .listener_config import Listener, parse_listener, resolve_listeners, resolve_security

__all__ = [
    "LONG_MAX",
    "BrokerConfig",
    "ConfigError",
    "Listener",
    "is_known_key",
    "parse_listener",
    "parse_properties",
]

log = logging.getLogger(__name__)


def parse_properties(text: str) -> dict[str, str]:
    """server.properties text (java.util.Properties format); later duplicates win."""
    try:
        return read_properties(text)
    except PropertiesFormatError as e:
        raise ConfigError(str(e)) from None


def _check_log_synonyms(props: Mapping[str, str]) -> None:
    """Validate the broker-level synonyms of topic configs (log.local.retention.ms, ...) that
    OPTIONS does not parse, as Kafka does at start; then say, in one line, which of the given
    configs kafkapy accepts without acting on them."""
    from .config_support import warn_not_implemented
    from .log_configs import SYNONYM_OF, validate_broker_value

    for key, value in props.items():
        if key not in SYNONYM_OF or key in OPTIONS or key in SPECIAL_KEYS:
            continue
        msg = validate_broker_value(key, value)
        if msg is not None:
            raise ConfigError(msg)
    warn_not_implemented(props)


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
    #: delegation tokens (server/security/token_manager.py); no secret key: disabled
    delegation_token_secret_key: str | None = None
    delegation_token_max_lifetime_ms: int = 604800000
    delegation_token_expiry_time_ms: int = 86400000
    delegation_token_expiry_check_interval_ms: int = 3600000
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
    max_incremental_fetch_session_cache_slots: int = 1000
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
    group_streams_session_timeout_ms: int = 45000
    group_streams_min_session_timeout_ms: int = 45000
    group_streams_max_session_timeout_ms: int = 60000
    group_streams_heartbeat_interval_ms: int = 5000
    group_streams_min_heartbeat_interval_ms: int = 5000
    group_streams_max_heartbeat_interval_ms: int = 15000
    group_streams_max_size: int = INT_MAX
    group_streams_num_standby_replicas: int = 0
    group_streams_max_standby_replicas: int = 2
    group_streams_initial_rebalance_delay_ms: int = 3000
    group_streams_assignment_interval_ms: int = 1000
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
        for key, (name, parse) in OPTIONS.items():
            if key in props:
                kw[name] = parse(key, props[key])
        kw["broker_id"] = _broker_id(props)
        kw.update(resolve_listeners(props))
        kw.update(resolve_security(props, kw["listeners"], kw["advertised_listeners"]))
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
            kw["log_flush_interval_ms"] = long_parser()(
                "log.flush.interval.ms", props["log.flush.interval.ms"]
            )
        session = kw.get("zookeeper_session_timeout_ms", 18000)
        if "zookeeper.connection.timeout.ms" in props:
            kw["zookeeper_connection_timeout_ms"] = int_parser(1)(
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
            (
                "group.streams.session.timeout.ms",
                self.group_streams_min_session_timeout_ms,
                self.group_streams_max_session_timeout_ms,
            ),
            (
                "group.streams.heartbeat.interval.ms",
                self.group_streams_min_heartbeat_interval_ms,
                self.group_streams_max_heartbeat_interval_ms,
            ),
            (
                "group.streams.num.standby.replicas",
                0,
                self.group_streams_max_standby_replicas,
            ),
        ):
            value = getattr(self, name.replace(".", "_"))
            if not lo <= value <= hi:
                raise invalid(name, value, f"must be between {lo} and {hi} (the min/max settings)")
        if self.group_consumer_heartbeat_interval_ms >= self.group_consumer_session_timeout_ms:
            raise invalid(
                "group.consumer.heartbeat.interval.ms",
                self.group_consumer_heartbeat_interval_ms,
                "must be less than group.consumer.session.timeout.ms",
            )
        if self.group_streams_heartbeat_interval_ms >= self.group_streams_session_timeout_ms:
            raise invalid(
                "group.streams.heartbeat.interval.ms",
                self.group_streams_heartbeat_interval_ms,
                "must be less than group.streams.session.timeout.ms",
            )
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise invalid(
                "group.min.session.timeout.ms",
                self.group_min_session_timeout_ms,
                "must not exceed group.max.session.timeout.ms",
            )
        self._check_connection_limits()
        if self.broker_id < 0 and not self.broker_id_generation_enable:
            raise invalid("broker.id", self.broker_id, "must be >= 0 (generation is disabled)")
        if self.broker_id > self.reserved_broker_max_id:
            raise invalid(
                "broker.id",
                self.broker_id,
                f"must not exceed reserved.broker.max.id ({self.reserved_broker_max_id})",
            )

    def _check_connection_limits(self) -> None:
        """Kafka's rules: queued.max.request.bytes <= 0 or >= socket.request.max.bytes;
        max.connections.per.ip 0 only with overrides; listener-prefixed max.connections."""
        from ..network.connection_quotas import (
            ConnectionLimitError,
            listener_max_connections,
            resolve_overrides,
        )

        if 0 < self.queued_max_request_bytes < self.socket_request_max_bytes:
            raise invalid(
                "queued.max.request.bytes",
                self.queued_max_request_bytes,
                f"must be larger or equal to socket.request.max.bytes "
                f"({self.socket_request_max_bytes}), or -1 for no bound",
            )
        if self.max_connections_per_ip == 0 and not self.max_connections_per_ip_overrides:
            raise invalid(
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
    parse = int_parser(-1)
    ids = {k: parse(k, props[k]) for k in ("broker.id", "node.id") if k in props}
    if len(set(ids.values())) > 1:
        raise invalid(
            "node.id",
            props["node.id"],
            f"must equal broker.id ({props['broker.id']}) when both are set",
        )
    return next(iter(ids.values()), 0)


def _log_dirs(props: Mapping[str, str]) -> tuple[str, ...]:
    key = "log.dirs" if "log.dirs" in props else "log.dir" if "log.dir" in props else None
    if key is None:
        return ("./data/kafka-logs",)
    dirs = tuple(d.strip() for d in props[key].split(",") if d.strip())
    if not dirs:
        raise invalid(key, props[key], "at least one directory is required")
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
            return long_parser(lo)(key, props[key]) * factor
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
