"""Zero-copy sending of file regions to a trio socket with os.sendfile."""

from __future__ import annotations

import os
from collections.abc import Callable

import trio

from kafkapy.storage.file_region import FileRegion


async def send_region(
    sock: trio.socket.SocketType,
    region: FileRegion,
    touch: Callable[[], None] | None = None,
) -> None:
    """Send `region` of a file to `sock`, waiting for writability as needed; ``touch`` is
    called after every part the kernel took (idle expiry)."""
    fd = sock.fileno()
    offset = region.position
    remaining = region.length
    while remaining > 0:
        try:
            sent = os.sendfile(fd, region.fileno, offset, remaining)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)
            continue
        if sent == 0:
            raise trio.BrokenResourceError("file shorter than the region being sent")
        offset += sent
        remaining -= sent
        if touch is not None:
            touch()
    await trio.lowlevel.checkpoint()
