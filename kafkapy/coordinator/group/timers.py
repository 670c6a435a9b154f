"""A table of named deadlines (sans-io): the server asks for the next one and calls ``expire``.

Scheduling a key again replaces its deadline; cancelled and replaced entries stay in the heap
until they surface and are then dropped, and the heap is rebuilt when stale entries dominate,
so memory stays proportional to the live timers.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable

Callback = Callable[[int], None]


class Timers:
    def __init__(self) -> None:
        self._live: dict[Hashable, tuple[int, int, Callback]] = {}  # key -> (deadline, seq, fn)
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._live

    def deadline(self, key: Hashable) -> int | None:
        entry = self._live.get(key)
        return None if entry is None else entry[0]

    def schedule(self, key: Hashable, deadline_ms: int, fn: Callback) -> None:
        seq = next(self._seq)
        self._live[key] = (deadline_ms, seq, fn)
        heapq.heappush(self._heap, (deadline_ms, seq, key))
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._live):
            self._heap = [(d, s, k) for k, (d, s, _) in self._live.items()]
            heapq.heapify(self._heap)

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def _prune(self) -> None:
        heap = self._heap
        while heap:
            deadline, seq, key = heap[0]
            entry = self._live.get(key)
            if entry is not None and entry[1] == seq:
                return
            heapq.heappop(heap)

    def next_deadline(self) -> int | None:
        self._prune()
        return self._heap[0][0] if self._heap else None

    def expire(self, now_ms: int) -> int:
        """Run the callbacks of every deadline at or before ``now_ms``; return how many ran."""
        ran = 0
        while True:
            self._prune()
            if not self._heap or self._heap[0][0] > now_ms:
                return ran
            _, _, key = heapq.heappop(self._heap)
            _, _, fn = self._live.pop(key)
            fn(now_ms)
            ran += 1
