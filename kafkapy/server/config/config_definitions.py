"""Every broker, topic and group config Apache Kafka 4.4 defines, as one table (sans-io).

The facts live in ``config_definitions.tsv`` next to this module, one config a line: scope
(broker, topic, group), name, type (Kafka's ConfigDef.Type: BOOLEAN, STRING, INT, SHORT, LONG,
DOUBLE, LIST, CLASS, PASSWORD), default (``null``, ``<required>`` for none), valid values (as
Kafka's documentation states them; empty when any value of the type is), importance, dynamic update
mode of a broker config (read-only, per-broker, cluster-wide: Kafka's DynamicBrokerConfig), and
the synonyms in 4.4's order (for a broker config DynamicBrokerConfig.brokerConfigSynonyms, for a
topic config the broker configs ServerTopicConfigSynonyms names, for a group config its broker
group.* config). Kafka's internal configs are not in it; no description texts either (the docs
have their own). compat_tests/test_config_definitions.py checks the table against the 4.4 jars'
own ConfigDefs, so it cannot drift.

What DescribeConfigs reports (types, read-only flags, synonyms and defaults), what the docs'
configuration reference lists (docs/hooks/config_reference.py) and the start-up warning about
configs kafkapy accepts without acting on them (:func:`not_implemented`) all come from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TABLE_PATH = Path(__file__).with_name("config_definitions.tsv")
NULL = "null"  # the table's default of a config whose default is null (no 4.4 default is "null")
REQUIRED = "<required>"  # the table's default of a config without one (Kafka's NO_DEFAULT_VALUE)
SCOPES = ("broker", "topic", "group")
_LISTENER_PREFIX = re.compile(r"^listener\.name\.[^.]*\.(.*)$")


@dataclass(frozen=True, slots=True)
class ConfigDefinition:
    scope: str  # broker, topic or group
    name: str
    type: str  # BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD
    default: str | None  # as Kafka renders it (ConfigDef.convertToString), None: none or null
    valid: str  # the valid values as Kafka's documentation states them, "" when unrestricted
    importance: str  # HIGH, MEDIUM, LOW
    update_mode: str  # broker configs: read-only, per-broker or cluster-wide; others ""
    synonyms: tuple[str, ...]  # in Kafka 4.4's order

    @property
    def dynamic(self) -> bool:
        """Whether Kafka 4.4 lets AlterConfigs change it at run time (broker configs)."""
        return self.update_mode in ("per-broker", "cluster-wide")


def table_lines() -> list[str]:
    """The table's definition lines (comments and blank lines left out)."""
    return [
        line
        for line in TABLE_PATH.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]


@cache
def _all() -> dict[str, dict[str, ConfigDefinition]]:
    table: dict[str, dict[str, ConfigDefinition]] = {scope: {} for scope in SCOPES}
    for line in table_lines():
        scope, name, type_, default, valid, importance, mode, synonyms = line.split("\t")
        table[scope][name] = ConfigDefinition(
            scope,
            name,
            type_,
            None if default in (NULL, REQUIRED) else default,
            valid,
            importance,
            mode,
            tuple(s for s in synonyms.split(",") if s),
        )
    return table


def definitions(scope: str) -> dict[str, ConfigDefinition]:
    """The configs of one scope (broker, topic, group), by name, sorted by name."""
    return _all()[scope]


def broker_definition(name: str) -> ConfigDefinition | None:
    """A broker config's definition; a listener-prefixed name (``listener.name.l.x``) and a
    SASL mechanism-prefixed one (``listener.name.l.scram-sha-256.sasl.jaas.config``) resolve to
    the config they set, as Kafka's KafkaConfig.configType does."""
    table = definitions("broker")
    if name in table:
        return table[name]
    m = _LISTENER_PREFIX.match(name)
    if m is None:
        return None
    base = m.group(1)
    if base in table:
        return table[base]
    mechanism_free = base.split(".", 1)[1] if "." in base else base
    return table.get(mechanism_free)


def broker_type(name: str) -> str | None:
    """Kafka's type of a broker config, None when 4.4 does not define it (a custom config)."""
    d = broker_definition(name)
    return None if d is None else d.type


def is_sensitive(name: str) -> bool:
    """Kafka's KafkaConfig.maybeSensitive: a password, or a config whose type is unknown."""
    return broker_type(name) in (None, "PASSWORD")


def static_defaults() -> dict[str, str]:
    """Broker config defaults as DescribeConfigs lists them (DEFAULT_CONFIG synonyms): the
    configs with a default value."""
    return {n: d.default for n, d in definitions("broker").items() if d.default is not None}
