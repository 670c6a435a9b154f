"""A minimal raw Kafka client for the suite: request bytes by hand (or with kio), responses
only counted or walked by their batch headers."""

from __future__ import annotations

import socket
import statistics
import struct
import time


class Raw:
    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.corr = 0
        self.buf = bytearray(64 * 1024)  # grown on demand (1,000 idle clients stay small)

    def close(self) -> None:
        self.sock.close()

    def send(self, api_key: int, version: int, body: bytes, flexible: bool = False) -> None:
        self.corr += 1
        head = struct.pack(">hhih", api_key, version, self.corr, 5) + b"bench"
        if flexible:
            head += b"\x00"
        msg = head + body
        self.sock.sendall(struct.pack(">i", len(msg)) + msg)

    def recv(self) -> memoryview:
        """One response frame, received into a reusable buffer (valid until the next recv)."""
        size = struct.unpack(">i", self._exact(memoryview(bytearray(4)), 4))[0]
        if size > len(self.buf):
            self.buf = bytearray(size)
        return self._exact(memoryview(self.buf), size)

    def _exact(self, view: memoryview, n: int) -> memoryview:
        got = 0
        while got < n:
            k = self.sock.recv_into(view[got:n])
            if not k:
                raise ConnectionError("broker closed the connection")
            got += k
        return view[:n]

    def roundtrip(self, api_key: int, version: int, body: bytes, flexible: bool = False) -> int:
        self.send(api_key, version, body, flexible)
        return len(self.recv())


def _str(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def fetch_v11(topic: str, offsets: dict[int, int], max_bytes: int, part_max: int,
              max_wait_ms: int = 500, min_bytes: int = 1) -> bytes:
    """A Fetch v11 request body (sessionless, read_uncommitted) by hand."""
    body = struct.pack(">iiiibii", -1, max_wait_ms, min_bytes, max_bytes, 0, 0, -1)
    body += struct.pack(">i", 1) + _str(topic) + struct.pack(">i", len(offsets))
    for p, off in offsets.items():
        body += struct.pack(">iiqqi", p, -1, off, -1, part_max)
    return body + struct.pack(">i", 0) + _str("")


def parse_fetch_v11(frame: memoryview) -> dict[int, tuple[int, int, int]]:
    """{partition: (error, next offset or -1, record bytes)} walking batch headers only."""
    pos = 4 + 4 + 2 + 4  # correlation id, throttle, error, session id
    out = {}
    (ntopics,) = struct.unpack_from(">i", frame, pos)
    pos += 4
    for _ in range(ntopics):
        (tlen,) = struct.unpack_from(">h", frame, pos)
        pos += 2 + tlen
        (nparts,) = struct.unpack_from(">i", frame, pos)
        pos += 4
        for _ in range(nparts):
            part, err = struct.unpack_from(">ih", frame, pos)
            pos += 4 + 2 + 24
            (naborted,) = struct.unpack_from(">i", frame, pos)
            pos += 4 + max(naborted, 0) * 16 + 4
            (rlen,) = struct.unpack_from(">i", frame, pos)
            pos += 4
            nxt = -1
            end = pos + max(rlen, 0)
            p = pos
            while p + 27 <= end:
                base, blen = struct.unpack_from(">qi", frame, p)
                if p + 12 + blen > end:
                    break
                (delta,) = struct.unpack_from(">i", frame, p + 23)
                nxt = base + delta + 1
                p += 12 + blen
            out[part] = (err, nxt, max(rlen, 0))
            pos = end
    return out


def metadata_v12_all() -> bytes:
    """Metadata v12 body asking for all topics (null topic array), no auto-creation."""
    return b"\x00" + b"\x00" + b"\x00" + b"\x00"  # topics null, allow_auto=0, authz=0, tags


def timed_roundtrips(c: Raw, api_key: int, version: int, body: bytes, n: int,
                     flexible: bool = False) -> tuple[float, int]:
    """Median ms of n round trips and the response size."""
    times = []
    size = 0
    for _ in range(n):
        t = time.perf_counter()
        size = c.roundtrip(api_key, version, body, flexible)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), size
