"""Connection limits, as Kafka's ConnectionQuotas enforces them (SocketServer.scala, Kafka 3.9).

* ``max.connections`` (and the listener's ``listener.name.<listener>.max.connections``): when the
  broker holds that many connections, the acceptor stops accepting until one closes; new
  connections wait in the kernel's listen backlog meanwhile (Kafka's waitForConnectionSlot).
* ``max.connections.per.ip`` with ``max.connections.per.ip.overrides`` (``host:count,...``;
  host names are resolved once, at start): a connection from an address that already holds its
  maximum is accepted and closed at once (Kafka's TooManyConnectionsException).

Counting is sans-io (:class:`ConnectionCounts`); :class:`ConnectionQuotas` adds the trio wait for
a free slot. Both limits can be changed at run time (``update``), as Kafka's dynamic broker
configs change them: a lower ``max.connections`` only stops new connections.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping

import trio

INT_MAX = 2**31 - 1
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:\-\[\]%]+$")


class ConnectionLimitError(ValueError):
    """A connection limit setting is invalid (one line naming the key)."""


def parse_ip_overrides(key: str, value: str) -> dict[str, int]:
    """``host:count,host:count`` (Kafka's getMap; IPv6 hosts end at the last colon)."""
    out: dict[str, int] = {}
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        host = host.strip()
        if not sep or not host or not _HOST_RE.match(host):
            raise ConnectionLimitError(
                f"Invalid value {value!r} for configuration {key}: entries must be host:count, "
                f"e.g. hostName:100,127.0.0.1:200"
            )
        try:
            n = int(count.strip())
        except ValueError:
            raise ConnectionLimitError(
                f"Invalid value {value!r} for configuration {key}: {count.strip()!r} is not a "
                f"number of connections"
            ) from None
        if n < 0:
            raise ConnectionLimitError(
                f"Invalid value {value!r} for configuration {key}: counts must be >= 0"
            )
        out[host.strip("[]")] = n
    return out


def resolve_overrides(overrides: Mapping[str, int]) -> dict[str, int]:
    """Host names to addresses (every address a name resolves to gets its count)."""
    out: dict[str, int] = {}
    for host, n in overrides.items():
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError as e:
            raise ConnectionLimitError(
                f"max.connections.per.ip.overrides names host {host!r} that does not resolve: {e}"
            ) from None
        for info in infos:
            out[str(info[4][0])] = n
    return out


def listener_max_connections(raw: Mapping[str, str], listener: str) -> int | None:
    """``listener.name.<listener>.max.connections`` (listener name lower-cased, as Kafka's
    ListenerName.configPrefix), or None."""
    key = f"listener.name.{listener.lower()}.max.connections"
    value = raw.get(key)
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ConnectionLimitError(
            f"Invalid value {value!r} for configuration {key}: expected an integer"
        ) from None
    if n < 0:
        raise ConnectionLimitError(
            f"Invalid value {value!r} for configuration {key}: Value must be at least 0"
        )
    return n


class ConnectionCounts:
    """Open connections in total and per address, and the limits that apply to them."""

    def __init__(
        self,
        max_connections: int = INT_MAX,
        max_per_ip: int = INT_MAX,
        overrides: Mapping[str, int] | None = None,
    ) -> None:
        self.total = 0
        self.per_ip: dict[str, int] = {}
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides: dict[str, int] = dict(overrides or {})

    def update(
        self,
        max_connections: int | None = None,
        max_per_ip: int | None = None,
        overrides: Mapping[str, int] | None = None,
    ) -> None:
        if max_connections is not None:
            self.max_connections = max_connections
        if max_per_ip is not None:
            self.max_per_ip = max_per_ip
        if overrides is not None:
            self.overrides = dict(overrides)

    def slot_available(self) -> bool:
        return self.total < self.max_connections

    def limit_for(self, ip: str) -> int:
        return self.overrides.get(ip, self.max_per_ip)

    def admit(self, ip: str) -> bool:
        """Count a new connection from ``ip``; False (nothing counted) when ``ip`` already
        holds its maximum and the connection must be closed."""
        count = self.per_ip.get(ip, 0)
        if count >= self.limit_for(ip):
            return False
        self.per_ip[ip] = count + 1
        self.total += 1
        return True

    def release(self, ip: str) -> None:
        count = self.per_ip.get(ip, 0)
        if count <= 1:
            self.per_ip.pop(ip, None)
        else:
            self.per_ip[ip] = count - 1
        self.total = max(self.total - 1, 0)


class ConnectionQuotas(ConnectionCounts):
    """:class:`ConnectionCounts` with a trio wait for a free broker-wide slot."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._freed = trio.Event()

    def _wake(self) -> None:
        self._freed.set()
        self._freed = trio.Event()

    def release(self, ip: str) -> None:
        super().release(ip)
        self._wake()

    def update(self, *args, **kwargs) -> None:
        super().update(*args, **kwargs)
        self._wake()

    async def wait_for_slot(self) -> None:
        """Return when a new connection may be accepted (at once when one may)."""
        while not self.slot_available():
            await self._freed.wait()

    async def wait_for_release(self) -> None:
        """Return when any connection closes (or a limit changes)."""
        await self._freed.wait()
