"""Connection creation rates, as Kafka's ConnectionQuotas limits them (KIP-612).

* ``max.connection.creation.rate`` (broker-wide, default unlimited): each new connection is
  counted; when the rate is above the limit, the broker waits before serving it (Kafka's acceptor
  waits before accepting more) for the time that brings the rate back under the limit, at most
  one quota window;
* ``connection_creation_rate`` per IP (client quotas under /config/ips/<ip>, with
  /config/ips/<default> for every other address): a connection that would put its address above
  its rate is not counted and is closed after the throttle time (Kafka's delayed close), again at
  most one window.

Sans-io: :meth:`ConnectionRates.on_new_connection` says what to do with one new connection; the
accept path (kafkapy.server.quota_enforcement) waits and closes. Connection counts
(max.connections, per-IP maximums) are another module's job (the accept path's limits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .rate import QuotaRate

INT_MAX = 2**31 - 1  # Kafka's "no limit" for connection rates
IDLE_EXPIRATION_MS = 3600 * 1000  # an address's rate is forgotten after an idle hour


@dataclass(frozen=True, slots=True)
class Admission:
    """What to do with a new connection: serve it after ``delay_ms``, or close it after
    ``delay_ms`` (refused: its address is above its connection creation rate)."""

    delay_ms: int
    refused: bool = False


SERVE = Admission(0)


class ConnectionRates:
    """Broker-wide and per-IP connection creation rates (see the module doc)."""

    def __init__(self, samples: int = 11, window_s: int = 1, broker_max: int = INT_MAX) -> None:
        self.samples = samples
        self.window_ms = window_s * 1000
        self._broker = QuotaRate(samples, self.window_ms, self._bound(broker_max))
        self._default_ip = INT_MAX
        self._per_ip: dict[str, int] = {}
        self._ip_rates: dict[str, QuotaRate] = {}
        self._next_purge_ms = 0.0

    @staticmethod
    def _bound(limit: int) -> float:
        return math.inf if limit >= INT_MAX else float(limit)

    @property
    def active(self) -> bool:
        """False while nothing limits connection creation (the accept path then skips us)."""
        return (
            self._broker.bound != math.inf or self._default_ip < INT_MAX or bool(self._per_ip)
        )

    def set_broker_max(self, limit: int) -> None:
        self._broker.bound = self._bound(limit)

    def set_ip_rate(self, ip: str | None, rate: int | None) -> None:
        """Set (or remove, with None) the rate of one address, or the default (ip None)."""
        if ip is None:
            self._default_ip = INT_MAX if rate is None else int(rate)
        elif rate is None:
            self._per_ip.pop(ip, None)
        else:
            self._per_ip[ip] = int(rate)
        for addr, r in self._ip_rates.items():
            r.bound = self._bound(self.ip_rate(addr))

    def ip_rate(self, ip: str) -> int:
        return self._per_ip.get(ip, self._default_ip)

    def on_new_connection(self, ip: str, now_ms: float) -> Admission:
        """Count a new connection from ``ip`` and say what to do with it."""
        broker_delay = self._broker.record(1.0, now_ms, self.window_ms)
        limit = self.ip_rate(ip)
        if limit >= INT_MAX:
            return Admission(broker_delay) if broker_delay else SERVE
        if now_ms >= self._next_purge_ms:
            self._ip_rates = {a: r for a, r in self._ip_rates.items()
                              if now_ms - r.last_record_ms <= IDLE_EXPIRATION_MS}
            self._next_purge_ms = now_ms + 60_000
        rate = self._ip_rates.get(ip)
        if rate is None:
            rate = self._ip_rates[ip] = QuotaRate(self.samples, self.window_ms, float(limit))
        ip_delay = rate.record(1.0, now_ms, self.window_ms)
        if ip_delay > 0:  # not accepted: taken back from the address's and the broker's rates
            rate.add(-1.0, now_ms)
            self._broker.add(-1.0, now_ms)
            return Admission(ip_delay, refused=True)
        return Admission(broker_delay) if broker_delay else SERVE
