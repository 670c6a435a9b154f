"""Closing idle connections after ``connections.max.idle.ms`` (Kafka's Selector IdleExpiryManager).

A connection is active when bytes move: every receive and every part of a response sent marks
it (``touch``), and so does the end of handling a request. Only that counts: a client that sent
half a frame and stalls, a client that stopped reading its responses (the broker's send is
blocked), a connection that never sent anything, all expire ``connections.max.idle.ms`` after
their last byte, as in Kafka, where a channel's idle time is reset only when the selector reports
it ready. A request being handled is not idle (Kafka's handler threads finish a request long
before the default 10 minutes; here a long-poll or an acks=all wait must not count).

Connections sit in least-recently-active order (an OrderedDict moved on each touch, Kafka's
access-ordered LinkedHashMap); one task sleeps until the oldest could expire, closes what has
expired by cancelling the connection's scope, and sleeps again. ``connections.max.idle.ms`` < 0
disables expiry.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import trio

log = logging.getLogger("kafkapy.connection")


class Activity:
    """One connection's entry: its last activity (trio clock) and how to close it."""

    __slots__ = ("busy", "conn_id", "last", "peer", "scope", "_lru")

    def __init__(self, lru: OrderedDict[int, Activity], conn_id: int, peer: str) -> None:
        self._lru = lru
        self.conn_id = conn_id
        self.peer = peer
        self.scope: trio.CancelScope | None = None
        self.busy = False
        self.last = trio.current_time()

    def touch(self) -> None:
        self.last = trio.current_time()
        self._lru.move_to_end(self.conn_id)


class IdleExpiry:
    """Every open connection's activity; ``run`` closes those idle too long."""

    def __init__(self, max_idle_ms: int) -> None:
        self.max_idle_s = max_idle_ms / 1000
        self.enabled = max_idle_ms >= 0
        self._lru: OrderedDict[int, Activity] = OrderedDict()
        self.expired = 0  # connections closed for being idle (for tests and logs)

    def __len__(self) -> int:
        return len(self._lru)

    def register(self, conn_id: int, peer: str, scope: trio.CancelScope) -> Activity:
        entry = Activity(self._lru, conn_id, peer)
        entry.scope = scope
        self._lru[conn_id] = entry
        return entry

    def unregister(self, entry: Activity) -> None:
        self._lru.pop(entry.conn_id, None)

    def close_oldest(self, n: int) -> None:
        """Close the ``n`` least recently active connections (max.connections was lowered)."""
        for entry in list(self._lru.values())[:n]:
            self._lru.pop(entry.conn_id, None)
            log.info("closing connection peer=%s: over max.connections", entry.peer)
            if entry.scope is not None:
                entry.scope.cancel()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        if not self.enabled:
            return
        idle = self.max_idle_s
        while True:
            now = trio.current_time()
            while self._lru:
                entry = next(iter(self._lru.values()))
                if now - entry.last < idle:
                    break
                if entry.busy:  # handling a request: not idle
                    entry.touch()
                    continue
                self._lru.pop(entry.conn_id, None)
                self.expired += 1
                idle_ms = (now - entry.last) * 1000
                log.debug("closing idle connection peer=%s idle_ms=%d", entry.peer, idle_ms)
                if entry.scope is not None:
                    entry.scope.cancel()
            if self._lru:
                wake = next(iter(self._lru.values())).last + idle
            else:
                wake = now + idle
            await trio.sleep_until(max(wake, now + 0.001))
