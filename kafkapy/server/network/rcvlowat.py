"""Waking a reader once per large frame rather than once per TCP segment (SO_RCVLOWAT).

When a large frame (a 1 MiB Produce request, a replica's Fetch response) has only partly
arrived, waiting for readability wakes the reader for every few segments, and each wake-up costs
a context switch and a pass of the event loop. Raising the socket's receive low-water mark to the
bytes still missing makes epoll report the socket readable only once they are all buffered (or
the peer closed, or the kernel is short of receive memory, which wakes readers regardless).
The mark must be back at 1 whenever the reader waits for the start of a new frame.
"""

from __future__ import annotations

import socket

import trio

LOWAT_MAX = 1 << 20  # the most a reader asks to be buffered before it is woken
_SUPPORTED = hasattr(socket, "SO_RCVLOWAT")


class LowWater:
    """The receive low-water mark of one socket, changed only when it differs."""

    __slots__ = ("_sock", "current", "enabled")

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self._sock = sock
        self.current = 1
        self.enabled = _SUPPORTED

    def wait_for(self, missing: int) -> None:
        """Before waiting for readability: wake when ``missing`` bytes (capped) are buffered;
        ``missing`` 0 or 1 restores the default (any byte wakes)."""
        want = min(max(missing, 1), LOWAT_MAX) if self.enabled else 1
        if want != self.current:
            self._set(want)

    def reset(self) -> None:
        """Back to the default (any byte wakes)."""
        if self.current != 1:
            self._set(1)

    def _set(self, n: int) -> None:
        try:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, n)
        except OSError:
            self.enabled = False
            return
        self.current = n
