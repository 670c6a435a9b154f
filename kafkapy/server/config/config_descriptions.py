"""What DescribeConfigs reports for a broker, the cluster-wide defaults, a topic or a group, as
Apache Kafka 4.4's ConfigHelper builds it (sans-io: rows of plain values, the handler
server/apis/describe_configs.py encodes them).

A row is (name, value, source, synonyms, type, read_only, sensitive); synonyms are (name, value,
source), sources Kafka's ConfigSource names.

* A broker (its id): every broker config 4.4 defines (server/config/config_definitions.py) and
  every other key it was given (custom configs), each with its own value from the first layer
  that has it (dynamic, dynamic default, server.properties, default), its type, read-only unless
  4.4 reconfigures it at run time, sensitive when a password or of unknown type (its value
  hidden), and the synonyms of ConfigHelper.configSynonyms (log_configs.broker_config_synonyms).
  As Kafka's KafkaConfig.populateSynonyms, ``node.id`` and ``broker.id`` stand for each other.
* The cluster-wide defaults (the resource named ""): only the configs set there, each with its
  dynamic default as its one synonym.
* A topic: every topic config (log_configs.effective_topic_config).
* A group: every group config, its value the group's override (source GROUP_CONFIG) or the
  broker's group.* synonym (DEFAULT_CONFIG), see server/config/group_configs.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .config_definitions import broker_definition, definitions, is_sensitive
from .log_configs import (
    TOPIC_CONFIGS,
    BrokerLayers,
    broker_config_synonyms,
    broker_layers,
    effective_topic_config,
)

Row = tuple[str, str | None, str, list[tuple[str, str | None, str]], str | None, bool, bool]
_ID_SYNONYMS = ("broker.id", "node.id")


def _static_layer(static: Mapping[str, str]) -> Mapping[str, str]:
    """server.properties with broker.id and node.id standing for each other."""
    given = {k: static[k] for k in _ID_SYNONYMS if k in static}
    if len(given) != 1:
        return static
    value = next(iter(given.values()))
    return MappingProxyType({**static, **{k: value for k in _ID_SYNONYMS}})


def broker_rows(broker: Any) -> list[Row]:
    """The rows of this broker's resource (its id), sorted by name."""
    layers = broker_layers(broker)
    layers = BrokerLayers(layers.dynamic, layers.dynamic_default, _static_layer(layers.static))
    names = set(definitions("broker")) | set(layers.static) | set(layers.dynamic)
    names |= set(layers.dynamic_default)
    rows: list[Row] = []
    for name in sorted(names):
        d = broker_definition(name)
        sensitive = is_sensitive(name)
        value = layers.value(name)
        if value is None and d is not None and name == d.name:
            value = d.default
        synonyms = broker_config_synonyms(layers, name, sensitive)
        source = synonyms[0][2] if synonyms else "DEFAULT_CONFIG"
        read_only = not (d is not None and name == d.name and d.dynamic)
        rows.append(
            (
                name,
                None if sensitive else value,
                source,
                synonyms,
                None if d is None else d.type,
                read_only,
                sensitive,
            )
        )
    return rows


def cluster_default_rows(broker: Any) -> list[Row]:
    """The rows of the cluster-wide defaults resource (""): only what is set there."""
    defaults = broker_layers(broker).dynamic_default
    rows: list[Row] = []
    for name in sorted(defaults):
        d = broker_definition(name)
        sensitive = is_sensitive(name)
        value = None if sensitive else defaults[name]
        read_only = not (d is not None and name == d.name and d.dynamic)
        rows.append(
            (
                name,
                value,
                "DYNAMIC_DEFAULT_BROKER_CONFIG",
                [(name, value, "DYNAMIC_DEFAULT_BROKER_CONFIG")],
                None if d is None else d.type,
                read_only,
                sensitive,
            )
        )
    return rows


def topic_rows(broker: Any, overrides: Mapping[str, str]) -> list[Row]:
    """The rows of a topic with these overrides, sorted by name."""
    eff = effective_topic_config(broker_layers(broker), overrides)
    return [
        (name, value, source, synonyms, TOPIC_CONFIGS[name].type, False, False)
        for name, (value, source, synonyms) in sorted(eff.items())
    ]
