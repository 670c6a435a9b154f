"""Client quotas enforced on the broker, as Kafka 2.0+ does (KIP-219): answer at once with the
throttle time, then mute the connection for that long.

The quotas are the client-quota configs (kafkapy.metadata.client_quotas): ``producer_byte_rate``
and ``consumer_byte_rate`` (bytes/s), ``request_percentage`` (handler time, % of one handler) for
(user, client-id) entities, and ``connection_creation_rate`` for IPs; loaded at startup and kept
current by config change notifications (server/config/config_listener.py). A request's user is its
principal's name (``ANONYMOUS`` without authentication), its client id the header's.

* Produce: the request's size counts against the produce quota and, unless acks=0, its handler
  time against the request quota; the response carries the larger throttle time.
* Fetch (consumers; followers are exempt): max_bytes is capped at what one quota window allows
  (quota x (samples - 1) x window); the response's size counts against the fetch quota. A
  throttled fetch is answered empty (its bytes are taken back) with the throttle time, as Kafka.
* Every other request: its handler time against the request quota (throttles capped at one
  window), the throttle time set in the response.

Muting (:meth:`BrokerQuotas.mute`): the connection reads no further request until the throttle
time has passed (server/network/connection.py waits in :meth:`BrokerQuotas.wait_unmuted` after
sending). Handler time is measured per trio task (:class:`TaskClock`, a trio instrument installed
once a request quota exists): the time the connection's task ran while handling the request, the
counterpart of Kafka's request-thread time.

Connection creation (kafkapy.quotas.connection_rate): ``max.connection.creation.rate`` delays
serving new connections; a per-IP ``connection_creation_rate`` closes, after the throttle time,
connections that would exceed it (:meth:`BrokerQuotas.admit`).

Without any quota this costs one attribute check per request (``enabled``, ``request.enabled``).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio

from kafkapy import clock
from kafkapy.metadata import client_quotas as cq
from kafkapy.quotas.client_quota_manager import DEFAULT, ClientQuotaManager, QuotaEntity
from kafkapy.quotas.connection_rate import ConnectionRates

if TYPE_CHECKING:
    from kafkapy.metadata.store import MetadataStore

    from .config.broker_config import BrokerConfig

log = logging.getLogger("kafkapy.quotas")

PRODUCE, FETCH, REQUEST = "producer_byte_rate", "consumer_byte_rate", "request_percentage"
CONNECTIONS = "connection_creation_rate"
NANOS_TO_PERCENT = 100.0 / 1e9  # Kafka's NanosToPercentagePerSecond


class TaskClock(trio.abc.Instrument):
    """Nanoseconds each trio task has run (summed over its steps)."""

    def __init__(self) -> None:
        self.totals: dict[Any, int] = {}
        self._step_start = time.perf_counter_ns()

    def before_task_step(self, task: Any) -> None:
        self._step_start = time.perf_counter_ns()

    def after_task_step(self, task: Any) -> None:
        self.totals[task] = self.totals.get(task, 0) + time.perf_counter_ns() - self._step_start

    def task_exited(self, task: Any) -> None:
        self.totals.pop(task, None)

    def running(self) -> int:
        """The current task's total so far, its current step included."""
        task = trio.lowlevel.current_task()
        return self.totals.get(task, 0) + time.perf_counter_ns() - self._step_start


def entity_of(kind: str, name: str) -> dict[str, str | None]:
    """The quota entity of a config entity path (``users/u/clients/c``, sanitized names)."""

    def named(node: str, sanitized: bool = True) -> str | None:
        if node == cq.DEFAULT:
            return None
        return cq.desanitize(node) if sanitized else node

    if kind == "users":
        user, _, client = name.partition("/clients/")
        entity = {cq.USER: named(user)}
        if client:
            entity[cq.CLIENT_ID] = named(client)
        return entity
    if kind == "clients":
        return {cq.CLIENT_ID: named(name)}
    return {cq.IP: named(name, sanitized=False)}


