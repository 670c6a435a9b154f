"""Wake-ups for waiters on new data (long-poll Fetch), without polling.

Every append calls `notify()`; a waiter takes the current event with `waiter()` *before* it
checks for data, then waits on it. An append in between sets that very event, so no wake-up is
lost.
"""

from __future__ import annotations

import trio


class AppendNotifier:
    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = trio.Event()

    def waiter(self) -> trio.Event:
        return self._event

    def notify(self) -> None:
        if not self._event.is_set():
            self._event.set()
            self._event = trio.Event()
