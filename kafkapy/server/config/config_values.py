"""Parsers for broker config values (sans-io): each takes (key, text) and returns the typed
value or raises :class:`ConfigError` naming the key, the value and what is allowed, with
Kafka's bounds (int and long ranges, booleans, enumerations, lists)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


class ConfigError(ValueError):
    """A broker configuration value is invalid (one line: key, value, what is allowed)."""


def invalid(key: str, value: object, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {value!r} for configuration {key}: {why}")


def int_parser(lo: int = INT_MIN, hi: int = INT_MAX) -> Callable[[str, str], int]:
    def parse(key: str, value: str) -> int:
        v = value.strip()
        if not re.fullmatch(r"[+-]?\d+", v):
            raise invalid(key, value, "expected an integer")
        n = int(v)
        if not lo <= n <= hi:
            if hi in (INT_MAX, LONG_MAX):
                raise invalid(key, value, f"value must be at least {lo}")
            raise invalid(key, value, f"value must be in [{lo}, {hi}]")
        return n

    return parse


def long_parser(lo: int = LONG_MIN) -> Callable[[str, str], int]:
    return int_parser(lo, LONG_MAX)


def parse_bool(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise invalid(key, value, "expected true or false")
    return v == "true"


def optional_str(key: str, value: str) -> str | None:
    return value.strip() or None


def choice(*allowed: str) -> Callable[[str, str], str]:
    def parse(key: str, value: str) -> str:
        v = value.strip()
        for a in allowed:
            if v.lower() == a.lower():
                return a
        raise invalid(key, value, f"allowed values are {', '.join(allowed)}")

    return parse


_ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def parse_assignors(key: str, value: str) -> tuple[str, ...]:
    """group.consumer.assignors: names (uniform, range) or Kafka's class names for them."""
    items = tuple(
        _ASSIGNOR_CLASSES.get(x.strip(), x.strip().lower()) for x in value.split(",") if x.strip()
    )
    if not items or any(x not in ("uniform", "range") for x in items):
        raise invalid(key, value, "a comma-separated list of uniform, range")
    return items


def parse_cleanup_policy(key: str, value: str) -> tuple[str, ...]:
    items = tuple(x.strip().lower() for x in value.split(",") if x.strip())
    if not items or any(x not in ("delete", "compact") for x in items):
        raise invalid(key, value, "a comma-separated list of delete, compact")
    return items


def parse_connection_overrides(key: str, value: str) -> Mapping[str, int]:
    """max.connections.per.ip.overrides (``host:count,...``), read-only."""
    from ..network.connection_quotas import ConnectionLimitError, parse_ip_overrides

    try:
        return MappingProxyType(parse_ip_overrides(key, value))
    except ConnectionLimitError as e:
        raise ConfigError(str(e)) from None
