"""Topic-level configs: their types, defaults, broker synonyms, validation, and the LogConfig they
produce.

A topic config's value comes from the topic's override (/config/topics/T), else from its broker
synonyms: first a dynamic per-broker value (/config/brokers/<id>), then a dynamic cluster-wide
default (/config/brokers/<default>), then server.properties, else Kafka's default.
DescribeConfigs reports the source and the synonyms in that order, as Kafka does.

Among the broker configs that may change at run time (AlterConfigs / IncrementalAlterConfigs on a
broker resource, server/config/dynamic_broker_configs.py) are the topic-config synonyms and the log
cleaner's settings, as in Kafka's DynamicLogConfig and DynamicLogCleaner; their values are
validated like the topic configs (validate_broker_value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkapy.storage.config import LogConfig

from .config_definitions import definitions
from .topic_configs import (  # validate_topic_configs: also imported from here by callers
    LONG_MAX,
    TOPIC_CONFIGS,
    validate_topic_config,
    validate_topic_configs,  # noqa: F401
)

_UNIT_MS = {"minutes": 60_000, "hours": 3_600_000}


def broker_synonym_value(broker_props: Mapping[str, str], key: str) -> str | None:
    """The broker-level value of a synonym as a topic value (hours/minutes scaled to ms)."""
    raw = broker_props.get(key)
    if raw is None:
        return None
    for unit, factor in _UNIT_MS.items():
        if key.endswith("." + unit):
            return str(int(raw) * factor)
    return raw


# ---- dynamic broker configs ---------------------------------------------------------------

# Broker synonym -> topic config (for validating a dynamic broker value like its topic config).
SYNONYM_OF: dict[str, str] = {syn: d.name for d in TOPIC_CONFIGS.values() for syn in d.synonyms}
# Log cleaner settings that Kafka reconfigures at run time: name -> (type, minimum, default).
CLEANER_CONFIGS: dict[str, tuple[str, float, str]] = {
    "log.cleaner.threads": ("INT", 0, "1"),
    "log.cleaner.dedupe.buffer.size": ("LONG", 0, "134217728"),
    "log.cleaner.io.buffer.size": ("INT", 0, "524288"),
    "log.cleaner.io.buffer.load.factor": ("DOUBLE", 0, "0.9"),
    "log.cleaner.io.max.bytes.per.second": ("DOUBLE", 0, "1.7976931348623157E308"),
    "log.cleaner.backoff.ms": ("LONG", 0, "15000"),
}
# the topic-config synonyms Kafka 4.4 reconfigures at run time (DynamicLogConfig), and the cleaner's
DYNAMIC_BROKER_KEYS = frozenset(
    name
    for name in (*SYNONYM_OF, *CLEANER_CONFIGS)
    if name in definitions("broker") and definitions("broker")[name].dynamic
)


def validate_broker_value(name: str, value: str) -> str | None:
    """An error message if ``value`` is not valid for ``name``, a topic-config synonym or a log
    cleaner setting (validated like the topic config, hours and minutes scaled), else None."""
    if name in CLEANER_CONFIGS:
        type_, minimum, _ = CLEANER_CONFIGS[name]
        prefix = f"Invalid value {value} for configuration {name}"
        try:
            x = float(value) if type_ == "DOUBLE" else int(value.strip())
        except ValueError:
            return f"{prefix}: Not a number of type {type_}"
        if x < minimum:
            return f"{prefix}: Value must be at least {minimum}"
        return None
    topic_name = SYNONYM_OF[name]
    topic_value = value
    for unit, factor in _UNIT_MS.items():
        if name.endswith("." + unit):
            try:
                topic_value = str(int(value.strip()) * factor)
            except ValueError:
                return f"Invalid value {value} for configuration {name}: Not a number of type INT"
    msg = validate_topic_config(topic_name, topic_value)
    if msg is None:
        return None
    return msg.replace(f"configuration {topic_name}", f"configuration {name}")


@dataclass(frozen=True, slots=True)
class BrokerLayers:
    """A broker's config layers, most specific first."""

    dynamic: Mapping[str, str]  # /config/brokers/<id>
    dynamic_default: Mapping[str, str]  # /config/brokers/<default>
    static: Mapping[str, str]  # server.properties and --override

    def value(self, key: str) -> str | None:
        for layer in (self.dynamic, self.dynamic_default, self.static):
            if key in layer:
                return layer[key]
        return None

    def merged(self) -> dict[str, str]:
        """Every given config, the most specific layer's value winning."""
        return {**self.static, **self.dynamic_default, **self.dynamic}

    def source(self, key: str) -> str | None:
        if key in self.dynamic:
            return "DYNAMIC_BROKER_CONFIG"
        if key in self.dynamic_default:
            return "DYNAMIC_DEFAULT_BROKER_CONFIG"
        if key in self.static:
            return "STATIC_BROKER_CONFIG"
        return None


def broker_layers(broker) -> BrokerLayers:
    return BrokerLayers(
        getattr(broker, "dynamic_configs", None) or {},
        getattr(broker, "dynamic_default_configs", None) or {},
        broker.broker_props,
    )


