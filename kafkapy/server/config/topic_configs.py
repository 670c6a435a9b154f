"""Kafka 4.4's topic-level configs: type, default, broker synonyms and validation (pure data and
functions; layering and application live in server/config/log_configs.py).

Names, types, defaults, valid values and synonyms come from the definition table
(server/config/config_definitions.py, checked against the 4.4 jars). The 3.x configs Kafka 4.0
removed (``message.format.version``, ``message.downconversion.enable``,
``message.timestamp.difference.max.ms``) are unknown, refused as 4.4 refuses them ("Unknown topic
config name"). Each config is validated, stored and described as Kafka 4.4 does; the ones kafkapy
has no machinery for are accepted and not applied, and a warning says so when one is set
(``not_applied``):

* ``leader.replication.throttled.replicas``, ``follower.replication.throttled.replicas``:
  replication is not throttled;
* ``compression.gzip.level``, ``compression.lz4.level``, ``compression.zstd.level``: batches the
  broker recompresses use each codec's default level;
* ``errors.deadletterqueue.group.enable``: kafkapy has no share groups and no dead-letter queue;
* ``max.decompressed.message.bytes``: batches are not bounded by their decompressed size;
* ``remote.copy.lag.bytes``, ``remote.copy.lag.ms`` and ``local.retention.*``: kafkapy has no
  tiered storage (nor ``remote.log.copy.disable`` and ``remote.log.delete.on.disable``), and
  ``remote.storage.enable`` may only be false, as on a 4.4 broker without tiered storage.

One rule is looser than 4.4's: ``segment.bytes`` may be as small as 14 bytes (Kafka 3.x's
minimum; 4.4 asks for 1 MiB and keeps smaller segments to its internal ``internal.segment.bytes``),
because small segments are how kafkapy's own tests and users exercise rolling and retention.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .config_definitions import definitions

log = logging.getLogger("kafkapy.configs")

LONG_MAX = 9223372036854775807
# topic configs Kafka 3.x had and 4.0 removed: unknown to 4.4
REMOVED_TOPIC_CONFIGS = frozenset(
    {"message.format.version", "message.downconversion.enable",
     "message.timestamp.difference.max.ms"}
)  # fmt: skip


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

NO_THROTTLING = "replication is not throttled"
DEFAULT_LEVEL = "batches the broker recompresses use the codec's default level"
NO_TIERED_STORAGE = "kafkapy has no tiered storage"

# kafkapy's rules beyond the table's ranges and choices, and what it does not act on
_CHECKS: dict[str, Callable[[str, str], str | None]] = {
    "compression.gzip.level": _gzip_level,
    "follower.replication.throttled.replicas": _throttled_replicas,
    "leader.replication.throttled.replicas": _throttled_replicas,
    "remote.storage.enable": _remote_storage,
}
NOT_APPLIED: dict[str, str] = {
    "compression.gzip.level": DEFAULT_LEVEL,
    "compression.lz4.level": DEFAULT_LEVEL,
    "compression.zstd.level": DEFAULT_LEVEL,
    "follower.replication.throttled.replicas": NO_THROTTLING,
    "leader.replication.throttled.replicas": NO_THROTTLING,
    "errors.deadletterqueue.group.enable": "kafkapy has no share groups or dead-letter queue",
    "max.decompressed.message.bytes": "batches are not bounded by their decompressed size",
    "remote.copy.lag.bytes": NO_TIERED_STORAGE,
    "remote.copy.lag.ms": NO_TIERED_STORAGE,
    "local.retention.bytes": NO_TIERED_STORAGE,
    "local.retention.ms": NO_TIERED_STORAGE,
    "remote.log.copy.disable": NO_TIERED_STORAGE,
    "remote.log.delete.on.disable": NO_TIERED_STORAGE,
}
_MINIMUM_OVERRIDES = {"segment.bytes": 14}  # see the module doc
_RANGE = re.compile(r"^\[(-?[0-9.]+),\.\.\.(?:,(-?[0-9.]+))?\]$")


def _number(text: str) -> float:
    return float(text) if "." in text else int(text)


def _definition(name: str) -> TopicConfigDef:
    d = definitions("topic")[name]
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    m = _RANGE.match(d.valid)
    if m:
        minimum = _number(m.group(1))
        maximum = None if m.group(2) is None else _number(m.group(2))
    elif d.valid.startswith("[") and name not in _CHECKS:
        choices = tuple(s.strip() for s in d.valid[1:-1].split(","))
    minimum = _MINIMUM_OVERRIDES.get(name, minimum)
    return TopicConfigDef(
        name,
        d.type,
        d.default,
        d.synonyms,
        minimum,
        choices,
        maximum,
        check=_CHECKS.get(name),
        not_applied=NOT_APPLIED.get(name),
    )


TOPIC_CONFIGS: dict[str, TopicConfigDef] = {n: _definition(n) for n in definitions("topic")}

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
            f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
            f"max.compaction.lag.ms ({hi})"
        )
    return None
