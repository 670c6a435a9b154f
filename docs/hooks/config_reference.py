"""The configuration reference, rendered from the broker's config definition table, as Kafka's
documentation is generated from its ConfigDefs: every broker, topic and group config of Apache
Kafka 4.4 with its type, default, valid values, importance and update mode, and whether kafkapy
acts on it.

Where each fact comes from:

* names, types, defaults, valid values, importance, update modes and synonyms: the definition
  table (``config_definitions``: kafkapy/server/config/config_definitions.tsv, checked against
  the 4.4 jars by compat_tests/test_config_definitions.py);
* what kafkapy accepts without acting on, and why: ``config_support.not_implemented``;
* descriptions: topic and group configs' from ``config_docs`` (the texts DescribeConfigs
  serves), broker configs' from broker_config_docs.py beside this file (kafkapy's own words;
  a broker synonym of a topic config takes the topic config's, a config kafkapy does not act on
  its reason); kafkapy's own keys (ZooKeeper, the ACL authorizer's) are described there too.

The definitions are imported in one statement below: when the broker's config modules move, that
statement is the one line to change. Rendering raises :class:`ConfigReferenceError` when a config
kafkapy acts on has no description or a description names no config, which fails
``mkdocs build``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from broker_config_docs import DESCRIPTIONS

# The one place the broker's config definitions are imported from (kafkapy/server/).
from kafkapy.server.config import (
    broker_config,
    config_definitions,
    config_docs,
    config_keys,
    config_support,
    log_configs,
)

LEVELS = ("high", "medium", "low")
APPLIED = "yes"


class ConfigReferenceError(Exception):
    """The definitions and the docs-side table disagree (a config without description, ...)."""


@dataclass(frozen=True)
class Row:
    name: str
    description: str
    type: str
    default: str
    valid: str
    importance: str
    update_mode: str = ""
    synonym: str = ""
    kafkapy: str = APPLIED  # "yes", or "not applied: <why>"


def _show(value: Any) -> str:
    """A default as Kafka's docs print it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(_show(v) for v in value) or '""'
    return str(value) if str(value) != "" else '""'


def _support(scope: str, name: str) -> str:
    why = config_support.not_implemented(scope, name)
    return APPLIED if why is None else f"not applied: {why}"


# ---- broker configs -------------------------------------------------------------------------


def _broker_description(name: str) -> str:
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name][1]
    topic = log_configs.SYNONYM_OF.get(name)
    if topic is not None:
        doc = config_docs.TOPIC_CONFIG_DOCS[topic]
        return f"The broker default of the topic config `{topic}`. {doc}"
    why = config_support.not_implemented("broker", name)
    if why is not None:
        return f"Accepted, validated and stored, not applied: {why}."
    raise ConfigReferenceError(f"{name}: needs a description in broker_config_docs.py")


def broker_rows() -> list[Row]:
    """Every broker config of Kafka 4.4."""
    rows = []
    for name, d in config_definitions.definitions("broker").items():
        rows.append(Row(name, _broker_description(name), d.type.lower(), _show(d.default),
                        d.valid, d.importance.lower(), d.update_mode,
                        kafkapy=_support("broker", name)))
    return rows


def own_rows() -> list[Row]:
    """kafkapy's own keys (not Kafka 4.4 configs): ZooKeeper's and the ACL authorizer's."""
    table = config_definitions.definitions("broker")
    defaults = broker_config.BrokerConfig()
    fields = {f.name for f in dataclasses.fields(defaults)}
    rows = []
    for name in sorted(set(DESCRIPTIONS) - set(table)):
        if not config_keys.is_known_key(name):
            raise ConfigReferenceError(f"{name}: described in broker_config_docs.py, unknown to "
                                       "the broker")
        field = name.replace(".", "_")
        default = _show(getattr(defaults, field)) if field in fields else ""
        rows.append(Row(name, DESCRIPTIONS[name][1], "", default, "", "", "read-only"))
    return rows


# ---- topic and group configs ----------------------------------------------------------------


