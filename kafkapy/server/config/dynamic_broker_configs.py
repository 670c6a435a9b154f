"""Kafka 4.4's dynamic broker configs: what AlterConfigs may change on a broker at run time, how
the values are checked, and which of them kafkapy acts on.

Which configs are dynamic, and per broker or cluster-wide, comes from the definition table
(server/config/config_definitions.py: Kafka 4.4's DynamicBrokerConfig); the types, defaults and
kafkapy's handling of those beyond the log, cleaner and connection-limit ones are below (the
listener, SSL and SASL settings, thread counts, ``metric.reporters``, the producer state,
remote storage and replication throttles). A broker config change is checked as Kafka checks it
(DynamicBrokerConfig.validateConfigs, then the reconfigurables' own checks), first failure wins:

1. a Kafka broker config outside the set: "Cannot update these configs dynamically";
   a name Kafka does not define is a custom config, accepted and stored as Kafka does;
2. the SSL key and trust store settings only with a listener prefix
   (``listener.name.<listener>.ssl.keystore.location``);
3. each value parsed as its type, the listener prefix stripped, with Kafka's ranges; a class
   name must be one kafkapy implements (it loads no Java classes: "could not be found");
4. at the cluster-wide default (empty resource name), the per-broker configs (listener, SSL,
   SASL and every listener-prefixed one but the connection limits) are refused;
5. a thread count may not drop below half or grow past double its current value.

Beyond Kafka's checks: ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map`` are refused, because kafkapy binds and registers its
listeners at start; password configs (``sasl.jaas.config``, key store passwords) are refused as
Kafka refuses them without ``password.encoder.secret`` (kafkapy never stores them encoded).

What kafkapy applies at once: the log and cleaner configs and the connection limits. Everything
else in the set is stored, described and not acted on (no thread pools, Kerberos, metrics
reporters, tiered storage or replication throttling; listeners' TLS and SASL settings are built
at start); a warning says so when one is set. Password and custom configs' values are hidden.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .config_definitions import broker_type, definitions
from .config_keys import is_broker_config_name
from .connection_limit_configs import is_connection_config, validate_connection_config
from .log_configs import CLEANER_CONFIGS, DYNAMIC_BROKER_KEYS, SYNONYM_OF, BrokerLayers
from .log_configs import validate_broker_value as validate_log_value
from .topic_configs import LONG_MAX, TOPIC_CONFIGS

log = logging.getLogger("kafkapy.config_changes")

INT_MAX = 2**31 - 1
_RANGES = {"INT": (-(2**31), INT_MAX), "SHORT": (-(2**15), 2**15 - 1), "LONG": (-(2**63), LONG_MAX)}
_LISTENER_PREFIX = re.compile(r"^listener\.name\.[^.]*\.(.*)$")
DEFAULT_PRINCIPAL_BUILDER = (
    "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"
)
# class names kafkapy implements, per class-valued config ("" or unset: none)
KNOWN_CLASSES = {
    "principal.builder.class": {DEFAULT_PRINCIPAL_BUILDER},
    "metric.reporters": {"org.apache.kafka.common.metrics.JmxReporter"},
}
NOT_APPLIED_LISTENER = "kafkapy builds its listeners' TLS and SASL settings at start"
NOT_APPLIED_THREADS = "kafkapy runs one event loop, without thread pools"


@dataclass(frozen=True, slots=True)
class DynamicConfig:
    name: str
    type: str  # Kafka's ConfigDef type: BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD
    default: str | None
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    per_broker: bool = False  # refused at the cluster-wide default
    listener_only: bool = False  # only with a listener prefix (the key and trust stores)
    thread_count: bool = False  # may at most halve or double
    not_applied: str | None = None  # stored and described, not acted on: why


def _defs(names: str, type_: str, default: str | None, **kw: object) -> dict[str, DynamicConfig]:
    return {n: DynamicConfig(n, type_, default, **kw) for n in names.split()}  # type: ignore[arg-type]


_SECURITY = dict(per_broker=True, not_applied=NOT_APPLIED_LISTENER)
_KERBEROS = dict(per_broker=True, not_applied="kafkapy does not serve SASL/GSSAPI (Kerberos)")
# Kafka's dynamic broker configs beyond the log, cleaner and connection-limit ones
DYNAMIC_CONFIGS: dict[str, DynamicConfig] = {
    # the key and trust stores (SslConfigs.RECONFIGURABLE_CONFIGS): per listener only
    **_defs(
        "ssl.keystore.type ssl.truststore.type", "STRING", "JKS", listener_only=True, **_SECURITY
    ),
    **_defs(
        "ssl.keystore.location ssl.truststore.location",
        "STRING",
        None,
        listener_only=True,
        **_SECURITY,
    ),
    **_defs(
        "ssl.keystore.password ssl.key.password ssl.truststore.password "
        "ssl.keystore.certificate.chain ssl.keystore.key ssl.truststore.certificates",
        "PASSWORD",
        None,
        listener_only=True,
        **_SECURITY,
    ),
    # DynamicListenerConfig's (per broker, but the connection limits and network threads)
    **_defs(
        "listeners advertised.listeners listener.security.protocol.map",
        "STRING",
        None,
        per_broker=True,
    ),
    "principal.builder.class": DynamicConfig(
        "principal.builder.class", "CLASS", DEFAULT_PRINCIPAL_BUILDER, **_SECURITY
    ),
    "ssl.protocol": DynamicConfig("ssl.protocol", "STRING", "TLSv1.3", **_SECURITY),
    **_defs("ssl.provider ssl.secure.random.implementation", "STRING", None, **_SECURITY),
    "ssl.cipher.suites": DynamicConfig("ssl.cipher.suites", "LIST", "", **_SECURITY),
    "ssl.enabled.protocols": DynamicConfig(
        "ssl.enabled.protocols", "LIST", "TLSv1.2,TLSv1.3", **_SECURITY
    ),
    "ssl.keymanager.algorithm": DynamicConfig(
        "ssl.keymanager.algorithm", "STRING", "SunX509", **_SECURITY
    ),
    "ssl.trustmanager.algorithm": DynamicConfig(
        "ssl.trustmanager.algorithm", "STRING", "PKIX", **_SECURITY
    ),
    "ssl.endpoint.identification.algorithm": DynamicConfig(
        "ssl.endpoint.identification.algorithm", "STRING", "https", **_SECURITY
    ),
    "ssl.client.auth": DynamicConfig(
        "ssl.client.auth",
        "STRING",
        "none",
        choices=("required", "requested", "none"),
        **_SECURITY,
    ),
    "ssl.engine.factory.class": DynamicConfig(
        "ssl.engine.factory.class", "CLASS", None, **_SECURITY
    ),
    "sasl.mechanism.inter.broker.protocol": DynamicConfig(
        "sasl.mechanism.inter.broker.protocol", "STRING", "GSSAPI", **_SECURITY
    ),
    "sasl.jaas.config": DynamicConfig("sasl.jaas.config", "PASSWORD", None, **_SECURITY),
    "sasl.enabled.mechanisms": DynamicConfig(
        "sasl.enabled.mechanisms", "LIST", "GSSAPI", **_SECURITY
    ),
    "sasl.kerberos.service.name": DynamicConfig(
        "sasl.kerberos.service.name", "STRING", None, **_KERBEROS
    ),
    "sasl.kerberos.kinit.cmd": DynamicConfig(
        "sasl.kerberos.kinit.cmd", "STRING", "/usr/bin/kinit", **_KERBEROS
    ),
    "sasl.kerberos.ticket.renew.window.factor": DynamicConfig(
        "sasl.kerberos.ticket.renew.window.factor", "DOUBLE", "0.8", **_KERBEROS
    ),
    "sasl.kerberos.ticket.renew.jitter": DynamicConfig(
        "sasl.kerberos.ticket.renew.jitter", "DOUBLE", "0.05", **_KERBEROS
    ),
    "sasl.kerberos.min.time.before.relogin": DynamicConfig(
        "sasl.kerberos.min.time.before.relogin", "LONG", "60000", **_KERBEROS
    ),
    "sasl.kerberos.principal.to.local.rules": DynamicConfig(
        "sasl.kerberos.principal.to.local.rules", "LIST", "DEFAULT", **_KERBEROS
    ),
    "sasl.login.refresh.window.factor": DynamicConfig(
        "sasl.login.refresh.window.factor", "DOUBLE", "0.8", **_SECURITY
    ),
    "sasl.login.refresh.window.jitter": DynamicConfig(
        "sasl.login.refresh.window.jitter", "DOUBLE", "0.05", **_SECURITY
    ),
    "sasl.login.refresh.min.period.seconds": DynamicConfig(
        "sasl.login.refresh.min.period.seconds", "SHORT", "60", **_SECURITY
    ),
    "sasl.login.refresh.buffer.seconds": DynamicConfig(
        "sasl.login.refresh.buffer.seconds", "SHORT", "300", **_SECURITY
    ),
    # thread counts (DynamicThreadPool, and the listeners' network threads)
    "num.network.threads": DynamicConfig(
        "num.network.threads", "INT", "3", 1, thread_count=True, not_applied=NOT_APPLIED_THREADS
    ),
    "num.io.threads": DynamicConfig(
        "num.io.threads", "INT", "8", 1, thread_count=True, not_applied=NOT_APPLIED_THREADS
    ),
    "num.replica.fetchers": DynamicConfig(
        "num.replica.fetchers", "INT", "1", thread_count=True, not_applied=NOT_APPLIED_THREADS
    ),
    "num.recovery.threads.per.data.dir": DynamicConfig(
        "num.recovery.threads.per.data.dir",
        "INT",
        "1",
        1,
        thread_count=True,
        not_applied=NOT_APPLIED_THREADS,
    ),
    "background.threads": DynamicConfig(
        "background.threads", "INT", "10", 1, thread_count=True, not_applied=NOT_APPLIED_THREADS
    ),
    "metric.reporters": DynamicConfig(
        "metric.reporters", "LIST", "", not_applied="kafkapy runs no metrics reporters"
    ),
    # the producer state (DynamicProducerStateManagerConfig)
    "producer.id.expiration.ms": DynamicConfig(
        "producer.id.expiration.ms",
        "INT",
        "86400000",
        1,
        not_applied="kafkapy does not expire idle producer ids",
    ),
    "transaction.partition.verification.enable": DynamicConfig(
        "transaction.partition.verification.enable",
        "BOOLEAN",
        "true",
        not_applied="read from server.properties at start",
    ),
    # tiered storage (DynamicRemoteLogConfig)
    **_defs(
        "remote.log.manager.copy.max.bytes.per.second "
        "remote.log.manager.fetch.max.bytes.per.second",
        "LONG",
        str(LONG_MAX),
        minimum=1,
        not_applied="kafkapy has no tiered storage",
    ),
    "remote.log.index.file.cache.total.size.bytes": DynamicConfig(
        "remote.log.index.file.cache.total.size.bytes",
        "LONG",
        "1073741824",
        1,
        not_applied="kafkapy has no tiered storage",
    ),
    "remote.fetch.max.wait.ms": DynamicConfig(
        "remote.fetch.max.wait.ms", "INT", "500", 1, not_applied="kafkapy has no tiered storage"
    ),
    # replication throttles (QuotaConfigs.brokerQuotaConfigs)
    **_defs(
        "leader.replication.throttled.rate follower.replication.throttled.rate "
        "replica.alter.log.dirs.io.max.bytes.per.second",
        "LONG",
        str(LONG_MAX),
        minimum=0,
        not_applied="kafkapy does not throttle replication",
    ),
}
# connection limits that are cluster-wide when given with a listener prefix too
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset(
    {"max.connections", "max.connection.creation.rate", "num.network.threads"}
)
PASSWORD_CONFIGS = tuple(n for n, d in DYNAMIC_CONFIGS.items() if d.type == "PASSWORD")
LISTENER_BINDINGS = frozenset(
    {"listeners", "advertised.listeners", "listener.security.protocol.map"}
)


class DynamicConfigError(ValueError):
    """A dynamic broker config change Kafka refuses; ``code`` says how (Kafka's error name)."""

    def __init__(self, message: str, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.code = code


def base_name(name: str) -> str:
    """The config a listener-prefixed name sets (``listener.name.l.ssl.keystore.type`` ->
    ``ssl.keystore.type``); other names unchanged."""
    m = _LISTENER_PREFIX.match(name)
    return m.group(1) if m else name


def is_dynamic(name: str) -> bool:
    """Whether Kafka 4.4 lets AlterConfigs change this exact broker config (the unprefixed
    name): its update mode in the definition table, else kafkapy's own list."""
    d = definitions("broker").get(name)
    if d is not None:
        return d.dynamic
    return (
        name in DYNAMIC_CONFIGS
        or name in DYNAMIC_BROKER_KEYS
        or name in CLEANER_CONFIGS
        or is_connection_config(name)
    )


def config_type(name: str) -> str | None:
    """Kafka's type of a broker config (listener prefix and SASL mechanism prefix stripped),
    None when Kafka does not define it."""
    known = broker_type(name)
    if known is not None:
        return known
    base = base_name(name)
    if base in DYNAMIC_CONFIGS:
        return DYNAMIC_CONFIGS[base].type
    if base in SYNONYM_OF:
        return TOPIC_CONFIGS[SYNONYM_OF[base]].type
    if base in CLEANER_CONFIGS:
        return CLEANER_CONFIGS[base][0]
    if base.endswith(PASSWORD_CONFIGS):  # listener.name.l.<mechanism>.sasl.jaas.config
        return "PASSWORD"
    return None


def is_sensitive(name: str) -> bool:
    """DescribeConfigs hides the value (Kafka's KafkaConfig.maybeSensitive: a password, or a
    config whose type is unknown, such as a custom one)."""
    return config_type(name) in (None, "PASSWORD")


def _parse(d: DynamicConfig, name: str, value: str) -> str | None:
    """Kafka's ConfigDef parsing and validators for ``d``; the error message, else None."""
    bad = f"Invalid value {value} for configuration {name}"
    v = value.strip()
    if d.type == "BOOLEAN":
        return (
            None
            if v.lower() in ("true", "false")
            else (f"{bad}: Expected value to be either true or false")
        )
    if d.type in _RANGES:
        try:
            n = int(v)
        except ValueError:
            return f"{bad}: Not a number of type {d.type}"
        lo, hi = _RANGES[d.type]
        if not lo <= n <= hi:
            return f"{bad}: Not a number of type {d.type}"
        if d.minimum is not None and n < d.minimum:
            return f"{bad}: Value must be at least {int(d.minimum)}"
        return None
    if d.type == "DOUBLE":
        try:
            float(v)
        except ValueError:
            return f"{bad}: Not a number of type DOUBLE"
        return None
    if d.choices and v not in d.choices:
        return f"{bad}: String must be one of: {', '.join(d.choices)}"
    if d.type == "CLASS" or d.name in KNOWN_CLASSES:  # class names, one or a list
        known = KNOWN_CLASSES.get(d.name, set())
        for cls in (x.strip() for x in v.split(",")):
            if cls and cls not in known:
                return (
                    f"Invalid value {cls} for configuration {name}: Class {cls} could not be found."
                )
    return None


def _value_error(name: str, value: str) -> str | None:
    base = base_name(name)
    if is_connection_config(name) or is_connection_config(base):
        return validate_connection_config(name, value)
    if base in SYNONYM_OF or base in CLEANER_CONFIGS:
        if base in DYNAMIC_BROKER_KEYS or base in CLEANER_CONFIGS:
            msg = validate_log_value(base, value)
            return (
                None
                if msg is None
                else msg.replace(f"configuration {base}", f"configuration {name}")
            )
        return None
    d = DYNAMIC_CONFIGS.get(base)
    return None if d is None else _parse(d, name, value)


def _kafka_set(names: Iterable[str]) -> str:
    """A set of config names as Apache Kafka 4.4's (Java) messages print one: ``[a, b]``."""
    return "[" + ", ".join(sorted(names)) + "]"


def validate(layers: BrokerLayers, configs: Mapping[str, str], per_broker: bool) -> None:
    """Check a broker entity's complete new dynamic config set (this broker's when
    ``per_broker``, else the cluster-wide default) against the broker's current values
    (``layers``); raises DynamicConfigError with Kafka's message."""
    names = set(configs)
    static = {
        n
        for n in names
        if not is_dynamic(n) and is_broker_config_name(n)
    }
    if static:
        raise DynamicConfigError(f"Cannot update these configs dynamically: {_kafka_set(static)}")
    unprefixed = {n for n in names if n in DYNAMIC_CONFIGS and DYNAMIC_CONFIGS[n].listener_only}
    if unprefixed:
        raise DynamicConfigError(
            "These security configs can be dynamically updated only per-listener using the "
            f"listener prefix: {_kafka_set(unprefixed)}"
        )
    for name in sorted(names):
        msg = _value_error(name, configs[name])
        if msg is not None:
            raise DynamicConfigError(msg)
    if not per_broker:
        broker_only = {
            n
            for n in names
            if (n in DYNAMIC_CONFIGS and DYNAMIC_CONFIGS[n].per_broker)
            or (n != base_name(n) and base_name(n) not in CLUSTER_LEVEL_LISTENER_CONFIGS)
        }
        if broker_only:
            raise DynamicConfigError(
                "Cannot update these configs at default cluster level, broker id must be "
                f"specified: {_kafka_set(broker_only)}"
            )
    bindings = names & LISTENER_BINDINGS
    if bindings:
        raise DynamicConfigError(
            f"Cannot update these configs dynamically: {_kafka_set(bindings)}: kafkapy binds and "
            "registers its listeners at start; change them in server.properties and restart"
        )
    for name in sorted(names):
        d = DYNAMIC_CONFIGS.get(name)
        if d is not None and d.thread_count:
            _check_thread_count(name, int(configs[name].strip()), layers, d)


def config_error(
    configs: Mapping[str, str], per_broker: bool = True, layers: BrokerLayers | None = None
) -> str | None:
    """:func:`validate`'s message for ``configs`` (a broker at its defaults unless ``layers``
    are given), None when Kafka would accept them."""
    try:
        validate(layers or BrokerLayers({}, {}, {}), configs, per_broker)
    except DynamicConfigError as e:
        return str(e)
    return None


def _check_thread_count(name: str, new: int, layers: BrokerLayers, d: DynamicConfig) -> None:
    """DynamicThreadPool's rule, against the value in force."""
    current = layers.value(name)
    try:
        old = int(current.strip()) if current is not None else int(d.default or 1)
    except ValueError:
        old = int(d.default or 1)
    if new == old:
        return
    why = f"Dynamic thread count update validation failed for {name}={new}"
    if new <= 0:
        why += ", value should be at least 1"
    elif new < old // 2:
        why += f", value should be at least half the current value {old}"
    elif new > old * 2:
        why += f", value should not be greater than double the current value {old}"
    else:
        return
    raise DynamicConfigError(f"Invalid dynamic configuration: {why}")


def refuse_passwords(configs: Mapping[str, str], per_broker: bool, resource: str) -> None:
    """Kafka stores password configs only encoded with ``password.encoder.secret``
    (DynamicBrokerConfig.toPersistentProps); kafkapy refuses them as Kafka does without one.
    Checked when the change would be stored (not for validate_only), as Kafka does."""
    passwords = sorted(n for n in configs if base_name(n).endswith(PASSWORD_CONFIGS))
    if not passwords:
        return
    why = (
        "Password config can be defined only at broker level"
        if not per_broker
        else "Password encoder secret not configured"
    )
    raise DynamicConfigError(
        f"Invalid config value for resource ConfigResource(type=BROKER, name='{resource}'): "
        f"{why} (kafkapy does not store dynamic password configs: set "
        f"{', '.join(passwords)} in server.properties)",
        code="invalid_config",
    )


def warn_not_applied(entity: str, configs: Mapping[str, str], before: Mapping[str, str]) -> None:
    """One warning per config just set on a broker entity that kafkapy stores but does not act
    on (custom configs included)."""
    for name, value in configs.items():
        if before.get(name) == value:
            continue
        base = base_name(name)
        d = DYNAMIC_CONFIGS.get(base)
        if d is not None and d.not_applied:
            why = d.not_applied
        elif base in SYNONYM_OF and TOPIC_CONFIGS[SYNONYM_OF[base]].not_applied:
            why = TOPIC_CONFIGS[SYNONYM_OF[base]].not_applied
        elif is_sensitive(name) and config_type(name) is None:
            why = "not a config kafkapy knows (a custom config)"
        else:
            continue
        shown = "[hidden]" if is_sensitive(name) else value
        log.warning(
            "broker config accepted, not applied entity=%s config=%s value=%s reason=%r",
            entity,
            name,
            shown,
            why,
        )
