"""kafkapy.testing.tcp_proxy: bytes pass both ways; a cut holds them (nothing forwarded, no
connection closed, a new connection accepted but never answered); the heal resets the held
connections and forwards new ones again."""

from __future__ import annotations

import socket
import threading

import pytest

from kafkapy.testing.tcp_proxy import TcpProxy


@pytest.fixture
def echo_server():
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            threading.Thread(target=echo, args=(conn,), daemon=True).start()

    def echo(conn: socket.socket) -> None:
        with conn:
            try:
                while data := conn.recv(4096):
                    conn.sendall(data)
            except OSError:  # reset by the proxy's heal
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()


def roundtrip(sock: socket.socket, payload: bytes, timeout: float = 2.0) -> bytes:
    sock.settimeout(timeout)
    sock.sendall(payload)
    return sock.recv(4096)


def test_forwards_cuts_and_heals(echo_server):
    proxy = TcpProxy("127.0.0.1", echo_server)
    try:
        before = socket.create_connection(("127.0.0.1", proxy.port))
        assert roundtrip(before, b"ping") == b"ping"
        proxy.cut()
        with pytest.raises(TimeoutError):
            roundtrip(before, b"held", timeout=0.5)
        during = socket.create_connection(("127.0.0.1", proxy.port))  # accepted, never answered
        with pytest.raises(TimeoutError):
            roundtrip(during, b"new", timeout=0.5)
        proxy.heal()
        before.settimeout(2)
        try:
            assert before.recv(4096) == b""  # the held connection is gone: closed...
        except ConnectionResetError:
            pass  # ...or reset
        after = socket.create_connection(("127.0.0.1", proxy.port))
        assert roundtrip(after, b"again") == b"again"
        for s in (before, during, after):
            s.close()
    finally:
        proxy.close()
