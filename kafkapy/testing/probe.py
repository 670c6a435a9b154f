"""Is a broker serving? One ApiVersions v0 request over a plain socket (no client library).

ApiVersions is what every client sends first, so a broker that answers it is a broker clients can
use; an open port alone is not (a listener is bound before the broker is wired).
"""

from __future__ import annotations

import socket
import struct

_CLIENT_ID = b"kafkapy-probe"
_REQUEST = struct.pack(">hhih", 18, 0, 1, len(_CLIENT_ID)) + _CLIENT_ID  # key, version, corr id
_FRAME = struct.pack(">i", len(_REQUEST)) + _REQUEST


def api_versions_answered(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when the broker at host:port answers ApiVersions v0 with error code 0."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(_FRAME)
            head = _recv(sock, 4)
            body = _recv(sock, struct.unpack(">i", head)[0])
    except OSError:
        return False
    correlation_id, error_code = struct.unpack_from(">ih", body)
    return correlation_id == 1 and error_code == 0


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when host:port accepts TCP connections (for TLS listeners, which a plain ApiVersions
    cannot reach)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def plaintext_listener(properties: dict[str, str]) -> bool:
    """Whether the first listener speaks Kafka's protocol in the clear (PLAINTEXT or
    SASL_PLAINTEXT, where ApiVersions is allowed before authentication)."""
    first = properties.get("listeners", "PLAINTEXT://").split(",")[0]
    name = first.split("://", 1)[0].strip().upper()
    mapping = dict(
        item.split(":", 1)
        for item in properties.get("listener.security.protocol.map", "").split(",")
        if ":" in item
    )
    protocol = {k.strip().upper(): v.strip().upper() for k, v in mapping.items()}.get(name, name)
    return protocol in ("PLAINTEXT", "SASL_PLAINTEXT")


def _recv(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return bytes(out)
