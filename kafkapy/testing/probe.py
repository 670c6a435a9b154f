"""Is a broker serving? One ApiVersions v0 request over a plain socket (no client library), or
just a TCP connection.

ApiVersions is what every client sends first, so a broker that answers it is one clients can use
(the start-up benchmark measures until then). Test brokers are waited for by connection only
(kafkapy binds its listener once everything is wired): a probe request would show up in tests
that count requests or handler calls.
"""

from __future__ import annotations

import socket
import struct

_CLIENT_ID = b"kafkapy-probe"
_REQUEST = struct.pack(">hhih", 18, 0, 1, len(_CLIENT_ID)) + _CLIENT_ID  # key, version, corr id
_FRAME = struct.pack(">i", len(_REQUEST)) + _REQUEST


def api_versions_answered(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when the broker at host:port answers ApiVersions v0 (whatever its error code: a
    broker told to fail its handlers, as tests do, still answers)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(_FRAME)
            head = recv_exact(sock, 4)
            body = recv_exact(sock, struct.unpack(">i", head)[0])
    except OSError:
        return False
    return len(body) >= 6 and struct.unpack_from(">i", body)[0] == 1


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    """True when host:port accepts TCP connections."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from a blocking socket; ConnectionError if it closes first."""
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        out += chunk
    return bytes(out)
