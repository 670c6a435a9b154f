"""The request memory pool bounded by ``queued.max.request.bytes`` (Kafka's SimpleMemoryPool as
SocketServer builds it: non-strict, so a request is admitted whenever any memory is left and the
pool can go below zero by at most one request, at most socket.request.max.bytes).

Every request frame is charged to the pool when its buffer is allocated — as soon as its size
prefix is read, before its bytes are received — and credited back when the request has been
handled (Produce credits its frame once the records are appended, before waiting for acks=all,
as Kafka releases a produce request's buffer when the handler returns and the request waits in
purgatory). A connection whose next frame cannot be charged stops reading ("muted", its bytes
stay in the kernel's socket buffer, TCP pushes back on the client) until memory is credited.

``queued.max.request.bytes`` -1 (Kafka's default) means no bound: :data:`UNBOUNDED`.
"""

from __future__ import annotations

import trio


class MemoryPool:
    """``size`` bytes for received requests; ``try_charge``/``credit`` and frame leases."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.available = size
        self._leases: dict[int, int] = {}  # id(frame) -> bytes charged for it
        self._freed = trio.Event()

    @property
    def bounded(self) -> bool:
        return True

    def try_charge(self, n: int) -> bool:
        """Take ``n`` bytes if any memory is left (non-strict); False: the caller must wait."""
        if n <= 0:
            return True
        if self.available <= 0:
            return False
        self.available -= n
        return True

    def credit(self, n: int) -> None:
        if n <= 0:
            return
        self.available += n
        self._freed.set()
        self._freed = trio.Event()

    def lease(self, frame: bytearray | bytes) -> None:
        """Remember that ``frame``'s charge is to be credited by ``release(frame)``."""
        self._leases[id(frame)] = len(frame)

    def lease_all(self, frames: list[bytearray]) -> None:
        for frame in frames:
            self._leases[id(frame)] = len(frame)

    def release(self, frame: bytearray | bytes | None) -> None:
        """Credit what ``frame`` was charged (once; later calls do nothing)."""
        if frame is not None:
            self.credit(self._leases.pop(id(frame), 0))

    def release_all(self, frames: list[bytearray]) -> None:
        for frame in frames:
            self.credit(self._leases.pop(id(frame), 0))

    async def wait_for_memory(self) -> None:
        """Return once memory is credited (or at once when some is available)."""
        if self.available <= 0:
            await self._freed.wait()

    @property
    def in_use(self) -> int:
        return self.size - self.available


class UnboundedPool(MemoryPool):
    """``queued.max.request.bytes`` -1: every charge succeeds and nothing is tracked."""

    def __init__(self) -> None:
        super().__init__(0)

    @property
    def bounded(self) -> bool:
        return False

    def try_charge(self, n: int) -> bool:
        return True

    def credit(self, n: int) -> None:
        return None

    def lease(self, frame: bytearray | bytes) -> None:
        return None

    def lease_all(self, frames: list[bytearray]) -> None:
        return None

    def release(self, frame: bytearray | bytes | None) -> None:
        return None

    def release_all(self, frames: list[bytearray]) -> None:
        return None

    async def wait_for_memory(self) -> None:
        return None


def memory_pool(queued_max_request_bytes: int) -> MemoryPool:
    """The pool for a ``queued.max.request.bytes`` setting (<= 0: unbounded, as Kafka)."""
    if queued_max_request_bytes <= 0:
        return UnboundedPool()
    return MemoryPool(queued_max_request_bytes)
