"""Topic-level configs: their types, defaults, broker synonyms, validation, and the LogConfig they
produce.

A topic config's value comes from the topic's override (/config/topics/T), else from its broker
synonyms: first a dynamic per-broker value (/config/brokers/<id>), then a dynamic cluster-wide
default (/config/brokers/<default>), then server.properties, else Kafka's default.
DescribeConfigs reports the source and the synonyms in that order, as Kafka does.

Broker configs that may change at run time (AlterConfigs / IncrementalAlterConfigs on a broker
resource) are the topic-config synonyms and the log cleaner's settings, as in Kafka's
DynamicLogConfig and DynamicLogCleaner; their values are validated like the topic configs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkapy.storage.config import LogConfig

LONG_MAX = 9223372036854775807


@dataclass(frozen=True, slots=True)
class TopicConfigDef:
    name: str
    type: (
        str  # BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD (Kafka's ConfigType)
    )
    default: str | None
    synonyms: tuple[str, ...]  # broker configs, most specific first
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    maximum: float | None = None


def _d(name, type_, default, synonyms, minimum=None, choices=None, maximum=None) -> TopicConfigDef:
    return TopicConfigDef(name, type_, default, tuple(synonyms), minimum, choices, maximum)


TOPIC_CONFIGS: dict[str, TopicConfigDef] = {
    d.name: d
    for d in [
        _d(
            "cleanup.policy",
            "LIST",
            "delete",
            ["log.cleanup.policy"],
            choices=("delete", "compact"),
        ),
        _d(
            "compression.type",
            "STRING",
            "producer",
            ["compression.type"],
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _d("delete.retention.ms", "LONG", "86400000", ["log.cleaner.delete.retention.ms"], 0),
        _d("file.delete.delay.ms", "LONG", "60000", ["log.segment.delete.delay.ms"], 0),
        _d("flush.messages", "LONG", str(LONG_MAX), ["log.flush.interval.messages"], 1),
        _d("flush.ms", "LONG", str(LONG_MAX), ["log.flush.interval.ms"], 0),
        _d("index.interval.bytes", "INT", "4096", ["log.index.interval.bytes"], 0),
        _d(
            "max.compaction.lag.ms", "LONG", str(LONG_MAX), ["log.cleaner.max.compaction.lag.ms"], 1
        ),
        _d("max.message.bytes", "INT", "1048588", ["message.max.bytes"], 0),
        _d(
            "message.timestamp.after.max.ms",
            "LONG",
            "3600000",
            ["log.message.timestamp.after.max.ms"],
            0,
        ),
        _d(
            "message.timestamp.before.max.ms",
            "LONG",
            str(LONG_MAX),
            ["log.message.timestamp.before.max.ms"],
            0,
        ),
        _d(
            "message.timestamp.type",
            "STRING",
            "CreateTime",
            ["log.message.timestamp.type"],
            choices=("CreateTime", "LogAppendTime"),
        ),
        _d(
            "min.cleanable.dirty.ratio",
            "DOUBLE",
            "0.5",
            ["log.cleaner.min.cleanable.ratio"],
            0,
            maximum=1,
        ),
        _d("min.compaction.lag.ms", "LONG", "0", ["log.cleaner.min.compaction.lag.ms"], 0),
        _d("min.insync.replicas", "INT", "1", ["min.insync.replicas"], 1),
        _d("preallocate", "BOOLEAN", "false", ["log.preallocate"]),
        _d("retention.bytes", "LONG", "-1", ["log.retention.bytes"]),
        _d(
            "retention.ms",
            "LONG",
            "604800000",
            ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
            -1,
        ),
        _d("segment.bytes", "INT", "1073741824", ["log.segment.bytes"], 14),
        _d("segment.index.bytes", "INT", "10485760", ["log.index.size.max.bytes"], 4),
        _d("segment.jitter.ms", "LONG", "0", ["log.roll.jitter.ms", "log.roll.jitter.hours"], 0),
        _d("segment.ms", "LONG", "604800000", ["log.roll.ms", "log.roll.hours"], 1),
        _d(
            "unclean.leader.election.enable", "BOOLEAN", "false", ["unclean.leader.election.enable"]
        ),
    ]
}

_UNIT_MS = {"minutes": 60_000, "hours": 3_600_000}
_INT_RANGES = {
    "SHORT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "LONG": (-(2**63), 2**63 - 1),
}


def broker_synonym_value(broker_props: Mapping[str, str], key: str) -> str | None:
    """The broker-level value of a synonym as a topic value (hours/minutes scaled to ms)."""
    raw = broker_props.get(key)
    if raw is None:
        return None
    for unit, factor in _UNIT_MS.items():
        if key.endswith("." + unit):
            return str(int(raw) * factor)
    return raw


def validate_topic_config(name: str, value: str | None) -> str | None:
    """Return an error message if `name=value` is not a valid topic config, else None."""
    d = TOPIC_CONFIGS.get(name)
    if d is None:
        return f"Unknown topic config name: {name}"
    if value is None:
        return None
    v = value.strip()
    prefix = f"Invalid value {value} for configuration {name}"
    try:
        if d.type in ("INT", "LONG", "SHORT"):
            n = int(v)
            lo, hi = _INT_RANGES[d.type]
            if not lo <= n <= hi:
                return f"{prefix}: Not a number of type {d.type}"
            if d.minimum is not None and n < d.minimum:
                return f"{prefix}: Value must be at least {int(d.minimum)}"
            if d.maximum is not None and n > d.maximum:
                return f"{prefix}: Value must be no more than {int(d.maximum)}"
        elif d.type == "DOUBLE":
            x = float(v)
            if d.minimum is not None and x < d.minimum:
                return f"{prefix}: Value must be at least {float(d.minimum)}"
            if d.maximum is not None and x > d.maximum:
                return f"{prefix}: Value must be no more than {float(d.maximum)}"
        elif d.type == "BOOLEAN":
            if v.lower() not in ("true", "false"):
                return f"{prefix}: Expected value to be either true or false"
    except ValueError:
        return f"{prefix}: Not a number of type {d.type}"
    if d.choices is not None:
        items = [s.strip() for s in v.split(",")] if d.type == "LIST" else [v]
        bad = [s for s in items if s not in d.choices]
        if bad or not items:
            return f"{prefix}: String must be one of: {', '.join(d.choices)}"
    return None


def validate_topic_configs(configs: Mapping[str, str | None]) -> str | None:
    """Each value, then Kafka's cross-config rules; the first error message, else None."""
    for name, value in configs.items():
        msg = validate_topic_config(name, value)
        if msg is not None:
            return msg
    lo = configs.get("min.compaction.lag.ms")
    hi = configs.get("max.compaction.lag.ms")
    if lo is not None and hi is not None and int(hi) < int(lo):
        return (
            f"conflict topic config setting max.compaction.lag.ms ({hi}) < "
            f"min.compaction.lag.ms ({lo})"
        )
    return None


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
DYNAMIC_BROKER_KEYS = frozenset(SYNONYM_OF) | frozenset(CLEANER_CONFIGS)


