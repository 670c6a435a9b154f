"""Requests waiting for partitions to change (Kafka's delayed-operation purgatory), without
polling and without a cancel scope per wait.

Long-poll Fetches and acks=all Produces wait until a partition they named changes (an append, a
high watermark or leadership move) or their deadline passes. Each waiter watches its own
partitions, so an append wakes the requests waiting on that partition only, not every waiter
of the broker. The protocol is the one of an event taken before a check: ``watch(keys)`` arms a
waiter *before* the caller checks the partitions, then ``wait(deadline)`` parks it; a change in
between fires the armed waiter, so no wake-up is lost.

Deadlines are kept by one timer task (``run``) for all waiters, in a heap: a timed-out waiter
is simply rescheduled. Timing a wait out with a cancel scope of its own costs a Cancelled
exception unwound through the request's frames, which was about a third of the broker's CPU for
an empty long-poll Fetch; here one scope deadline (the earliest) is moved instead, and expiring
it wakes every waiter due at that time.

``notify(key)`` fires the waiters of one partition, ``notify()`` every waiter (leadership and
topic changes). ``waiter()`` hands out an event set by every notification, for code that waits
on any change.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable
from typing import Any

import trio

Key = Hashable  # (topic, partition)
_seq = itertools.count()
COMPACT_MIN = 1024  # timer heap size from which entries of woken waiters are dropped


class Watch:
    """One armed waiter: fired by a notification of one of its keys or by its deadline.

    A persistent watch (a fetch session's) stays registered on its keys across waits: firing
    it does not unregister it, ``rearm`` makes it wait again, ``close`` ends it. Re-arming costs
    nothing however many partitions it watches."""

    __slots__ = ("_owner", "closed", "fired", "gen", "keys", "persistent", "task", "woken")

    def __init__(self, owner: Purgatory, keys: tuple[Key, ...] | None, persistent: bool) -> None:
        self._owner = owner
        self.keys = keys  # None: every notification fires it
        self.persistent = persistent
        self.fired = False  # notified (or timed out, or closed) since armed
        self.woken = False  # fired by a notification, not by the deadline
        self.task: Any = None  # the parked task while waiting
        self.gen = 0  # which arming a deadline in the timer heap belongs to
        self.closed = False

    async def wait(self, deadline: float) -> bool:
        """Wait until fired or ``deadline`` (trio time); True when a notification fired it.
        A watch that is not persistent is closed afterwards."""
        return await self._owner._wait(self, deadline)

    def rearm(self) -> None:
        """Wait again (a persistent watch, after a wait or a notification)."""
        self.fired = self.woken = False
        self.gen += 1

    def close(self) -> None:
        """Disarm and unregister (the caller found what it waited for, or is done); a task
        waiting on it is woken (as by its deadline)."""
        if not self.closed:
            self._owner._forget(self)
            self.closed = True
        self.fired = True
        task, self.task = self.task, None
        if task is not None:
            trio.lowlevel.reschedule(task)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.persistent:
            self.close()


class Purgatory:
    """Watches by partition and one timer for all their deadlines."""

    def __init__(self) -> None:
        self._by_key: dict[Key, dict[Watch, None]] = {}
        self._everything: dict[Watch, None] = {}
        self._heap: list[tuple[float, int, Watch, int]] = []
        self._timer: trio.CancelScope | None = None
        self._event = trio.Event()  # waiter(): set by every notification
        self._event_taken = False
        self._compact_at = COMPACT_MIN

    # ---- arming and waiting --------------------------------------------------------------

    def watch(self, keys: Iterable[Key] | None = None, *, persistent: bool = False) -> Watch:
        """Arm a waiter on ``keys`` (None: on every notification)."""
        w = Watch(self, None if keys is None else tuple(keys), persistent)
        if w.keys is None:
            self._everything[w] = None
        else:
            by_key = self._by_key
            for k in w.keys:
                watchers = by_key.get(k)
                if watchers is None:
                    by_key[k] = {w: None}
                else:
                    watchers[w] = None
        return w

    async def _wait(self, w: Watch, deadline: float) -> bool:
        if w.fired or trio.current_time() >= deadline:
            woken = w.woken
            if not w.persistent:
                w.close()
            await trio.lowlevel.checkpoint()
            return woken
        if self._timer is None:  # no timer task (tests of parts): a scope of our own
            with trio.move_on_at(deadline):
                await self._park(w)
            woken = w.woken
            if not w.persistent or not w.fired:
                w.close()
            return woken
        heap = self._heap
        heapq.heappush(heap, (deadline, next(_seq), w, w.gen))
        if len(heap) > self._compact_at:  # entries of waiters woken early: drop them
            heap[:] = [e for e in heap if not e[2].fired and e[2].gen == e[3]]
            heapq.heapify(heap)
            self._compact_at = max(COMPACT_MIN, 2 * len(heap))
        if deadline < self._timer.deadline:
            self._timer.deadline = deadline
        await self._park(w)
        return w.woken

    async def _park(self, w: Watch) -> None:
        w.task = trio.lowlevel.current_task()

        def abort(_raise_cancel: Any) -> trio.lowlevel.Abort:
            w.task = None
            w.close()
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    # ---- firing --------------------------------------------------------------------------

    def notify(self, key: Key | None = None) -> None:
        """A partition changed (``key``), or anything may have (None)."""
        if self._event_taken:
            self._event.set()
            self._event = trio.Event()
            self._event_taken = False
        if key is None:
            fired = list(self._everything)
            for watchers in self._by_key.values():
                fired += watchers
        else:
            watchers = self._by_key.get(key)
            if not watchers and not self._everything:
                return
            fired = [*(watchers or ()), *self._everything]
        for w in fired:
            self._fire(w, True)

    def _fire(self, w: Watch, woken: bool) -> None:
        if w.fired:
            return
        if not w.persistent:
            self._forget(w)
            w.closed = True
        w.fired = True
        w.woken = woken
        task, w.task = w.task, None
        if task is not None:
            trio.lowlevel.reschedule(task)

    def _forget(self, w: Watch) -> None:
        if w.closed:
            return
        if w.keys is None:
            self._everything.pop(w, None)
            return
        by_key = self._by_key
        for k in w.keys:
            watchers = by_key.get(k)
            if watchers is not None:
                watchers.pop(w, None)
                if not watchers:
                    del by_key[k]

    def waiter(self) -> trio.Event:
        """An event set by the next notification of any kind."""
        self._event_taken = True
        return self._event

    def __len__(self) -> int:
        """Armed watches (for tests)."""
        return len(self._everything) + len({w for ws in self._by_key.values() for w in ws})

    # ---- the timer -----------------------------------------------------------------------

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Time out waiters at their deadlines (started in the broker's nursery)."""
        task_status.started()
        try:
            while True:
                heap = self._heap
                while heap and (heap[0][2].fired or heap[0][2].gen != heap[0][3]):
                    heapq.heappop(heap)  # woken by a notification earlier, or re-armed since
                with trio.CancelScope(deadline=heap[0][0] if heap else math.inf) as scope:
                    self._timer = scope
                    await trio.sleep_forever()
                self._timer = None
                now = trio.current_time()
                while heap and heap[0][0] <= now:
                    _deadline, _seq_no, w, gen = heapq.heappop(heap)
                    if w.gen == gen:
                        self._fire(w, False)
        finally:
            self._timer = None
