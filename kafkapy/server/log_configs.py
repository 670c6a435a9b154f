"""Topic-level configs: their types, defaults, broker synonyms, validation, and the LogConfig they
produce.

A topic config's value comes from the topic's override (/config/topics/T), else from its broker
synonym in server.properties, else Kafka's default. DescribeConfigs reports the source and the
synonyms in that order, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkapy.storage.log import LogConfig

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


def _d(name, type_, default, synonyms, minimum=None, choices=None) -> TopicConfigDef:
    return TopicConfigDef(name, type_, default, tuple(synonyms), minimum, choices)


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
        _d("min.cleanable.dirty.ratio", "DOUBLE", "0.5", ["log.cleaner.min.cleanable.ratio"], 0),
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
            if d.minimum is not None and n < d.minimum:
                return f"{prefix}: Value must be at least {int(d.minimum)}"
        elif d.type == "DOUBLE":
            x = float(v)
            if d.minimum is not None and x < d.minimum:
                return f"{prefix}: Value must be at least {d.minimum}"
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


def effective_topic_config(
    broker_props: Mapping[str, str], overrides: Mapping[str, str]
) -> dict[str, tuple[str | None, str, list[tuple[str, str, str]]]]:
    """For every topic config: (value, source, synonyms) where source is Kafka's config source name
    (DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG) and synonyms are
    (name, value, source) from most to least specific."""
    out = {}
    for name, d in TOPIC_CONFIGS.items():
        synonyms: list[tuple[str, str, str]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], "DYNAMIC_TOPIC_CONFIG"))
        for syn in d.synonyms:
            raw = broker_props.get(syn)
            if raw is not None:
                synonyms.append((syn, raw, "STATIC_BROKER_CONFIG"))
        if d.default is not None:
            synonyms.append((d.synonyms[0] if d.synonyms else name, d.default, "DEFAULT_CONFIG"))
        if name in overrides:
            value, source = overrides[name], "DYNAMIC_TOPIC_CONFIG"
        else:
            value, source = d.default, "DEFAULT_CONFIG"
            for syn in d.synonyms:
                bv = broker_synonym_value(broker_props, syn)
                if bv is not None:
                    value, source = bv, "STATIC_BROKER_CONFIG"
                    break
        out[name] = (value, source, synonyms)
    return out


def log_config_for(broker_props: Mapping[str, str], overrides: Mapping[str, str]) -> LogConfig:
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
    )
