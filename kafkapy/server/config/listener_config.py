"""The broker's listener settings (sans-io): ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map`` parsed into :class:`Listener` tuples with Kafka's rules (one
name per listener, names mapped to a supported security protocol, advertised names defined in
``listeners``, no non-routable advertised address), and each listener's security settings
(kafkapy.security) with the inter-broker listener."""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kafkapy.security.listener_security import (
    ListenerSecurity,
    SecurityConfigError,
    inter_broker_listener,
)
from kafkapy.security.session import SECURITY_PROTOCOLS

from .config_values import ConfigError, invalid

SUPPORTED_SECURITY_PROTOCOLS = SECURITY_PROTOCOLS
DEFAULT_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

_LISTENER_RE = re.compile(r"^([A-Za-z0-9_.-]+)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    host: str  # "" binds every interface
    port: int
    security_protocol: str = "PLAINTEXT"


def parse_listener(s: str, key: str = "listeners") -> tuple[str, str, int]:
    """``NAME://host:port`` -> (name, host, port); ConfigError otherwise."""
    m = _LISTENER_RE.match(s.strip())
    if not m:
        raise invalid(
            key, s, "a listener must look like NAME://host:port, e.g. PLAINTEXT://127.0.0.1:9092"
        )
    port = int(m.group(3))
    if not 0 <= port <= 65535:
        raise invalid(key, s, "the port must be between 0 and 65535")
    return m.group(1).upper(), m.group(2), port


def parse_protocol_map(value: str, key: str = "listener.security.protocol.map") -> dict[str, str]:
    result: dict[str, str] = {}
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        name, sep, proto = item.partition(":")
        proto = proto.strip().upper()
        if not sep or not name.strip() or proto not in SECURITY_PROTOCOLS:
            raise invalid(
                key,
                value,
                f"entries must be LISTENER_NAME:PROTOCOL, PROTOCOL one of {SECURITY_PROTOCOLS}",
            )
        result[name.strip().upper()] = proto
    return result


def parse_listeners(value: str, key: str, protocol_map: Mapping[str, str]) -> tuple[Listener, ...]:
    out: list[Listener] = []
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        name, host, port = parse_listener(item, key)
        proto = protocol_map.get(name)
        if proto is None:
            raise invalid(
                key,
                value,
                f"listener name {name} is not in listener.security.protocol.map "
                f"({', '.join(protocol_map)})",
            )
        if proto not in SUPPORTED_SECURITY_PROTOCOLS:
            raise invalid(
                key,
                value,
                f"security protocol {proto} of listener {name} is not supported; "
                f"kafkapy supports {', '.join(SUPPORTED_SECURITY_PROTOCOLS)}",
            )
        if any(lst.name == name for lst in out):
            raise invalid(key, value, f"each listener must have a different name ({name} repeats)")
        out.append(Listener(name, host, port, proto))
    if not out:
        raise invalid(key, value, "at least one listener is required")
    return tuple(out)


def resolve_listeners(props: Mapping[str, str]) -> dict[str, Any]:
    """``listeners`` and ``advertised_listeners`` (these with host names filled in) of a
    broker's properties, as BrokerConfig fields."""
    pmap = parse_protocol_map(props.get("listener.security.protocol.map", DEFAULT_PROTOCOL_MAP))
    listeners = parse_listeners(
        props.get("listeners", "PLAINTEXT://127.0.0.1:9092"), "listeners", pmap
    )
    if "advertised.listeners" in props and props["advertised.listeners"].strip():
        key = "advertised.listeners"
        advertised = parse_listeners(props[key], key, pmap)
        names = {lst.name for lst in listeners}
        for a in advertised:
            if a.name not in names:
                raise invalid(
                    key,
                    props[key],
                    f"listener name {a.name} is not defined in listeners ({', '.join(names)})",
                )
    else:
        key = "listeners"
        advertised = listeners
    resolved = []
    for a in advertised:
        if a.host in ("0.0.0.0", "::"):
            raise invalid(
                "advertised.listeners",
                props.get(key, ""),
                f"cannot advertise the non-routable meta-address {a.host}; "
                "set advertised.listeners to a host clients can reach",
            )
        host = a.host or socket.getfqdn()
        resolved.append(Listener(a.name, host, a.port, a.security_protocol))
    return {"listeners": listeners, "advertised_listeners": tuple(resolved)}


def resolve_security(
    props: Mapping[str, str], listeners: tuple[Listener, ...], advertised: tuple[Listener, ...]
) -> dict[str, Any]:
    """The inter-broker listener and every listener's security (kafkapy.security)."""
    try:
        name = inter_broker_listener(props, [lst.name for lst in advertised])
        security = {
            lst.name: ListenerSecurity.build(props, lst.name, lst.security_protocol)
            for lst in listeners
        }
    except SecurityConfigError as e:
        raise ConfigError(str(e)) from None
    return {"inter_broker_listener": name, "listener_security": MappingProxyType(security)}