def validate_broker_config(name: str, value: str | None) -> str | None:
    """An error message if ``name`` cannot be set dynamically to ``value``, else None."""
    if name not in DYNAMIC_BROKER_KEYS:
        return f"Cannot update these configs dynamically: Set({name})"
    if value is None:
        return None
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


def _as_layers(broker_props) -> BrokerLayers:
    if isinstance(broker_props, BrokerLayers):
        return broker_props
    return BrokerLayers({}, {}, broker_props)


def effective_topic_config(
    broker_props: Mapping[str, str] | BrokerLayers, overrides: Mapping[str, str]
) -> dict[str, tuple[str | None, str, list[tuple[str, str, str]]]]:
    """For every topic config: (value, source, synonyms) where source is Kafka's config source name
    (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG, DEFAULT_CONFIG) and synonyms are (name, value, source) from most to
    least specific (Kafka's order: every dynamic broker synonym, then the dynamic defaults, then
    server.properties, then the default)."""
    layers = _as_layers(broker_props)
    sources = (
        (layers.dynamic, "DYNAMIC_BROKER_CONFIG"),
        (layers.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        (layers.static, "STATIC_BROKER_CONFIG"),
    )
    out = {}
    for name, d in TOPIC_CONFIGS.items():
        synonyms: list[tuple[str, str, str]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], "DYNAMIC_TOPIC_CONFIG"))
        for layer, source in sources:
            for syn in d.synonyms:
                raw = layer.get(syn)
                if raw is not None:
                    synonyms.append((syn, raw, source))
        if d.default is not None:
            synonyms.append((d.synonyms[0] if d.synonyms else name, d.default, "DEFAULT_CONFIG"))
        if name in overrides:
            value, source = overrides[name], "DYNAMIC_TOPIC_CONFIG"
        else:
            value, source = d.default, "DEFAULT_CONFIG"
            found = False
            for layer, layer_source in sources:
                for syn in d.synonyms:
                    bv = broker_synonym_value(layer, syn)
                    if bv is not None:
                        value, source = bv, layer_source
                        found = True
                        break
                if found:
                    break
        out[name] = (value, source, synonyms)
    return out


def _policy(value: str | None) -> tuple[str, ...]:
    items = tuple(x.strip() for x in (value or "delete").split(",") if x.strip())
    return items or ("delete",)


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
        message_timestamp_before_max_ms=int(eff["message.timestamp.before.max.ms"]),
        message_timestamp_after_max_ms=int(eff["message.timestamp.after.max.ms"]),
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
