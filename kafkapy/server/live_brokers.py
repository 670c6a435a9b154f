"""The registered brokers as this broker knows them (Kafka's MetadataCache.getAliveBrokers): in
ZooKeeper mode the replica manager's view, kept current by its watch on /brokers/ids, so that
Metadata, FindCoordinator and DescribeCluster answer from memory (the controller's id
likewise), never from a ZooKeeper read in
the request path (a broker cut off from ZooKeeper would otherwise stall every client request for
the session timeout and answer UNKNOWN_SERVER_ERROR). The embedded store's list is in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkapy.metadata.models import BrokerInfo

    from .broker import Broker


def controller_id(broker: Broker) -> int | None:
    """The controller's broker id as this broker knows it (in ZooKeeper mode, as last read by
    the controller loop on a /controller change; None until first read)."""
    replicas = broker.replicas
    if replicas is not None and replicas.controller_loop.known_controller is not None:
        return replicas.controller_loop.known_controller
    return broker.cluster.controller_id()


def live_brokers(broker: Broker) -> dict[int, BrokerInfo]:
    """broker id -> registration of every registered broker, by id."""
    replicas = broker.replicas
    if replicas is not None and replicas.live:
        return replicas.live
    return broker.cluster.list_brokers()
