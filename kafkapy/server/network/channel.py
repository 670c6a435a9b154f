"""The byte transport under a connection: plain TCP, or TLS over it.

A connection reads frames with :meth:`receive` (filling its FrameReader's buffer) and writes a
response with :meth:`send` (a size prefix, then bytes and file regions).

* :class:`PlainChannel` receives with ``readv`` straight into the frame buffer, waiting for
  readability only when the socket runs dry (and dropping the idle staging buffer then; a large
  frame raises the receive low-water mark, server/network/rcvlowat.py), and sends file regions with
  ``os.sendfile``: record bytes go from the page cache to the socket without a copy.
* :class:`TlsChannel` goes through a TlsTransport (server/network/tls_transport.py): records are
  decrypted straight into the frame buffer, and file regions are read (``os.pread``, in chunks)
  and encrypted, as Kafka's TLS listeners copy too: zero-copy cannot apply to bytes that must be
  encrypted.

Both honour the connection limits' hooks: ``receive`` returns WAIT_FOR_MEMORY when the frame
reader is out of request memory (queued.max.request.bytes; the connection waits for the pool,
not the socket), and ``send`` calls ``touch`` after every piece the kernel took, so a slow
reader is not idle (connections.max.idle.ms, server/network/idle_expiry.py).

Both close the descriptors of the file regions they were given, once sent or when sending fails.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import trio

from kafkapy.protocol.framing import FrameReader
from kafkapy.protocol.wire import INT32
from kafkapy.storage.file_region import FileRegion

from .rcvlowat import LowWater
from .sendfile import send_region
from .tls_transport import TlsTransport

Parts = list[bytes | FileRegion]
Touch = Callable[[], None] | None  # marks the connection active (server/network/idle_expiry.py)
TLS_CHUNK = 256 * 1024  # file bytes read and encrypted per write on TLS channels
WAIT_FOR_MEMORY = -1  # receive(): the reader waits for request memory (queued.max.request.bytes)


def _size(parts: Parts) -> int:
    return sum(p.length if isinstance(p, FileRegion) else len(p) for p in parts)


async def _send_parts(
    parts: Parts,
    send_bytes: Callable[[bytearray], Awaitable[None]],
    send_file_region: Callable[[FileRegion], Awaitable[None]],
) -> None:
    """The size prefix, then the parts: bytes gathered into as few writes as possible, file
    regions through ``send_file_region``; the regions' descriptors are closed in the end."""
    pending = bytearray(INT32.pack(_size(parts)))
    try:
        for part in parts:
            if isinstance(part, FileRegion):
                if pending:
                    await send_bytes(pending)
                    pending = bytearray()
                await send_file_region(part)
            else:
                pending += part
        if pending:
            await send_bytes(pending)
    finally:
        for part in parts:
            if isinstance(part, FileRegion):
                os.close(part.fileno)


class PlainChannel:
    """A TCP connection (see the module doc)."""

    tls = False

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.socket = stream.socket
        self._fd = self.socket.fileno()
        self._lowat = LowWater(self.socket)
        # whether other tasks may have run since the connection last cleared it (the
        # connection yields before serving pipelined requests when nothing else did)
        self.yielded = True

    async def receive(self, reader: FrameReader) -> int:
        """Receive into ``reader``'s buffer; the byte count, 0 when the peer closed,
        WAIT_FOR_MEMORY when the reader must wait for request memory first. When the socket runs
        dry the staging buffer is dropped while waiting (idle connections hold no buffer)."""
        while True:
            try:
                return os.readv(self._fd, (reader.buffer(),))
            except BlockingIOError:
                reader.release()
                if reader.waiting_for_memory:
                    return WAIT_FOR_MEMORY
                self._lowat.wait_for(reader.missing)  # a large frame: wake when it is all there
                await trio.lowlevel.wait_readable(self.socket)
                self.yielded = True

    async def _send_bytes(self, data: bytes | bytearray, touch: Touch) -> None:
        """Send all of ``data``, marking the connection active after every part the kernel
        took."""
        with memoryview(data) as view:
            total = 0
            while total < len(view):
                with view[total:] as rest:
                    total += await self.socket.send(rest)
                if touch is not None:
                    touch()

    async def send(self, parts: Parts, touch: Touch = None) -> None:
        """Write one response: size prefix, then its parts (file regions with sendfile).

        A response of bytes only (all but Fetch with records) is written at once, without a
        trip through trio's scheduler; only what the socket does not take waits."""
        if all(type(p) is bytes for p in parts):
            data = b"".join([INT32.pack(sum(map(len, parts))), *parts])
            try:
                sent = os.write(self._fd, data)  # the socket is non-blocking
            except BlockingIOError:
                sent = 0
            if touch is not None and sent:
                touch()
            if sent < len(data):
                self.yielded = True
                await self._send_bytes(memoryview(data)[sent:], touch)
            return
        self.yielded = True
        await _send_parts(
            parts,
            lambda data: self._send_bytes(data, touch),
            lambda region: send_region(self.socket, region, touch),
        )

    async def aclose(self) -> None:
        await self.stream.aclose()


class TlsChannel:
    """A TLS connection over TCP (see the module doc); the handshake is already done."""

    tls = True

    def __init__(self, transport: TlsTransport) -> None:
        self.transport = transport
        self.socket = transport.socket
        self.yielded = True  # see PlainChannel; every send here goes through trio's

    async def receive(self, reader: FrameReader) -> int:
        """Decrypt straight into ``reader``'s buffer; the byte count, 0 when the peer closed,
        WAIT_FOR_MEMORY when the reader must wait for request memory first. With nothing
        buffered, the staging buffer is dropped while waiting, as on plain TCP."""
        if not self.transport.buffered:
            reader.release()
            if reader.waiting_for_memory:
                return WAIT_FOR_MEMORY
            await trio.lowlevel.wait_readable(self.socket)
        return await self.transport.receive_into(reader.buffer())

    async def send(self, parts: Parts, touch: Touch = None) -> None:
        """Write one response: size prefix, then its parts (file regions read and encrypted)."""
        self.yielded = True
        await _send_parts(
            parts,
            lambda data: self.transport.send_all(data, touch),
            lambda region: self._send_region(region, touch),
        )

    async def _send_region(self, region: FileRegion, touch: Touch) -> None:
        position, end = region.position, region.position + region.length
        while position < end:
            chunk = os.pread(region.fileno, min(TLS_CHUNK, end - position), position)
            if not chunk:
                raise trio.BrokenResourceError("file shorter than the region being sent")
            position += len(chunk)
            await self.transport.send_all(chunk, touch)

    async def aclose(self) -> None:
        await self.transport.aclose()


Channel = PlainChannel | TlsChannel
