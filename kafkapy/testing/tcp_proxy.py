"""A TCP proxy that a test can cut, for network faults without network namespaces.

``TcpProxy(target_host, target_port)`` listens on a free loopback port and forwards every
connection to the target. ``cut()`` makes it a black hole, as a network partition that drops
packets: bytes already accepted on either side are held, nothing is forwarded, no connection is
closed, and new connections are accepted but never forwarded (the client's handshake times out,
as a dropped SYN would make it). ``heal()`` ends the partition: the connections the cut held are
reset (both ends long since gave up on them, as their TCP stacks would have) and new ones are
forwarded again. One thread does all the work (selectors); ``close()`` stops it.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading

from .ports import free_port

_CHUNK = 65536


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.host = host
        self.port = free_port()
        self._listener = socket.create_server((host, self.port), reuse_port=False)
        self._listener.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._peers: dict[socket.socket, socket.socket] = {}
        self._held: list[socket.socket] = []  # accepted during a cut: never forwarded
        self._lock = threading.Lock()
        self._cut = False
        self._heal_requested = False
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="tcp-proxy", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def is_cut(self) -> bool:
        return self._cut

    def cut(self) -> None:
        """Stop forwarding, in both directions, on every connection (a black hole)."""
        with self._lock:
            self._cut = True

    def heal(self) -> None:
        """Forward again; the connections held by the cut are reset."""
        with self._lock:
            self._cut = False
            self._heal_requested = True

    def close(self) -> None:
        self._stop = True
        self._thread.join(5)
        for s in [self._listener, *self._peers, *self._held]:
            try:
                s.close()
            except OSError:
                pass
        self._selector.close()

    # -- the forwarding thread ------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop:
            with self._lock:
                cut, heal = self._cut, self._heal_requested
                self._heal_requested = False
            if heal:
                self._reset_all()
            for key, _ in self._selector.select(0.05):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock is self._listener:
                    self._accept(cut)
                elif not cut:
                    self._forward(sock)
            if cut:
                # keep the selector from spinning on readable sockets nobody reads
                threading.Event().wait(0.05)

    def _accept(self, cut: bool) -> None:
        try:
            client, _ = self._listener.accept()
        except OSError:
            return
        if cut:
            self._held.append(client)
            return
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        for s in (client, upstream):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._peers[client], self._peers[upstream] = upstream, client
        self._selector.register(client, selectors.EVENT_READ, None)
        self._selector.register(upstream, selectors.EVENT_READ, None)

    def _forward(self, sock: socket.socket) -> None:
        other = self._peers.get(sock)
        if other is None:
            return
        try:
            data = sock.recv(_CHUNK)
            if data:
                other.setblocking(True)
                other.sendall(data)
                other.setblocking(False)
                return
        except OSError:
            pass
        self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        other = self._peers.pop(sock, None)
        for s in (sock, other):
            if s is None:
                continue
            self._peers.pop(s, None)
            try:
                self._selector.unregister(s)
            except (KeyError, ValueError):
                pass
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()  # linger 0: a reset, as after a partition
            except OSError:
                pass

    def _reset_all(self) -> None:
        for s in list(self._peers):
            self._drop(s)
        held, self._held = self._held, []
        for s in held:
            try:
                s.close()
            except OSError:
                pass