class BrokerQuotas:
    """The broker's quota managers and muted connections (see the module doc)."""

    def __init__(self, config: BrokerConfig) -> None:
        samples, window = config.quota_window_num, config.quota_window_size_seconds
        self.produce = ClientQuotaManager(samples, window)
        self.fetch = ClientQuotaManager(samples, window)
        self.request = ClientQuotaManager(samples, window, max_throttle_ms=window * 1000)
        self.connections = ConnectionRates(samples, window, config.max_connection_creation_rate)
        self.enabled = False  # any produce, fetch or request quota set once
        self.muted: dict[int, float] = {}  # connection id -> trio time it may read again
        self.clock: TaskClock | None = None
        self._started: dict[Any, int] = {}  # task -> its clock when its request began
        self._managers = {PRODUCE: self.produce, FETCH: self.fetch, REQUEST: self.request}
        self._set: set[tuple[str, QuotaEntity]] = set()  # (key, entity) with a quota

    # -- quotas from the store --------------------------------------------------------------------
    def load(self, store: MetadataStore) -> None:
        """Every stored quota (blocking store calls; at startup)."""
        for entity, configs in cq.all_entities(store):
            self.apply(entity, configs)

    def apply_change(self, kind: str, name: str, configs: Mapping[str, str]) -> bool:
        """A changed config entity (``users``, ``clients``, ``ips``); whether a quota changed."""
        return self.apply(entity_of(kind, name), configs)

    def apply(self, entity: Mapping[str, str | None], configs: Mapping[str, str]) -> bool:
        """Replace an entity's quotas with those in ``configs``; whether any changed."""
        if cq.IP in entity:
            value = configs.get(CONNECTIONS)
            ip = entity[cq.IP]
            before = self.connections.ip_rate(ip) if ip else None
            self.connections.set_ip_rate(ip, int(float(value)) if value is not None else None)
            return ip is None or before != self.connections.ip_rate(ip)
        qe = QuotaEntity(
            user=(entity[cq.USER] or DEFAULT) if cq.USER in entity else None,
            client_id=(entity[cq.CLIENT_ID] or DEFAULT) if cq.CLIENT_ID in entity else None,
        )
        changed = False
        for key, manager in self._managers.items():
            value = configs.get(key)
            if value is None and (key, qe) not in self._set:
                continue  # never had this quota: leave the manager (and its cost) alone
            try:
                quota = None if value is None else float(value)
            except ValueError:
                log.warning("ignoring invalid quota %s=%r of %s", key, value, qe)
                continue
            manager.set_quota(qe, quota)
            (self._set.add if quota is not None else self._set.discard)((key, qe))
            changed = True
            log.info("client quota %s of %s is now %s", key, qe, quota)
        self.enabled = any(m.enabled for m in self._managers.values())
        if self.request.enabled and self.clock is None:
            self.clock = TaskClock()
            try:
                trio.lowlevel.add_instrument(self.clock)
            except RuntimeError:  # not in trio yet (startup): installed by start()
                pass
        return changed

    def start(self) -> None:
        """Install the task clock once in trio, if request quotas were loaded at startup."""
        if self.clock is not None:
            trio.lowlevel.add_instrument(self.clock)

    # -- per request -------------------------------------------------------------------------
    @staticmethod
    def who(ctx: Any) -> tuple[str, str]:
        return ctx.session.principal.name, ctx.header.client_id or ""

    def mute(self, ctx: Any, throttle_ms: int) -> None:
        if throttle_ms > 0:
            until = trio.current_time() + throttle_ms / 1000.0
            self.muted[ctx.connection_id] = max(until, self.muted.get(ctx.connection_id, 0.0))

    async def wait_unmuted(self, connection_id: int) -> None:
        """Wait out the connection's throttle time, if it has one."""
        until = self.muted.pop(connection_id, None)
        if until is not None:
            await trio.sleep_until(until)

    async def timed(self, handler: Any, ctx: Any, request: Any, raw: bool) -> Any:
        """Run a handler with its time counted against the request quota. Raw handlers (Produce,
        Fetch) combine it with their byte quotas themselves (:meth:`request_throttle`)."""
        assert self.clock is not None
        task = trio.lowlevel.current_task()
        self._started[task] = self.clock.running()
        try:
            result = await handler(ctx, request)
            if raw or not dataclasses.is_dataclass(result):
                return result
            throttle = self.request_throttle(ctx)
            if throttle > 0 and hasattr(result, "throttle_time"):
                self.mute(ctx, throttle)
                result = dataclasses.replace(
                    result, throttle_time=datetime.timedelta(milliseconds=throttle)
                )
            return result
        finally:
            self._started.pop(task, None)

    def request_throttle(self, ctx: Any) -> int:
        """Record the current request's handler time; its request-quota throttle time in ms."""
        if not self.request.enabled or self.clock is None:
            return 0
        started = self._started.get(trio.lowlevel.current_task())
        if started is None:
            return 0
        spent = self.clock.running() - started
        user, client = self.who(ctx)
        now = clock.monotonic_ms_float()
        return self.request.record(user, client, spent * NANOS_TO_PERCENT, now)

    def produce_throttle(self, ctx: Any, size: int, acks: int) -> int:
        """Record a produce request of ``size`` bytes; the throttle time (and mute) in ms."""
        user, client = self.who(ctx)
        throttle = self.produce.record(user, client, size, clock.monotonic_ms_float())
        if acks != 0:
            throttle = max(throttle, self.request_throttle(ctx))
        self.mute(ctx, throttle)
        return throttle

    def fetch_max_bytes(self, ctx: Any, max_bytes: int) -> int:
        """A consumer fetch's max_bytes, capped at what one quota window allows."""
        user, client = self.who(ctx)
        cap = self.fetch.max_value_in_window(user, client)
        return max_bytes if cap >= max_bytes else max(int(cap), 0)

    def fetch_throttle(self, ctx: Any, size: int) -> int:
        """Record a consumer fetch response of ``size`` bytes; the throttle time in ms. When
        throttled the caller answers empty, so the bytes are taken back (Kafka's unrecord)."""
        user, client = self.who(ctx)
        now = clock.monotonic_ms_float()
        throttle = max(self.fetch.record(user, client, size, now), self.request_throttle(ctx))
        if throttle > 0:
            self.fetch.record_only(user, client, -size, now)
            self.mute(ctx, throttle)
        return throttle

    # -- new connections --------------------------------------------------------------------------
    async def admit(self, ip: str) -> bool:
        """Apply the connection creation rates to a new connection from ``ip``: wait what the
        broker-wide rate asks; False (after the throttle time) when the address is over its
        rate and the connection must be closed."""
        admission = self.connections.on_new_connection(ip, clock.monotonic_ms_float())
        if admission.delay_ms:
            await trio.sleep(admission.delay_ms / 1000.0)
        if admission.refused:
            log.info("closing connection from %s: connection creation rate %s/s exceeded", ip,
                     self.connections.ip_rate(ip))
        return not admission.refused
