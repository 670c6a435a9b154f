"""A minimal async Kafka client connection from one broker to another (the replica fetchers'):
one request at a time, kio entities in and out, request header v1/v2 and response header v0/v1
chosen by the API version's flexibility."""

from __future__ import annotations

import io
import struct
from typing import Any

import trio
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.headers import is_flexible

__all__ = ["PeerConnection"]


class PeerConnection:
    """A minimal async Kafka client connection to another broker."""

    def __init__(self, stream: trio.SocketStream, client_id: str) -> None:
        self.stream = stream
        self.client_id = client_id.encode()
        self._corr = 0
        self._buf = bytearray()

    @classmethod
    async def open(cls, host: str, port: int, client_id: str) -> PeerConnection:
        stream = await trio.open_tcp_stream(host, port)
        return cls(stream, client_id)

    async def request(self, entity: Any) -> Any:
        api_key, version = entity.__api_key__, entity.__version__
        self._corr += 1
        flexible = is_flexible(api_key, version)
        head = struct.pack(">hhih", api_key, version, self._corr, len(self.client_id))
        head += self.client_id
        if flexible:
            head += b"\x00"
        body = io.BytesIO()
        entity_writer(type(entity))(body, entity)
        payload = head + body.getvalue()
        await self.stream.send_all(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await self._recv(4))[0]
        frame = await self._recv(size)
        pos = 4 + (1 if flexible else 0)
        value, _ = entity_reader(load_response_schema(api_key, version))(frame, pos)
        return value

    async def _recv(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = await self.stream.receive_some(1 << 20)
            if not chunk:
                raise ConnectionError("connection closed by the leader")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    async def aclose(self) -> None:
        await self.stream.aclose()