def broker_config_synonyms(
    layers: BrokerLayers, name: str, sensitive: bool = False
) -> list[tuple[str, str | None, str]]:
    """Kafka's ConfigHelper.configSynonyms of a broker config: (name, value, source) of each of
    its broker synonyms set in each layer (dynamic, dynamic default, static, then the defaults),
    dropping those before the config itself (log.retention.hours's default is no synonym of
    log.retention.ms)."""
    d = definitions("broker").get(name)
    names = d.synonyms if d is not None and d.synonyms else (name,)
    defaults = {n: x.default for n in names if (x := definitions("broker").get(n)) is not None}
    found: list[tuple[str, str | None, str]] = []
    for layer, source in (
        (layers.dynamic, "DYNAMIC_BROKER_CONFIG"),
        (layers.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        (layers.static, "STATIC_BROKER_CONFIG"),
        (defaults, "DEFAULT_CONFIG"),
    ):
        for n in names:
            value = layer.get(n)
            if value is not None:
                found.append((n, None if sensitive else value, source))
    while found and found[0][0] != name:
        found.pop(0)
    return found


def _as_layers(broker_props) -> BrokerLayers:
    if isinstance(broker_props, BrokerLayers):
        return broker_props
    return BrokerLayers({}, {}, broker_props)


def effective_topic_config(
    broker_props: Mapping[str, str] | BrokerLayers, overrides: Mapping[str, str]
) -> dict[str, tuple[str | None, str, list[tuple[str, str | None, str]]]]:
    """For every topic config: (value, source, synonyms) where source is Kafka's config source name
    (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG, DEFAULT_CONFIG) and synonyms are (name, value, source) from most to
    least specific (Kafka's order: every dynamic broker synonym, then the dynamic defaults, then
    server.properties, then the default, of the first broker synonym's synonyms, from that
    synonym on: Kafka's ConfigHelper.configSynonyms). The source is the first synonym's, else
    DEFAULT_CONFIG."""
    layers = _as_layers(broker_props)
    sources = (
        (layers.dynamic, "DYNAMIC_BROKER_CONFIG"),
        (layers.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        (layers.static, "STATIC_BROKER_CONFIG"),
    )
    out = {}
    for name, d in TOPIC_CONFIGS.items():
        synonyms: list[tuple[str, str | None, str]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], "DYNAMIC_TOPIC_CONFIG"))
        if d.synonyms:
            synonyms += broker_config_synonyms(layers, d.synonyms[0])
        if name in overrides:
            value: str | None = overrides[name]
        else:
            value = d.default
            found = False
            for layer, _ in sources:
                for syn in d.synonyms:
                    bv = broker_synonym_value(layer, syn)
                    if bv is not None:
                        value, found = bv, True
                        break
                if found:
                    break
        source = synonyms[0][2] if synonyms else "DEFAULT_CONFIG"
        out[name] = (value, source, synonyms)
    return out


def _policy(value: str | None) -> tuple[str, ...]:
    items = tuple(x.strip() for x in (value or "delete").split(",") if x.strip())
    return items or ("delete",)


def _timestamp_bound(eff: Mapping[str, str | None], side: str) -> int:
    """message.timestamp.<side>.max.ms."""
    return int(eff[f"message.timestamp.{side}.max.ms"] or LONG_MAX)


def log_config_for(
    broker_props: Mapping[str, str] | BrokerLayers, overrides: Mapping[str, str]
) -> LogConfig:
    """The storage settings of a topic with these overrides on this broker."""
    eff = {k: v[0] for k, v in effective_topic_config(broker_props, overrides).items()}
    flush_ms = eff["flush.ms"]
    return LogConfig(
        segment_bytes=int(eff["segment.bytes"]),
        segment_ms=int(eff["segment.ms"]),
        index_interval_bytes=int(eff["index.interval.bytes"]),
        max_message_bytes=int(eff["max.message.bytes"]),
        message_timestamp_type=str(eff["message.timestamp.type"]),
        flush_interval_messages=int(eff["flush.messages"]),
        flush_interval_ms=None if flush_ms is None or int(flush_ms) == LONG_MAX else int(flush_ms),
        segment_index_bytes=int(eff["segment.index.bytes"]),
        cleanup_policy=_policy(eff["cleanup.policy"]),
        retention_ms=int(eff["retention.ms"]),
        retention_bytes=int(eff["retention.bytes"]),
        file_delete_delay_ms=int(eff["file.delete.delay.ms"]),
        delete_retention_ms=int(eff["delete.retention.ms"]),
        min_compaction_lag_ms=int(eff["min.compaction.lag.ms"]),
        max_compaction_lag_ms=int(eff["max.compaction.lag.ms"]),
        min_cleanable_dirty_ratio=float(eff["min.cleanable.dirty.ratio"]),
        compression_type=str(eff["compression.type"]),
        message_timestamp_before_max_ms=_timestamp_bound(eff, "before"),
        message_timestamp_after_max_ms=_timestamp_bound(eff, "after"),
        min_insync_replicas=int(eff["min.insync.replicas"]),
        unclean_leader_election_enable=str(eff["unclean.leader.election.enable"]).lower() == "true",
    )


def log_config_for_broker(broker, overrides: Mapping[str, str]) -> LogConfig:
    """``log_config_for`` with every config layer of a running broker."""
    return log_config_for(broker_layers(broker), overrides)


def apply_log_configs(broker, topics: list[str] | None = None) -> None:
    """Recompute and apply the LogConfig of open logs (all topics, or the ones named) after a
    topic or broker config change: it takes effect at once."""
    registry = broker.topics
    manager = broker.logs
    if registry is None or manager is None:
        return
    names = list(registry.by_name) if topics is None else topics
    for name in names:
        info = registry.get(name)
        if info is None:
            continue
        cfg = log_config_for_broker(broker, info.configs)
        for p in info.partitions:
            plog = manager.get_log(name, p)
            if plog is not None:
                plog.update_config(cfg)
    manager.default_config = log_config_for_broker(broker, {})
