"""A minimal async Kafka client connection from one broker to another (the replica fetchers'):
one request at a time, request header v1/v2 and response header v0/v1 chosen by the API
version's flexibility.

``request`` takes and returns kio entities (OffsetForLeaderEpoch, ListOffsets; the response is
checked by protocol/request_guard.py first, as requests are); ``request_raw``
sends a body encoded by the caller and returns the response frame as a memoryview, received
straight into a reused buffer (one copy, socket to buffer), for the Fetch hot path
(kafkapy.protocol.replica_fetch)."""

from __future__ import annotations

import io
import os
import struct
from typing import Any

import trio
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.headers import is_flexible
from kafkapy.protocol.request_guard import guard_for
from kafkapy.protocol.wire import skip_tagged_fields

from .rcvlowat import LowWater

__all__ = ["PeerConnection"]

MAX_KEPT = 4 << 20  # a larger receive buffer is not kept between requests


class PeerConnection:
    """A minimal async Kafka client connection to another broker."""

    def __init__(self, stream: trio.SocketStream, client_id: str) -> None:
        self.stream = stream
        self.client_id = client_id.encode()
        self._corr = 0
        self._size = bytearray(4)
        self._frame = bytearray(0)  # reused receive buffer (see _receive_frame)
        self._lowat = LowWater(stream.socket)

    @classmethod
    async def open(cls, host: str, port: int, client_id: str) -> PeerConnection:
        stream = await trio.open_tcp_stream(host, port)
        return cls(stream, client_id)

    async def request(self, entity: Any) -> Any:
        """Send a kio request entity; return the decoded response entity."""
        api_key, version = entity.__api_key__, entity.__version__
        body = io.BytesIO()
        entity_writer(type(entity))(body, entity)
        frame = await self.request_raw(api_key, version, body.getvalue())
        schema = load_response_schema(api_key, version)
        guard_for(schema)(frame, 0, len(frame))  # kio must not allocate from a bad count
        value, _ = entity_reader(schema)(bytes(frame), 0)
        return value

    async def request_raw(self, api_key: int, version: int, body: bytes) -> memoryview:
        """Send a request body; return the response body (after the response header) as a view
        into a buffer that stays valid until the next request on this connection."""
        self._corr += 1
        flexible = is_flexible(api_key, version)
        head = struct.pack(">hhih", api_key, version, self._corr, len(self.client_id))
        head += self.client_id
        if flexible:
            head += b"\x00"
        size = len(head) + len(body)
        await self.stream.send_all(b"".join((struct.pack(">i", size), head, body)))
        frame = await self._receive_frame()
        (corr,) = struct.unpack_from(">i", frame, 0)
        if corr != self._corr:
            raise ConnectionError(f"correlation id {corr} does not match {self._corr}")
        pos = 4
        if flexible:
            pos = skip_tagged_fields(frame, pos)
        return frame[pos:]

    async def _receive_frame(self) -> memoryview:
        """Receive one size-prefixed frame into the reused buffer (a new one when it is too
        small, or when the last one was large: a fetcher holds at most MAX_KEPT between rounds)."""
        await self._receive_into(memoryview(self._size))
        (n,) = struct.unpack(">i", self._size)
        if n < 4:
            raise ConnectionError(f"bad response size {n}")
        if len(self._frame) < n or len(self._frame) > max(n, MAX_KEPT):
            self._frame = bytearray(n)
        view = memoryview(self._frame)[:n]
        await self._receive_into(view, whole=True)
        return view

    async def _receive_into(self, view: memoryview, whole: bool = False) -> None:
        """Fill ``view`` from the socket. With ``whole``, once the socket runs dry the wait is
        for the rest of the frame (kafkapy.server.rcvlowat): a large Fetch response then costs
        one wake-up, not one per few segments."""
        sock = self.stream.socket
        fd = sock.fileno()
        got, n = 0, len(view)
        try:
            while got < n:
                try:
                    k = os.readv(fd, (view[got:],))
                except BlockingIOError:
                    if whole:
                        self._lowat.wait_for(n - got)
                    await trio.lowlevel.wait_readable(sock)
                    continue
                if not k:
                    raise ConnectionError("connection closed by the leader")
                got += k
        finally:
            self._lowat.reset()

    async def aclose(self) -> None:
        await self.stream.aclose()
