"""A small blocking Kafka protocol client for the tools' needs that confluent-kafka does not cover
(ApiVersions of every broker, OffsetDelete, the transaction APIs): sends kio request entities,
decodes responses."""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.cli.common import CliError
from kafkapy.protocol.headers import is_flexible

API_VERSIONS = 18


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in bootstrap.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise CliError(f"Invalid url in bootstrap.servers: {item}")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise CliError("No bootstrap servers given")
    return out


class Connection:
    def __init__(self, host: str, port: int, timeout: float = 10.0, client_id: str = "kafkapy-cli"):
        self.host, self.port = host, port
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ConnectionError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self.client_id = client_id.encode()
        self._corr = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, entity: Any) -> Any:
        frame, pos = self.request_raw(entity)
        value, _ = entity_reader(load_response_schema(entity.__api_key__, entity.__version__))(
            frame, pos
        )
        return value

    def request_raw(self, entity: Any) -> tuple[bytes, int]:
        """Send a request entity; the response frame and where its body starts (for the few
        responses a tool decodes itself)."""
        api_key, version = entity.__api_key__, entity.__version__
        self._corr += 1
        flexible = is_flexible(api_key, version)
        head = struct.pack(">hhi", api_key, version, self._corr)
        head += struct.pack(">h", len(self.client_id)) + self.client_id
        if flexible:
            head += b"\x00"
        buf = io.BytesIO()
        entity_writer(type(entity))(buf, entity)
        payload = head + buf.getvalue()
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._recv(4))[0]
        frame = self._recv(size)
        pos = 4
        if flexible and api_key != API_VERSIONS:
            pos += 1  # empty tagged fields of response header v1
        return frame, pos

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError(f"connection to {self.host}:{self.port} closed")
            out += chunk
        return bytes(out)


def connect_any(bootstrap: str, timeout: float = 10.0) -> Connection:
    errors = []
    for host, port in parse_bootstrap(bootstrap):
        try:
            return Connection(host, port, timeout)
        except ConnectionError as e:
            errors.append(str(e))
    raise CliError(f"Cannot connect to the cluster at {bootstrap}: " + "; ".join(errors))
