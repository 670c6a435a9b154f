"""A minimal async Kafka client connection from one broker to another (the replica fetchers'):
one request at a time, request header v1/v2 and response header v0/v1 chosen by the API
version's flexibility.

:meth:`PeerConnection.open` connects to a peer's endpoint on the inter-broker listener as that
listener requires: TLS with the listener's client context (trust store, key store for mutual
TLS, host name check per ssl.endpoint.identification.algorithm), then SASL (SaslHandshake v1 and
SaslAuthenticate v2 with sasl.mechanism.inter.broker.protocol and the broker's own credentials
from the listener's JAAS config). A refused authentication raises PeerAuthenticationError.

``request`` takes and returns kio entities (OffsetForLeaderEpoch, ListOffsets; the response is
checked by protocol/request_guard.py first, as requests are); ``request_raw``
sends a body encoded by the caller and returns the response frame as a memoryview, received
straight into a reused buffer (one copy, socket to buffer), for the Fetch hot path
(kafkapy.protocol.replica_fetch)."""

from __future__ import annotations

import io
import os
import ssl
import struct
from typing import Any

import trio
from kio.index import load_response_schema
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.errors import ErrorCode, error_name
from kafkapy.protocol.headers import is_flexible
from kafkapy.protocol.request_guard import guard_for
from kafkapy.protocol.wire import skip_tagged_fields
from kafkapy.security.listener_security import InterBrokerSecurity
from kafkapy.security.plain import PlainClient
from kafkapy.security.sasl import PLAIN, SaslAuthenticationError, SaslClient, client_exchange
from kafkapy.security.scram import ScramClient

from .rcvlowat import LowWater
from .tls_transport import TlsTransport

__all__ = ["PeerAuthenticationError", "PeerConnection"]

MAX_KEPT = 4 << 20  # a larger receive buffer is not kept between requests


class PeerAuthenticationError(ConnectionError):
    """The peer refused this broker's TLS handshake or SASL authentication."""


def sasl_client(security: InterBrokerSecurity) -> SaslClient:
    assert security.mechanism is not None
    if security.mechanism == PLAIN:
        return PlainClient(security.username, security.password)
    return ScramClient(security.mechanism, security.username, security.password)


class PeerConnection:
    """A minimal async Kafka client connection to another broker."""

    def __init__(self, stream: trio.SocketStream | TlsTransport, client_id: str) -> None:
        self.stream = stream
        self.tls = isinstance(stream, TlsTransport)
        self.client_id = client_id.encode()
        self._corr = 0
        self._size = bytearray(4)
        self._frame = bytearray(0)  # reused receive buffer (see _receive_frame)
        self._socket = stream.socket
        self._lowat = LowWater(stream.socket)

    @classmethod
    async def open(
        cls, host: str, port: int, client_id: str, security: InterBrokerSecurity | None = None
    ) -> PeerConnection:
        tcp = await trio.open_tcp_stream(host, port)
        if security is None or security.ssl_context is None:
            conn = cls(tcp, client_id)
        else:
            tls = TlsTransport(tcp.socket, security.ssl_context, server_side=False,
                               server_hostname=host)
            try:
                await tls.handshake()
            except ssl.SSLError as e:
                with trio.CancelScope(shield=True):
                    await tls.aclose()
                raise PeerAuthenticationError(f"TLS handshake failed: {e}") from None
            conn = cls(tls, client_id)
        if security is not None and security.mechanism is not None:
            try:
                await conn.authenticate(sasl_client(security))
            except BaseException:
                with trio.CancelScope(shield=True):
                    await conn.aclose()
                raise
        return conn

    async def authenticate(self, client: SaslClient) -> None:
        """SASL on this connection: SaslHandshake v1, then SaslAuthenticate v2 rounds."""
        shake = await self.request(SaslHandshakeRequest(mechanism=client.mechanism))
        if shake.error_code != ErrorCode.none:
            raise PeerAuthenticationError(
                f"SASL handshake for {client.mechanism} refused: {error_name(shake.error_code)} "
                f"(enabled: {', '.join(shake.mechanisms)})"
            )
        exchange = client_exchange(client)
        token = next(exchange)
        while True:
            reply = await self.request(SaslAuthenticateRequest(auth_bytes=token))
            if reply.error_code != ErrorCode.none:
                raise PeerAuthenticationError(
                    f"SASL authentication refused: {error_name(reply.error_code)}: "
                    f"{reply.error_message}"
                )
            try:
                token = exchange.send(reply.auth_bytes)
            except StopIteration:
                return
            except SaslAuthenticationError as e:
                raise PeerAuthenticationError(str(e)) from None

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
        for the rest of the frame (kafkapy.server.network.rcvlowat): a large Fetch response then
        costs one wake-up, not one per few segments."""
        if self.tls:
            await self._receive_tls(view)
            return
        sock = self._socket
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

    async def _receive_tls(self, view: memoryview) -> None:
        assert isinstance(self.stream, TlsTransport)
        got, n = 0, len(view)
        while got < n:
            k = await self.stream.receive_into(view[got:])
            if not k:
                raise ConnectionError("connection closed by the leader")
            got += k

    async def aclose(self) -> None:
        await self.stream.aclose()
