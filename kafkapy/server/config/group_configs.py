"""Group configs (KIP-848's GROUP config resources, resource type 32) as Apache Kafka 4.4's
GroupConfig defines and validates them (sans-io).

A group's overrides (``consumer.session.timeout.ms``, ``consumer.heartbeat.interval.ms``,
``share.*``, ``streams.*``: the 21 group configs of server/config/config_definitions.py) are
stored in the metadata store at ``/config/groups/<group>``, beside the topic and broker config
entities (Kafka in ZooKeeper mode had no group configs; this path is kafkapy's choice, see
compat_tests/suites/FINDINGS.md). A config not overridden takes its broker synonym's value
(``group.consumer.session.timeout.ms`` ...).

Validation, first failure wins, as GroupConfig.validate: an unknown name ("Unknown group config
name: x"), then each value parsed as its type with its ConfigDef range or choices, then the
values against the broker's group.* bounds ("consumer.session.timeout.ms must be in the range
45000 to 60000 inclusive."), the streams assignor, session timeouts above heartbeat intervals and
the dead-letter topic's name. Every failure is INVALID_CONFIG.

What kafkapy applies: ``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms``, by
its KIP-848 group coordinator, and the ``share.*`` configs by its share groups (KIP-932,
server/share/settings.py) but ``share.assignment.interval.ms`` and
``share.renew.acknowledge.enable``; the streams configs are stored and described (kafkapy has no
streams groups), as are ``consumer.assignment.interval.ms`` (assignments are computed at once) and
the dead-letter queue settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .config_definitions import ConfigDefinition, definitions

# the group configs kafkapy stores and describes without acting on them: why
NOT_APPLIED = {
    name: f"kafkapy has no {name.split('.')[0]} groups"
    for name in definitions("group")
    if name.startswith("streams.")
}
NOT_APPLIED |= {
    "share.assignment.interval.ms": "kafkapy computes share assignments at once",
    "share.renew.acknowledge.enable": "kafkapy always accepts RENEW acknowledgements",
    "consumer.assignment.interval.ms": "kafkapy computes assignments at once",
    "errors.deadletterqueue.copy.record.enable": "kafkapy has no dead-letter queue",
    "errors.deadletterqueue.topic.name": "kafkapy has no dead-letter queue",
}
# group config -> the broker configs bounding it (minimum, maximum), GroupConfig.validateValues
_RANGES = {
    name: (f"group.{prefix}.min.{rest}", f"group.{prefix}.max.{rest}")
    for name, prefix, rest in (
        ("consumer.heartbeat.interval.ms", "consumer", "heartbeat.interval.ms"),
        ("consumer.session.timeout.ms", "consumer", "session.timeout.ms"),
        ("consumer.assignment.interval.ms", "consumer", "assignment.interval.ms"),
        ("share.heartbeat.interval.ms", "share", "heartbeat.interval.ms"),
        ("share.session.timeout.ms", "share", "session.timeout.ms"),
        ("share.record.lock.duration.ms", "share", "record.lock.duration.ms"),
        ("share.delivery.count.limit", "share", "delivery.count.limit"),
        ("share.partition.max.record.locks", "share", "partition.max.record.locks"),
        ("share.assignment.interval.ms", "share", "assignment.interval.ms"),
        ("streams.heartbeat.interval.ms", "streams", "heartbeat.interval.ms"),
        ("streams.session.timeout.ms", "streams", "session.timeout.ms"),
        ("streams.assignment.interval.ms", "streams", "assignment.interval.ms"),
    )
}
_SESSIONS = (
    ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"),
)
_INT = re.compile(r"^[+-]?\d+$")
_RANGE = re.compile(r"^\[(-?\d+),\.\.\.(?:,(-?\d+))?\]$")
_DURATION = re.compile(r"^by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$")


# (name, value, source, synonyms, type, read_only, sensitive), as config_descriptions.Row
GroupRow = tuple[str, str | None, str, list[tuple[str, str | None, str]], str | None, bool, bool]


class GroupConfigError(ValueError):
    """A group config change 4.4 refuses (INVALID_CONFIG), with its message."""


def broker_value(broker_configs: Mapping[str, str], name: str) -> str | None:
    """A broker config's value: as given (dynamic or static layers merged by the caller), else
    its 4.4 default."""
    if name in broker_configs:
        return broker_configs[name]
    d = definitions("broker").get(name)
    return None if d is None else d.default


def default_value(broker_configs: Mapping[str, str], d: ConfigDefinition) -> str | None:
    """A group config's value when the group does not override it: its broker synonym's."""
    if not d.synonyms:
        return d.default
    value = broker_value(broker_configs, d.synonyms[0])
    if d.name == "streams.assignor.name" and value is not None:  # the first of the assignors
        value = value.split(",")[0].strip()
    return value


def _parse_error(d: ConfigDefinition, value: str) -> str | None:
    bad = f"Invalid value {value} for configuration {d.name}"
    v = value.strip()
    if d.type in ("INT", "LONG"):
        if not _INT.match(v) or not -(2**31) <= int(v) < 2**31 and d.type == "INT":
            return f"{bad}: Not a number of type {d.type}"
        m = _RANGE.match(d.valid)
        if m and int(v) < int(m.group(1)):
            return f"{bad}: Value must be at least {m.group(1)}"
        if m and m.group(2) is not None and int(v) > int(m.group(2)):
            return f"{bad}: Value must be no more than {m.group(2)}"
    elif d.type == "BOOLEAN":
        if v.lower() not in ("true", "false"):
            return f"{bad}: Expected value to be either true or false"
    elif d.name == "share.auto.offset.reset":
        if v not in ("latest", "earliest") and not _DURATION.match(v):
            return (
                f"{bad}: Invalid value `{v}` for configuration {d.name}. The value must be either "
                "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
            )
    elif d.type == "STRING" and d.valid.startswith("["):
        choices = [c.strip() for c in d.valid[1:-1].split(",")]
        if v not in choices:
            return f"{bad}: String must be one of: {', '.join(choices)}"
    return None


def validate(configs: Mapping[str, str], broker_configs: Mapping[str, str]) -> None:
    """Check a group's complete new override set against the broker's group.* configs
    (``broker_configs``: the broker's given configs, all layers merged); raises
    GroupConfigError with Kafka 4.4's message."""
    table = definitions("group")
    for name in configs:
        if name not in table:
            raise GroupConfigError(f"Unknown group config name: {name}")
    tags = configs.get("streams.rack.aware.assignment.tags", "").strip()
    if tags:
        items = re.split(r"\s*,\s*", tags)
        if len(set(items)) != len(items):
            raise GroupConfigError(
                "streams.rack.aware.assignment.tags must not contain duplicate tag keys."
            )
    for name, value in configs.items():
        msg = _parse_error(table[name], value)
        if msg is not None:
            raise GroupConfigError(msg)

    def bound(name: str) -> int:
        return int(broker_value(broker_configs, name) or 0)

    for name, (lo_name, hi_name) in _RANGES.items():
        if name in configs and not bound(lo_name) <= int(configs[name]) <= bound(hi_name):
            raise GroupConfigError(
                f"{name} must be in the range {bound(lo_name)} to {bound(hi_name)} inclusive."
            )
        if name == "streams.session.timeout.ms" and "streams.num.standby.replicas" in configs:
            most = bound("group.streams.max.standby.replicas")
            if int(configs["streams.num.standby.replicas"]) > most:
                raise GroupConfigError(
                    f"streams.num.standby.replicas must be less than or equal to {most}"
                )
    assignor = configs.get("streams.assignor.name")
    if assignor is not None:
        registered = [
            a.strip() for a in (broker_value(broker_configs, "group.streams.assignors") or "")
            .split(",") if a.strip()
        ]  # fmt: skip
        if assignor not in registered:
            raise GroupConfigError(
                f"streams.assignor.name '{assignor}' is not a registered task assignor. "
                f"Registered assignors are: [{', '.join(registered)}]."
            )
    for session, heartbeat in _SESSIONS:
        if session in configs or heartbeat in configs:
            s = int(configs.get(session) or bound(f"group.{session}"))
            h = int(configs.get(heartbeat) or bound(f"group.{heartbeat}"))
            if s <= h:
                raise GroupConfigError(f"{session} must be greater than {heartbeat}")
    dlq = configs.get("errors.deadletterqueue.topic.name", "")
    if dlq.startswith("__"):
        raise GroupConfigError(
            "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
        )


def describe_rows(
    overrides: Mapping[str, str], broker_configs: Mapping[str, str]
) -> list[GroupRow]:
    """DescribeConfigs rows of a group: (name, value, source, synonyms, type, read_only,
    sensitive), sorted by name. A group config's synonyms are its override (GROUP_CONFIG) and
    its broker synonym (DEFAULT_CONFIG, whatever layer the broker's value comes from, as 4.4
    reports it), or the group config itself at its default when it has no broker synonym."""
    rows: list[GroupRow] = []
    for name, d in definitions("group").items():
        default = default_value(broker_configs, d)
        synonyms: list[tuple[str, str | None, str]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], "GROUP_CONFIG"))
        synonyms.append((d.synonyms[0] if d.synonyms else name, default, "DEFAULT_CONFIG"))
        value = overrides.get(name, default)
        rows.append((name, value, synonyms[0][2], synonyms, d.type, False, False))
    return rows


def session_settings(overrides: Mapping[str, str]) -> dict[str, int]:
    """The overrides kafkapy's coordinator applies: consumer groups' session timeout and heartbeat
    interval, streams groups' session, heartbeat, standby replicas, initial delay and assignment
    interval (milliseconds and counts)."""
    out = {}
    for name in (
        "consumer.session.timeout.ms",
        "consumer.heartbeat.interval.ms",
        "streams.session.timeout.ms",
        "streams.heartbeat.interval.ms",
        "streams.num.standby.replicas",
        "streams.initial.rebalance.delay.ms",
        "streams.assignment.interval.ms",
    ):
        if name in overrides:
            out[name] = int(overrides[name])
    return out
