"""Request/response calls from this broker to another one, over one lazily opened connection
per destination (the transaction coordinator's WriteTxnMarkers, the partition leaders'
AddPartitionsToTxn verification), on the inter-broker listener with its security (TLS, SASL), as
the replica fetchers connect.

Calls to the same broker take turns on its connection (``PeerConnection`` carries one request
at a time). A call that fails or times out closes that connection, so the next call opens a
fresh one; the caller sees ``PeerUnavailable`` and decides whether to retry (Kafka's
NetworkClient reports a disconnect the same way).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from .peer_connection import PeerConnection

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.peers")


class PeerUnavailable(Exception):
    """The destination broker could not be reached or did not answer in time."""


def broker_address(broker: Broker, broker_id: int) -> tuple[str, int] | None:
    """A live broker's (host, port) on the inter-broker listener, or None when it is not
    registered (or has no such listener)."""
    if broker_id == broker.broker_id:
        return broker.advertised_host, broker.advertised_port
    replicas = broker.replicas
    live = replicas.live if replicas is not None else broker.cluster.list_brokers()
    info = live.get(broker_id)
    endpoint = info.endpoint(broker.config.inter_broker_listener) if info is not None else None
    return None if endpoint is None else (endpoint.host, endpoint.port)


class PeerPool:
    def __init__(self, broker: Broker, client_id: str) -> None:
        self.broker = broker
        self.client_id = client_id
        self._conns: dict[int, PeerConnection] = {}
        self._locks: dict[int, trio.Lock] = {}

    async def request(self, broker_id: int, entity: Any, timeout_s: float) -> Any:
        """Send a kio request entity to ``broker_id``; its decoded response."""
        lock = self._locks.setdefault(broker_id, trio.Lock())
        async with lock:
            conn = self._conns.get(broker_id)
            try:
                with trio.fail_after(timeout_s):
                    if conn is None:
                        addr = broker_address(self.broker, broker_id)
                        if addr is None:
                            raise PeerUnavailable(f"broker {broker_id} is not registered")
                        conn = await PeerConnection.open(
                            addr[0],
                            addr[1],
                            self.client_id,
                            self.broker.config.inter_broker_security,
                        )
                        self._conns[broker_id] = conn
                    return await conn.request(entity)
            except PeerUnavailable:
                raise
            except Exception as e:  # network errors, timeouts, an undecodable answer
                await self._drop(broker_id)
                raise PeerUnavailable(f"broker {broker_id}: {e!r}") from None

    async def _drop(self, broker_id: int) -> None:
        conn = self._conns.pop(broker_id, None)
        if conn is not None:
            with trio.move_on_after(1):
                await conn.aclose()

    async def aclose(self) -> None:
        for broker_id in list(self._conns):
            await self._drop(broker_id)
