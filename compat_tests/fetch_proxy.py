"""A TCP proxy in front of a broker that records the fetch session metadata clients send and the
session ids and errors the broker answers with, so tests can tell that a real client used
incremental fetch sessions (KIP-227) and that the broker's answers kept it on them.

The broker must advertise the proxy (advertised.listeners), or clients would connect to the
broker directly after bootstrapping. Frames are forwarded as they arrive; parsing happens on the
side and never changes or delays what is forwarded."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass

from kafkapy.protocol.fetch_request import parse_fetch_request
from kafkapy.protocol.headers import parse_request_header

FETCH = 1


@dataclass(frozen=True)
class SeenFetch:
    version: int
    session_id: int
    epoch: int
    partitions: int  # named in the request
    forgotten: int


@dataclass(frozen=True)
class SeenResponse:
    error: int
    session_id: int
    partitions: int  # in the response (None when not parsed)


class FetchProxy:
    def __init__(self, broker_port: int) -> None:
        self._target = ("127.0.0.1", broker_port)
        self._srv = socket.socket()
        self._srv.bind(("127.0.0.1", 0))
        self._srv.listen(64)
        self.port = self._srv.getsockname()[1]
        self.fetches: list[SeenFetch] = []
        self.responses: list[SeenResponse] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._srv.close()
        for s in self._socks:
            with contextlib.suppress(OSError):
                s.close()

    def __enter__(self) -> FetchProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def snapshot(self) -> tuple[list[SeenFetch], list[SeenResponse]]:
        with self._lock:
            return list(self.fetches), list(self.responses)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._srv.accept()
                broker = socket.create_connection(self._target)
            except OSError:
                return
            self._socks += [client, broker]
            pending: dict[int, int] = {}  # correlation id -> fetch version
            threading.Thread(target=self._pump, args=(client, broker, True, pending),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(broker, client, False, pending),
                             daemon=True).start()

    def _pump(self, src, dst, requests: bool, pending: dict[int, int]) -> None:
        buf = bytearray()
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                dst.sendall(data)
                buf += data
                while len(buf) >= 4:
                    (n,) = struct.unpack_from(">i", buf, 0)
                    if len(buf) < 4 + n:
                        break
                    frame = bytes(buf[4 : 4 + n])
                    del buf[: 4 + n]
                    try:
                        (self._request if requests else self._response)(frame, pending)
                    except Exception as e:  # a parse problem must not stop the forwarding
                        self.problems.append(repr(e))
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def _request(self, frame: bytes, pending: dict[int, int]) -> None:
        key, version, corr = struct.unpack_from(">hhi", frame, 0)
        if key != FETCH or version < 7:
            return
        header = parse_request_header(frame)
        req = parse_fetch_request(bytearray(frame), header.body_offset, version)
        seen = SeenFetch(version, req.session_id, req.session_epoch,
                         sum(len(t.partitions) for t in req.topics),
                         sum(len(f.partitions) for f in req.forgotten_topics_data))
        with self._lock:
            self.fetches.append(seen)
            pending[corr] = version

    def _response(self, frame: bytes, pending: dict[int, int]) -> None:
        (corr,) = struct.unpack_from(">i", frame, 0)
        with self._lock:
            version = pending.pop(corr, None)
        if version is None:
            return
        pos = 4 + (1 if version >= 12 else 0)  # response header v1 has tagged fields
        _throttle, error, session_id = struct.unpack_from(">ihi", frame, pos)
        with self._lock:
            self.responses.append(SeenResponse(error, session_id, _count_partitions(
                frame, pos + 10, version)))


def _count_partitions(frame: bytes, pos: int, version: int) -> int:
    """The number of partitions in a Fetch response (v7+) body from its topics array."""
    from kio.index import load_response_schema
    from kio.serial import entity_reader

    resp, _ = entity_reader(load_response_schema(FETCH, version))(frame, pos - 10)
    return sum(len(t.partitions) for t in resp.responses)
