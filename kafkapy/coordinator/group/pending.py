"""A future-like answer: created by the coordinator, completed by it exactly once.

The server waits for completion however it likes (a trio.Event set from a done callback); the
coordinator never blocks. Completing twice keeps the first result, which makes races such as a
member fenced while its answer is already on its way harmless.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    __slots__ = ("_callbacks", "_done", "result")

    def __init__(self) -> None:
        self.result: T | None = None
        self._done = False
        self._callbacks: list[Callable[[Pending[T]], None]] = []

    @classmethod
    def completed(cls, result: T) -> Pending[T]:
        p: Pending[T] = cls()
        p.complete(result)
        return p

    @property
    def done(self) -> bool:
        return self._done

    def complete(self, result: T) -> bool:
        """Set the result; False if it already had one."""
        if self._done:
            return False
        self.result = result
        self._done = True
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)
        return True

    def add_done_callback(self, fn: Callable[[Pending[T]], None]) -> None:
        if self._done:
            fn(self)
        else:
            self._callbacks.append(fn)
