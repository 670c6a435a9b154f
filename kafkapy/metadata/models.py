"""Plain data types for the metadata model: what the znode documents decode to."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

PLAINTEXT = "PLAINTEXT"


def format_host_port(host: str, port: int) -> str:
    """``host:port``, with IPv6 literals in brackets (Kafka's Utils.formatAddress)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One listener of a broker: ``listener_name://host:port`` speaking ``security_protocol``."""

    listener_name: str
    host: str
    port: int
    security_protocol: str = PLAINTEXT

    @property
    def connection_string(self) -> str:
        return f"{self.listener_name}://{format_host_port(self.host, self.port)}"


@dataclass(frozen=True)
class BrokerInfo:
    """A broker registration (/brokers/ids/N)."""

    id: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    jmx_port: int = -1
    timestamp: int = 0  # registration time, ms since the epoch
    version: int = 5
    features: dict[str, dict[str, int]] = field(default_factory=dict)

    def _plaintext(self) -> Endpoint | None:
        return next((e for e in self.endpoints if e.security_protocol == PLAINTEXT), None)

    @property
    def host(self) -> str | None:
        """Host of the first PLAINTEXT endpoint (the legacy "host" field), None without one."""
        ep = self._plaintext()
        return ep.host if ep else None

    @property
    def port(self) -> int:
        """Port of the first PLAINTEXT endpoint (the legacy "port" field), -1 without one."""
        ep = self._plaintext()
        return ep.port if ep else -1

    def endpoint(self, listener_name: str) -> Endpoint | None:
        return next((e for e in self.endpoints if e.listener_name == listener_name), None)


def listener_endpoints(
    brokers: Mapping[int, BrokerInfo], listener_name: str
) -> list[tuple[int, BrokerInfo, Endpoint]]:
    """(id, registration, endpoint) of each broker with an endpoint on ``listener_name``, by id:
    a client is told the addresses of the listener it connected to (Kafka leaves out brokers
    that lack that listener)."""
    out = []
    for broker_id, info in sorted(brokers.items()):
        endpoint = info.endpoint(listener_name)
        if endpoint is not None:
            out.append((broker_id, info, endpoint))
    return out


@dataclass(frozen=True)
class PartitionState:
    """Leader and ISR of one partition (/brokers/topics/T/partitions/P/state).

    ``zk_version`` is the state znode's version (not part of the document): the expected version
    for the next conditional update.
    """

    leader: int
    leader_epoch: int
    isr: list[int]
    controller_epoch: int
    zk_version: int = 0
    leader_recovery_state: int = 0  # 0 RECOVERED, 1 RECOVERING


@dataclass(frozen=True)
class TopicAssignment:
    """The replica assignment document of a topic (/brokers/topics/T)."""

    partitions: dict[int, list[int]]
    topic_id: uuid.UUID | None = None
    adding_replicas: dict[int, list[int]] = field(default_factory=dict)
    removing_replicas: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicInfo:
    """Everything the metadata tree says about one topic."""

    name: str
    topic_id: uuid.UUID
    partitions: dict[int, list[int]]  # partition -> replicas
    states: dict[int, PartitionState]
    configs: dict[str, str]
    zk_version: int = 0  # version of /brokers/topics/T
    configs_zxid: int = -1  # mzxid of /config/topics/T as read (-1: unknown or absent)

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)


@dataclass(frozen=True, slots=True)
class ControllerInfo:
    """The controller registration (/controller)."""

    broker_id: int
    timestamp: int = 0
    kraft_controller_epoch: int = -1
    version: int = 2


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """The last allocated producer id block (/latest_producer_id_block), bounds inclusive."""

    broker: int
    block_start: int
    block_end: int
