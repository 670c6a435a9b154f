"""Accepting connections under the connection limits (Kafka's Acceptor), and surviving a
process that runs out of file descriptors.

For each listener socket one task loops: wait for a broker-wide slot (``max.connections``; the
accept blocks meanwhile, new connections queue in the listen backlog), accept, then close at once
a connection whose address already holds ``max.connections.per.ip`` (its override), else serve
it in its own task until it closes (which frees its slot).

File descriptors: at start the broker raises its soft RLIMIT_NOFILE to the hard limit (as the
JVM does for Kafka by default, -XX:+MaxFDLimit). Connections are not allowed to take the last
descriptors, which segment rolls and new partitions need (an error there takes a log directory
offline): an accepted socket whose descriptor number reaches ``limit - reserve`` is closed at
once (descriptors are allocated lowest first, so its number counts the descriptors in use).
When accept itself fails for lack of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM),
the loop waits for a connection to close (or a second) and tries again: never a busy loop, one
warning per episode, existing connections keep being served.

Refused connections are counted and logged at most once per ``LOG_EVERY_S`` per reason.
"""

from __future__ import annotations

import errno
import logging
import resource
from collections.abc import Awaitable, Callable

import trio

from .connection_quotas import ConnectionQuotas

log = logging.getLogger("kafkapy.acceptor")

CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
RETRY_S = 1.0  # after a capacity error, at the latest
LOG_EVERY_S = 10.0


def raise_open_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard
    if hard == resource.RLIM_INFINITY:
        try:
            with open("/proc/sys/fs/nr_open") as f:
                want = int(f.read())
        except (OSError, ValueError):
            want = 1 << 20
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (OSError, ValueError) as e:
            log.debug("cannot raise the open file limit from %d to %d: %s", soft, want, e)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def fd_reserve(limit: int) -> int:
    """Descriptors kept for storage: a tenth of the limit, between 32 and 1,000."""
    return min(1000, max(32, limit // 10))


class RefusalLog:
    """Counts refusals per reason; one line per reason at most every LOG_EVERY_S."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._next: dict[str, float] = {}
        self.total = 0

    def refused(self, reason: str, detail: str) -> None:
        self.total += 1
        self._counts[reason] = self._counts.get(reason, 0) + 1
        now = trio.current_time()
        if now >= self._next.get(reason, 0.0):
            log.info(
                "refused connections reason=%s count=%d last=%s",
                reason,
                self._counts.pop(reason),
                detail,
            )
            self._next[reason] = now + LOG_EVERY_S


class Acceptor:
    """The accept loops of one broker; ``serve(stream, ip)`` runs one connection."""

    def __init__(
        self,
        quotas: ConnectionQuotas,
        serve: Callable[[trio.SocketStream, str], Awaitable[None]],
        fd_limit: int,
    ) -> None:
        self.quotas = quotas
        self._serve = serve
        self.fd_limit = fd_limit
        self.fd_ceiling = fd_limit - fd_reserve(fd_limit)
        self.refusals = RefusalLog()

    async def run(self, listeners: list[trio.SocketListener]) -> None:
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        short_of: str | None = None  # the capacity error of the current episode, if any
        async with listener:
            while True:
                await self.quotas.wait_for_slot()
                try:
                    stream = await listener.accept()
                except OSError as e:
                    if e.errno not in CAPACITY_ERRNOS:
                        raise
                    if short_of is None:
                        short_of = errno.errorcode.get(e.errno, str(e.errno))
                        log.warning(
                            "cannot accept connections: %s (%s); open connections=%d; waiting "
                            "for connections to close",
                            short_of,
                            e.strerror,
                            self.quotas.total,
                        )
                    with trio.move_on_after(RETRY_S):
                        await self.quotas.wait_for_release()
                    continue
                if short_of is not None:
                    log.info("accepting connections again after %s", short_of)
                    short_of = None
                self._admit(stream, nursery)

    def _admit(self, stream: trio.SocketStream, nursery: trio.Nursery) -> None:
        sock = stream.socket
        try:
            ip = str(sock.getpeername()[0])
        except OSError:  # reset before we got to it
            sock.close()
            return
        fd = sock.fileno()
        if fd >= self.fd_ceiling:
            sock.close()
            self.refusals.refused(
                "file_descriptors", f"{ip} (fd {fd}; open file limit {self.fd_limit})"
            )
            return
        if not self.quotas.admit(ip):
            sock.close()
            self.refusals.refused(
                "max.connections.per.ip", f"{ip} holds {self.quotas.limit_for(ip)}"
            )
            return
        nursery.start_soon(self._run_connection, stream, ip)

    async def _run_connection(self, stream: trio.SocketStream, ip: str) -> None:
        try:
            await self._serve(stream, ip)
        finally:
            self.quotas.release(ip)
