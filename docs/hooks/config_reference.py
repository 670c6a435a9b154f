"""The configuration reference, rendered from the broker's own config definitions, as Kafka's
documentation is generated from its ConfigDefs: name, description, type, default, valid values,
importance and update mode of every broker config kafkapy reads, and of every topic config.

Where each fact comes from:

* names, value parsers and defaults: ``config_keys.OPTIONS`` / ``SPECIAL_KEYS`` and the fields of
  ``config.BrokerConfig``; the valid values are read off the parsers (``int_parser``'s bounds,
  ``choice``'s values);
* the log cleaner's settings, the broker synonyms of topic configs and the dynamic broker configs
  (type, default, minimum, choices, per-broker or cluster-wide, what is not applied and why):
  ``log_configs`` and ``dynamic_broker_configs``;
* topic configs (type, default, bounds, broker synonyms, not applied) and their descriptions:
  ``topic_configs.TOPIC_CONFIGS`` and ``config_docs.TOPIC_CONFIG_DOCS``, the texts DescribeConfigs
  serves;
* what the definitions do not hold (broker configs' descriptions and Kafka's importance):
  broker_config_docs.py beside this file, checked against the definitions on every build.

The definitions are imported in one statement below: when the broker's config modules move, that
statement is the one line to change. Rendering raises :class:`ConfigReferenceError` when the
definitions and broker_config_docs.py disagree, which fails ``mkdocs build``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from broker_config_docs import DEFAULTS, DESCRIPTIONS, IMPORTANCE, TOPIC_IMPORTANCE

from kafkapy.security import listener_security

# The one place the broker's config definitions are imported from (kafkapy/server/).
from kafkapy.server.config import (
    broker_config,
    config_docs,
    config_keys,
    listener_config,
    log_configs,
    topic_configs,
)
from kafkapy.server.config import (
    dynamic_broker_configs as dynamic,
)

LEVELS = ("high", "medium", "low", "-")
_UNIT_FACTORS = {".hours": 3_600_000, ".minutes": 60_000}


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


# ---- values ---------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A default as Kafka's docs print it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, listener_config.Listener):
        return f"{value.name}://{value.host}:{value.port}"
    if isinstance(value, Mapping):
        return ",".join(f"{k}:{v}" for k, v in value.items()) or '""'
    if isinstance(value, tuple | list):
        return ",".join(_show(v) for v in value) or '""'
    return str(value) if str(value) != "" else '""'


def _bounds(lo: float | None, hi: float | None, int_max: int | None = None) -> str:
    lo_s = None if lo is None else _num(lo)
    if hi is None or hi == int_max or hi in (broker_config.INT_MAX, broker_config.LONG_MAX):
        return "" if lo_s is None or lo in (broker_config.INT_MIN, broker_config.LONG_MIN) \
            else f"[{lo_s},...]"
    return f"[{lo_s if lo_s is not None else '...'},...,{_num(hi)}]"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _parser_facts(name: str, parse: Callable[..., Any]) -> tuple[str, str]:
    """(type, valid values) of an OPTIONS parser, read off the parser itself."""
    qual = parse.__qualname__
    cells = inspect.getclosurevars(parse).nonlocals
    if qual.startswith("int_parser."):
        kind = "long" if cells["hi"] == broker_config.LONG_MAX else "int"
        return kind, _bounds(cells["lo"], cells["hi"])
    if qual.startswith("choice."):
        return "string", "[" + ", ".join(cells["allowed"]) + "]"
    named = {
        "parse_bool": ("boolean", ""),
        "optional_str": ("string", ""),
        "parse_cleanup_policy": ("list", "[delete, compact]"),
        "parse_assignors": ("list", "[uniform, range] or their class names"),
        "parse_connection_overrides": ("string", "host:count,..."),
    }
    if qual not in named:
        raise ConfigReferenceError(f"{name}: parser {qual} has no rendering in config_reference.py")
    return named[qual]


def _guess_type(default: str) -> str:
    text = default.split(" ")[0]
    if text in ("true", "false"):
        return "boolean"
    return "int" if text.lstrip("-").isdigit() else "string"


# ---- broker configs -------------------------------------------------------------------------


def _levels() -> dict[str, str]:
    out: dict[str, str] = {}
    for level, names in IMPORTANCE.items():
        for n in names.split():
            if n in out:
                raise ConfigReferenceError(f"{n}: listed twice in broker_config_docs.IMPORTANCE")
            out[n] = level
    return out


def _update_mode(name: str) -> str:
    if name in dynamic.LISTENER_BINDINGS or name in dynamic.PASSWORD_CONFIGS:
        return "read-only"
    if not dynamic.is_dynamic(name):
        return "read-only"
    d = dynamic.DYNAMIC_CONFIGS.get(name)
    return "per-broker" if d is not None and d.per_broker else "cluster-wide"


def broker_config_names() -> list[str]:
    """Every broker config the reference renders: the keys the broker parses, the cleaner's
    settings, the broker synonyms of topic configs, the dynamic broker configs, and the other
    known keys broker_config_docs.py describes (security settings read at start)."""
    names = (
        set(config_keys.OPTIONS)
        | set(config_keys.SPECIAL_KEYS)
        | set(log_configs.CLEANER_CONFIGS)
        | set(log_configs.SYNONYM_OF)
        | set(dynamic.DYNAMIC_CONFIGS)
        | set(DESCRIPTIONS)
    )
    return sorted(names)


def broker_rows() -> list[Row]:
    defaults = broker_config.BrokerConfig()
    levels = _levels()
    rows = []
    for name in broker_config_names():
        if not config_keys.is_known_key(name) and not dynamic.is_dynamic(name):
            raise ConfigReferenceError(
                f"{name}: described in broker_config_docs.py, unknown to the broker"
            )
        kind, default, valid, reason = _broker_facts(name, defaults)
        topic = log_configs.SYNONYM_OF.get(name)
        if name in DESCRIPTIONS:
            importance, text = DESCRIPTIONS[name]
            if name in levels:
                raise ConfigReferenceError(f"{name}: in both DESCRIPTIONS and IMPORTANCE")
            mode = _update_mode(name)
            if reason and mode != "read-only" and "not applied" not in text:
                text += f" A change at run time is stored, not applied ({reason})."
        elif name in levels:
            importance = levels[name]
            if topic is not None:
                doc = config_docs.TOPIC_CONFIG_DOCS[topic]
                text = f"The broker default of the topic config `{topic}`. {doc}"
            elif reason:
                text = f"Accepted, validated and stored, not applied: {reason}."
            else:
                raise ConfigReferenceError(f"{name}: needs a description in broker_config_docs.py")
        else:
            raise ConfigReferenceError(f"{name}: no description or importance in "
                                 "broker_config_docs.py")
        rows.append(Row(name, text, kind, default, valid, importance, _update_mode(name)))
    unused = set(levels) - set(broker_config_names())
    if unused:
        raise ConfigReferenceError(f"broker_config_docs.IMPORTANCE names unknown configs: {unused}")
    unused = set(DEFAULTS) - set(broker_config_names())
    if unused:
        raise ConfigReferenceError(f"broker_config_docs.DEFAULTS names unknown configs: {unused}")
    return rows


def _broker_facts(name: str, defaults: Any) -> tuple[str, str, str, str | None]:
    """(type, default, valid values, not-applied reason) from the definitions, most specific
    first: the parsed keys, the dynamic configs, the cleaner's, the topic-config synonyms."""
    field_names = {f.name for f in dataclasses.fields(defaults)}
    d = dynamic.DYNAMIC_CONFIGS.get(name)
    reason = d.not_applied if d is not None else None
    topic = topic_configs.TOPIC_CONFIGS.get(log_configs.SYNONYM_OF.get(name, ""))
    if topic is not None and topic.not_applied:
        reason = topic.not_applied
    if name in config_keys.OPTIONS:
        field, parse = config_keys.OPTIONS[name]
        kind, valid = _parser_facts(name, parse)
        return kind, _show(getattr(defaults, field)), valid, reason
    if name in config_keys.SPECIAL_KEYS:
        field = name.replace(".", "_")
        if name in DEFAULTS:
            default = DEFAULTS[name]
        elif name == "listener.security.protocol.map":
            default = listener_config.DEFAULT_PROTOCOL_MAP
        elif field in field_names:
            default = _show(getattr(defaults, field))
        else:
            raise ConfigReferenceError(
                f"{name}: no default in BrokerConfig or broker_config_docs.py"
            )
        if topic is not None:
            return topic.type.lower(), default, _bounds(topic.minimum, topic.maximum), reason
        return _guess_type(default), default, "", reason
    if d is not None:
        valid = "[" + ", ".join(d.choices) + "]" if d.choices else _bounds(d.minimum, None)
        return d.type.lower(), _show(d.default), valid, reason
    if name in log_configs.CLEANER_CONFIGS:
        kind, minimum, default = log_configs.CLEANER_CONFIGS[name]
        return kind.lower(), default, _bounds(minimum, None), reason
    if topic is not None:
        default = topic.default
        for unit, factor in _UNIT_FACTORS.items():
            if name.endswith(unit) and default is not None and default.lstrip("-").isdigit():
                default = str(int(default) // factor)
        valid = _topic_valid(topic)
        kind = "int" if name.endswith(tuple(_UNIT_FACTORS)) else topic.type.lower()
        return kind, _show(default), valid, reason
    if name == "sasl.server.max.receive.size":
        return "int", str(listener_security.DEFAULT_SASL_MAX_RECEIVE), "", reason
    if name in DEFAULTS:
        return _guess_type(DEFAULTS[name]), DEFAULTS[name], "", reason
    raise ConfigReferenceError(f"{name}: no definition gives its type and default")


# ---- topic configs --------------------------------------------------------------------------


def _topic_valid(d: Any) -> str:
    if d.choices:
        return "[" + ", ".join(d.choices) + "]"
    return _bounds(d.minimum, d.maximum)


def topic_rows() -> list[Row]:
    rows = []
    for name, d in sorted(topic_configs.TOPIC_CONFIGS.items()):
        doc = config_docs.TOPIC_CONFIG_DOCS.get(name)
        if doc is None:
            raise ConfigReferenceError(f"topic config {name} has no entry in TOPIC_CONFIG_DOCS")
        importance = TOPIC_IMPORTANCE.get(name, "medium")
        rows.append(Row(name, doc, d.type.lower(), _show(d.default), _topic_valid(d),
                        importance, synonym=d.synonyms[0] if d.synonyms else ""))
    extra = set(config_docs.TOPIC_CONFIG_DOCS) - set(topic_configs.TOPIC_CONFIGS)
    if extra:
        raise ConfigReferenceError(f"TOPIC_CONFIG_DOCS describes unknown topic configs: {extra}")
    return rows


# ---- markdown -------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _by_importance(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (LEVELS.index(r.importance), r.name))


def render_broker_configs() -> str:
    lines = [
        "| name | description | type | default | valid values | importance | update mode |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in _by_importance(broker_rows()):
        lines.append(
            f"| `{r.name}` | {_cell(r.description)} | {r.type} | {_cell(_code(r.default))} | "
            f"{_cell(r.valid)} | {r.importance} | {r.update_mode} |"
        )
    return "\n".join(lines) + "\n"


def render_topic_configs() -> str:
    lines = [
        "| name | description | type | default | valid values | server default property "
        "| importance |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in _by_importance(topic_rows()):
        lines.append(
            f"| `{r.name}` | {_cell(r.description)} | {r.type} | {_cell(_code(r.default))} | "
            f"{_cell(r.valid)} | {_code(r.synonym)} | {r.importance} |"
        )
    return "\n".join(lines) + "\n"


def render_accepted_keys() -> str:
    """Kafka's other documented broker keys: accepted silently, without effect."""
    rendered = set(broker_config_names())
    names = sorted(set(config_keys.KNOWN_UNUSED_KEYS) - rendered)
    prefixes = ", ".join(f"`{p}*`" for p in config_keys.KNOWN_PREFIXES)
    return (
        ", ".join(f"`{n}`" for n in names)
        + f".\n\nKeys with these prefixes are accepted too: {prefixes}.\n"
    )


MARKERS: dict[str, Callable[[], str]] = {
    "<!-- generated: broker-configs -->": render_broker_configs,
    "<!-- generated: topic-configs -->": render_topic_configs,
    "<!-- generated: accepted-keys -->": render_accepted_keys,
}


def expand(markdown: str) -> str:
    """``markdown`` with each generation marker replaced by what it stands for."""
    for marker, render in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown
