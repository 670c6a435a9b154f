"""Kafka 3.9's topic-level configs: type, default, broker synonyms and validation (pure data and
functions; layering and application live in server/config/log_configs.py).

The table holds every config of Kafka 3.9's LogConfig, including the deprecated ones current tools
still send (librdkafka's admin tests alter ``message.format.version``; kafka-reassign-partitions
sets the replication throttles). As Kafka 3.9 in ZooKeeper mode does, each is validated, stored and
described with its default and broker synonyms; the ones kafkapy has no machinery for are
accepted and not applied, and a warning says so when one is set (``not_applied``):

* ``message.format.version`` (deprecated): batches are always written in message format v2;
* ``message.downconversion.enable``: only Fetch v4+ is served, so nothing is ever down-converted;
* ``leader.replication.throttled.replicas``, ``follower.replication.throttled.replicas``:
  replication is not throttled;
* ``compression.gzip.level``, ``compression.lz4.level``, ``compression.zstd.level``: batches the
  broker recompresses use each codec's default level.

``message.timestamp.difference.max.ms`` (deprecated) is applied as Kafka 3.9 applies it: it bounds
timestamps on a side whose before/after setting is left at Long.MAX_VALUE. The tiered-storage
configs validate as in a ZooKeeper-mode cluster without remote storage: ``remote.storage.enable``,
``remote.log.copy.disable`` and ``remote.log.delete.on.disable`` may only be false, and
``local.retention.*`` are stored without effect (as they have none in Kafka without tiered
storage).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

log = logging.getLogger("kafkapy.configs")

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
    # a further rule on a well-typed value: (name, value) -> Kafka's error message, or None
    check: Callable[[str, str], str | None] | None = None
    not_applied: str | None = None  # accepted and stored but not acted on by kafkapy: why


def _d(
    name, type_, default, synonyms, minimum=None, choices=None, maximum=None, **rules
) -> TopicConfigDef:
    return TopicConfigDef(name, type_, default, tuple(synonyms), minimum, choices, maximum, **rules)


# Kafka 3.9's MetadataVersion strings (release-IVn, and the bare release for production ones).
_RELEASES_0 = ["0.8.0", "0.8.1", "0.8.2", "0.9.0"]
_IVS = {
    "0.10.0": 2, "0.10.1": 3, "0.10.2": 1, "0.11.0": 3, "1.0": 1, "1.1": 1, "2.0": 2, "2.1": 3,
    "2.2": 2, "2.3": 2, "2.4": 2, "2.5": 1, "2.6": 1, "2.7": 3, "2.8": 2, "3.0": 2, "3.1": 1,
    "3.2": 1, "3.3": 4, "3.4": 1, "3.5": 3, "3.6": 3, "3.7": 5, "3.8": 1, "3.9": 1, "4.0": 2,
}  # fmt: skip
METADATA_VERSIONS = frozenset(
    _RELEASES_0
    + [f"{release}-IV{i}" for release, n in _IVS.items() for i in range(n)]
    + [release for release in _IVS if release != "4.0"]  # 4.0 is not production in 3.9
)


def _metadata_version(name: str, value: str) -> str | None:
    """Kafka's MetadataVersion.fromVersionString: 3 dotted parts for 0.x, 2 after (the rest of a
    longer string is ignored: 2.8.1 is 2.8)."""
    parts = value.split(".")
    keep = 3 if value.startswith("0.") else 2
    key = value if keep >= len(parts) else ".".join(parts[:keep])
    if key in METADATA_VERSIONS:
        return None
    return f"Invalid value {value} for configuration {name}: Version {value} is not a valid version"


def _gzip_level(name: str, value: str) -> str | None:
    level = int(value)
    if level > 9 or (level < 1 and level != -1):
        why = "Value must be between 1 and 9 or equal to -1"
        return f"Invalid value {level} for configuration {name}: {why}"
    return None


def _throttled_replicas(name: str, value: str) -> str | None:
    items = [s.strip() for s in value.split(",")] if value.strip() else []
    if all(re.fullmatch(r"([0-9]+:[0-9]+)?", s) for s in items) or "".join(items) == "*":
        return None
    return (
        f"Invalid value [{', '.join(items)}] for configuration {name}: {name} must be the literal "
        "'*' or a list of replicas in the following format: "
        "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
    )


def _only_false(message: str) -> Callable[[str, str], str | None]:
    """A rule refusing ``true`` with ``message`` (Kafka's tiered-storage checks)."""

    def check(name: str, value: str) -> str | None:
        return message if value.strip().lower() == "true" else None

    return check


_remote_storage = _only_false(
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
    "with remote log storage."
)
_remote_log_zk = _only_false(
    "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` "
    "under Zookeeper's mode."
)


NO_THROTTLING = "replication is not throttled"
DEFAULT_LEVEL = "batches the broker recompresses use the codec's default level"


TOPIC_CONFIGS: dict[str, TopicConfigDef] = {
    d.name: d
    for d in [
        _d(
            "cleanup.policy",
            "LIST",
            "delete",
            ["log.cleanup.policy"],
            choices=("compact", "delete"),  # in Kafka's order, as its error message lists them
        ),
        _d(
            "compression.type",
            "STRING",
            "producer",
            ["compression.type"],
            choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _d(
            "compression.gzip.level",
            "INT",
            "-1",
            ["compression.gzip.level"],
            check=_gzip_level,
            not_applied=DEFAULT_LEVEL,
        ),
        _d(
            "compression.lz4.level",
            "INT",
            "9",
            ["compression.lz4.level"],
            1,
            maximum=17,
            not_applied=DEFAULT_LEVEL,
        ),
        _d(
            "compression.zstd.level",
            "INT",
            "3",
            ["compression.zstd.level"],
            -131072,
            maximum=22,
            not_applied=DEFAULT_LEVEL,
        ),
        _d("delete.retention.ms", "LONG", "86400000", ["log.cleaner.delete.retention.ms"], 0),
        _d("file.delete.delay.ms", "LONG", "60000", ["log.segment.delete.delay.ms"], 0),
        _d("flush.messages", "LONG", str(LONG_MAX), ["log.flush.interval.messages"], 1),
        _d("flush.ms", "LONG", str(LONG_MAX), ["log.flush.interval.ms"], 0),
        _d(
            "follower.replication.throttled.replicas",
            "LIST",
            "",
            [],
            check=_throttled_replicas,
            not_applied=NO_THROTTLING,
        ),
        _d("index.interval.bytes", "INT", "4096", ["log.index.interval.bytes"], 0),
        _d(
            "leader.replication.throttled.replicas",
            "LIST",
            "",
            [],
            check=_throttled_replicas,
            not_applied=NO_THROTTLING,
        ),
        _d("local.retention.bytes", "LONG", "-2", ["log.local.retention.bytes"], -2),
        _d("local.retention.ms", "LONG", "-2", ["log.local.retention.ms"], -2),
        _d(
            "max.compaction.lag.ms", "LONG", str(LONG_MAX), ["log.cleaner.max.compaction.lag.ms"], 1
        ),
        _d("max.message.bytes", "INT", "1048588", ["message.max.bytes"], 0),
        _d(
            "message.downconversion.enable",
            "BOOLEAN",
            "true",
            ["log.message.downconversion.enable"],
            not_applied="only Fetch v4 and later is served, so records are never down-converted",
        ),
        _d(
            "message.format.version",
            "STRING",
            "3.0-IV1",
            ["log.message.format.version"],
            check=_metadata_version,
            not_applied="deprecated: batches are always written in message format v2",
        ),
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
            "message.timestamp.difference.max.ms",
            "LONG",
            str(LONG_MAX),
            ["log.message.timestamp.difference.max.ms"],
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
        _d("remote.log.copy.disable", "BOOLEAN", "false", [], check=_remote_log_zk),
        _d("remote.log.delete.on.disable", "BOOLEAN", "false", [], check=_remote_log_zk),
        _d("remote.storage.enable", "BOOLEAN", "false", [], check=_remote_storage),
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

_INT_RANGES = {
    "SHORT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "LONG": (-(2**63), 2**63 - 1),
}


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
    if d.check is not None:
        return d.check(name, v)
    return None


def warn_not_applied(topic: str, configs: Mapping[str, str | None]) -> None:
    """One warning per config just set on ``topic`` that kafkapy accepts but does not act on."""
    for name, value in configs.items():
        d = TOPIC_CONFIGS.get(name)
        if d is not None and d.not_applied:
            log.warning(
                "topic config accepted, not applied topic=%s config=%s value=%s reason=%r",
                topic,
                name,
                value,
                d.not_applied,
            )


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
