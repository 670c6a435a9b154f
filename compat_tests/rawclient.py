"""A minimal blocking Kafka client for protocol-level tests: sends kio request entities (or raw
bytes) and decodes responses with kio, so tests can craft exactly the input they need."""

from __future__ import annotations

import datetime
import io
import socket
import struct
from typing import Any

from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.headers import is_flexible


def encode_request(entity: Any, correlation_id: int = 1, client_id: str = "rawclient") -> bytes:
    api_key, version = entity.__api_key__, entity.__version__
    head = struct.pack(">hhi", api_key, version, correlation_id)
    cid = client_id.encode()
    head += struct.pack(">h", len(cid)) + cid
    if is_flexible(api_key, version):
        head += b"\x00"
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return head + buf.getvalue()


class RawClient:
    def __init__(
        self, bootstrap: str, timeout: float = 10.0, client_id: str = "rawclient"
    ) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self._corr = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def recv_frame(self) -> bytes:
        size = struct.unpack(">i", self._recv_exact(4))[0]
        return self._recv_exact(size)

    def _recv_exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("connection closed by broker")
            out += chunk
        return bytes(out)

    def request(self, entity: Any) -> Any:
        """Send a request entity and decode its response with the matching kio schema."""
        self._corr += 1
        self.send_frame(encode_request(entity, self._corr, self.client_id))
        frame = self.recv_frame()
        api_key, version = entity.__api_key__, entity.__version__
        corr = struct.unpack(">i", frame[:4])[0]
        assert corr == self._corr, f"correlation id {corr} != {self._corr}"
        pos = 4
        if is_flexible(api_key, version) and api_key != 18:
            pos += 1  # empty tagged fields of response header v1
        resp_cls = load_response_schema(api_key, version)
        value, _ = entity_reader(resp_cls)(frame, pos)
        return value

    def sasl_plain(self, username: str, password: str) -> RawClient:
        """Authenticate with SASL/PLAIN (SaslHandshake v1, SaslAuthenticate v2); AssertionError
        when the broker refuses."""
        from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
        from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

        hs = self.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert hs.error_code == 0, hs
        token = b"\0" + username.encode() + b"\0" + password.encode()
        auth = self.request(SaslAuthenticateRequest(auth_bytes=token))
        assert auth.error_code == 0, auth
        return self

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True if the broker closes the connection (reads EOF) within the timeout."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def produce_request(topic: str, batch: bytes, acks: int = 1, partition: int = 0) -> Any:
    """A Produce v9 request entity carrying one record batch for one partition."""
    from kio.schema.produce.v9.request import (
        PartitionProduceData,
        ProduceRequest,
        TopicProduceData,
    )

    return ProduceRequest(
        transactional_id=None,
        acks=acks,
        timeout=datetime.timedelta(seconds=30),
        topic_data=(
            TopicProduceData(
                name=topic,
                partition_data=(PartitionProduceData(index=partition, records=batch),),
            ),
        ),
    )
