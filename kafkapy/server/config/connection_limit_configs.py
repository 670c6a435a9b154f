"""The connection limits as dynamic broker configs (Kafka's SocketServer reconfigurables).

``max.connections``, ``max.connections.per.ip``, ``max.connections.per.ip.overrides``, the
listener's ``listener.name.<listener>.max.connections`` and ``max.connection.creation.rate``
(enforced by server/quota_enforcement.py) can be set with AlterConfigs /
IncrementalAlterConfigs on a broker (or the cluster-wide ``<default>``), and take effect at
once: the values in force are the broker's dynamic ones, else the cluster default, else
server.properties (server/config/log_configs.py BrokerLayers). As in Kafka, a ``max.connections``
lowered below the connections open closes the least recently active ones (Kafka's
closeExcessConnections); a lower per-address limit only applies to new connections.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..network.connection_quotas import (
    INT_MAX,
    ConnectionLimitError,
    parse_ip_overrides,
    resolve_overrides,
)
from .log_configs import broker_layers

if TYPE_CHECKING:
    from ..broker import Broker

CONNECTION_CONFIGS = frozenset(
    {
        "max.connections",
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "max.connection.creation.rate",
    }
)
_LISTENER_MAX = re.compile(r"^listener\.name\.[^.]+\.max\.connections$")


def is_connection_config(name: str) -> bool:
    return name in CONNECTION_CONFIGS or bool(_LISTENER_MAX.match(name))


def validate_connection_config(name: str, value: str | None) -> str | None:
    """Kafka's message for an invalid value, else None (None value: a deletion)."""
    if value is None:
        return None
    try:
        if name == "max.connections.per.ip.overrides":
            resolve_overrides(parse_ip_overrides(name, value))
            return None
        n = int(value.strip())
    except ConnectionLimitError as e:
        return str(e)
    except ValueError:
        return f"Invalid value {value} for configuration {name}: Not a number of type INT"
    if n < 0:
        return f"Invalid value {value} for configuration {name}: Value must be at least 0"
    return None


def _int(value: str | None, default: int) -> int:
    try:
        return int(value.strip()) if value is not None else default
    except ValueError:
        return default


def apply_connection_limits(broker: Broker) -> None:
    """Put the limits in force now into the broker's connection quotas."""
    if getattr(broker, "quotas", None) is None:  # a broker without listeners (tests)
        return
    layers = broker_layers(broker)
    try:
        overrides = resolve_overrides(
            parse_ip_overrides("", layers.value("max.connections.per.ip.overrides") or "")
        )
    except ConnectionLimitError:
        overrides = dict(broker.quotas.overrides)  # validated when set: keep what is in force
    max_connections = _int(layers.value("max.connections"), INT_MAX)
    listener = broker.config.listeners[0].name
    per_listener = layers.value(f"listener.name.{listener.lower()}.max.connections")
    if per_listener is not None:
        max_connections = min(max_connections, _int(per_listener, INT_MAX))
    broker.quotas.update(
        max_connections=max_connections,
        max_per_ip=_int(layers.value("max.connections.per.ip"), INT_MAX),
        overrides=overrides,
    )
    rates = getattr(broker, "client_quotas", None)
    if rates is not None:  # connection creation rate (server/quota_enforcement.py)
        rate = _int(layers.value("max.connection.creation.rate"), INT_MAX)
        rates.connections.set_broker_max(rate)
    excess = broker.quotas.total - max_connections
    if excess > 0:
        broker.idle.close_oldest(excess)