def topic_rows() -> list[Row]:
    rows = []
    for name, d in config_definitions.definitions("topic").items():
        doc = config_docs.TOPIC_CONFIG_DOCS.get(name)
        if doc is None:
            raise ConfigReferenceError(f"topic config {name} has no entry in TOPIC_CONFIG_DOCS")
        rows.append(Row(name, doc, d.type.lower(), _show(d.default), d.valid,
                        d.importance.lower(), synonym=d.synonyms[0] if d.synonyms else "",
                        kafkapy=_support("topic", name)))
    extra = set(config_docs.TOPIC_CONFIG_DOCS) - set(config_definitions.definitions("topic"))
    if extra:
        raise ConfigReferenceError(f"TOPIC_CONFIG_DOCS describes unknown topic configs: {extra}")
    return rows


def group_rows() -> list[Row]:
    rows = []
    for name, d in config_definitions.definitions("group").items():
        doc = config_docs.GROUP_CONFIG_DOCS.get(name)
        if doc is None:
            raise ConfigReferenceError(f"group config {name} has no entry in GROUP_CONFIG_DOCS")
        rows.append(Row(name, doc, d.type.lower(), _show(d.default), d.valid,
                        d.importance.lower(), synonym=d.synonyms[0] if d.synonyms else "",
                        kafkapy=_support("group", name)))
    return rows


# ---- markdown -------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _by_importance(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (LEVELS.index(r.importance), r.name))


def render_broker_configs() -> str:
    rows = broker_rows()  # every description checked before rendering
    lines = [
        "| name | description | type | default | valid values | importance | update mode "
        "| kafkapy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in _by_importance(rows):
        lines.append(
            f"| `{r.name}` | {_cell(r.description)} | {r.type} | {_cell(_code(r.default))} | "
            f"{_cell(r.valid)} | {r.importance} | {r.update_mode} | {_cell(r.kafkapy)} |"
        )
    return "\n".join(lines) + "\n"


def _render_scoped(rows: list[Row], synonym_header: str) -> str:
    lines = [
        f"| name | description | type | default | valid values | {synonym_header} "
        "| importance | kafkapy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in _by_importance(rows):
        lines.append(
            f"| `{r.name}` | {_cell(r.description)} | {r.type} | {_cell(_code(r.default))} | "
            f"{_cell(r.valid)} | {_code(r.synonym)} | {r.importance} | {_cell(r.kafkapy)} |"
        )
    return "\n".join(lines) + "\n"


def render_topic_configs() -> str:
    return _render_scoped(topic_rows(), "server default property")


def render_group_configs() -> str:
    return _render_scoped(group_rows(), "broker default property")


def render_own_keys() -> str:
    lines = ["| name | description | default |", "| --- | --- | --- |"]
    for r in own_rows():
        lines.append(f"| `{r.name}` | {_cell(r.description)} | {_cell(_code(r.default))} |")
    return "\n".join(lines) + "\n"


def render_accepted_keys() -> str:
    """Kafka's other broker keys (3.x's among them): accepted silently, without effect."""
    table = set(config_definitions.definitions("broker")) | set(DESCRIPTIONS)
    names = sorted(set(config_keys.KNOWN_UNUSED_KEYS) - table)
    prefixes = ", ".join(f"`{p}*`" for p in config_keys.KNOWN_PREFIXES)
    return (
        ", ".join(f"`{n}`" for n in names)
        + f".\n\nKeys with these prefixes are accepted too: {prefixes}.\n"
    )


MARKERS: dict[str, Callable[[], str]] = {
    "<!-- generated: broker-configs -->": render_broker_configs,
    "<!-- generated: topic-configs -->": render_topic_configs,
    "<!-- generated: group-configs -->": render_group_configs,
    "<!-- generated: own-keys -->": render_own_keys,
    "<!-- generated: accepted-keys -->": render_accepted_keys,
}


def expand(markdown: str) -> str:
    """``markdown`` with each generation marker replaced by what it stands for."""
    for marker, render in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown
