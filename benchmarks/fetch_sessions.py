"""Fetch sessions (issue 17, point 4): what a consumer of 1,000 partitions with nothing new costs
the broker, incremental fetch against full fetch.

    .venv/bin/python benchmarks/fetch_sessions.py            # 3 repeats
    .venv/bin/python benchmarks/fetch_sessions.py --partitions 1000 --seconds 3

A topic of 1,000 partitions holds one record in each; the client (raw Fetch v12 requests)
fetches every partition at its end offset, so nothing is new, in two modes: ``immediate`` (one
connection, max_wait 0: every request is answered at once, the broker's work per request) and
``long poll`` (20 connections, max_wait 50 ms: each request waits its whole max wait, as an idle
consumer's do, and the waiting costs too):

* ``full``: the request names all 1,000 partitions each time, sessionless (session id 0, epoch
  -1), as librdkafka fetches; the response lists them all.
* ``incremental``: one full fetch opens a session, then each request is incremental (the
  session's id, the next epoch) and names nothing; the response lists nothing.

Reported: the broker's CPU per request (utime + stime over the window) and the response size;
``full`` and ``incremental`` alternate in every repeat.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

from common import pin, progress

from kafkapy.protocol.wire import uvarint

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / CLK_TCK


def fetch_v12(topic: str, offsets: dict[int, int], session_id: int, epoch: int,
              corr: int = 1, max_wait_ms: int = 0) -> bytes:
    """A framed Fetch v12 request (min_bytes 1) for ``offsets``."""
    head = struct.pack(">hhih", 1, 12, corr, 5) + b"bench" + b"\x00"
    name = topic.encode()
    body = struct.pack(">iiiibii", -1, max_wait_ms, 1, 50 << 20, 0, session_id, epoch)
    if offsets:
        body += uvarint(2) + uvarint(len(name) + 1) + name + uvarint(len(offsets) + 1)
        for p, off in offsets.items():
            body += struct.pack(">iiqiqi", p, -1, off, -1, -1, 1 << 20) + b"\x00"
        body += b"\x00"
    else:
        body += uvarint(1)
    body += uvarint(1) + uvarint(1) + b"\x00"  # no forgotten topics, rack "", no tags
    frame = head + body
    return struct.pack(">i", len(frame)) + frame


class Client:
    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def roundtrip(self, frame: bytes) -> bytes:
        self.sock.sendall(frame)
        (n,) = struct.unpack(">i", self._exact(4))
        return self._exact(n)

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        self.sock.close()


def _session_of(response: bytes) -> tuple[int, int]:
    """(error, session id) of a Fetch v12 response (after its header)."""
    _throttle, error, session_id = struct.unpack_from(">ihi", response, 5)
    return error, session_id


def _loop(bootstrap: str, topic: str, partitions: int, kind: str, wait_ms: int,
          stop: float, out: list) -> None:
    """One connection fetching until ``stop``: ``full`` (sessionless) or ``incremental`` (its
    own session); appends (requests, last response size)."""
    offsets = dict.fromkeys(range(partitions), 1)  # one record in each: at the end
    c = Client(bootstrap)
    try:
        full = fetch_v12(topic, offsets, 0, -1, max_wait_ms=wait_ms)
        sid, epoch = 0, 0
        if kind == "incremental":
            error, sid = _session_of(c.roundtrip(fetch_v12(topic, offsets, 0, 0)))
            if error or not sid:
                raise RuntimeError(f"no fetch session opened (error {error}, session {sid})")
            epoch = 1
        n = size = 0
        while time.perf_counter() < stop:
            if kind == "full":
                resp = c.roundtrip(full)
            else:
                resp = c.roundtrip(fetch_v12(topic, {}, sid, epoch, epoch, wait_ms))
                epoch += 1
                error, got = _session_of(resp)
                if error or got != sid:
                    raise RuntimeError(f"incremental fetch: error {error}, session {got}")
            size = len(resp)
            n += 1
        out.append((n, size))
    finally:
        c.close()


def measure(bootstrap: str, pid: int, topic: str, partitions: int, seconds: float,
            wait_ms: int = 0, conns: int = 1) -> dict[str, dict[str, float]]:
    """{"full" | "incremental": {"cpu_us": ..., "bytes": ..., "requests": ...}}: ``conns``
    connections fetching with ``wait_ms`` long polls (0: answered at once)."""
    import threading

    out: dict[str, dict[str, float]] = {}
    for kind in ("full", "incremental"):
        got: list = []
        cpu0 = _cpu(pid)
        stop = time.perf_counter() + seconds
        threads = [threading.Thread(target=_loop, args=(bootstrap, topic, partitions, kind,
                                                        wait_ms, stop, got))
                   for _ in range(conns)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if len(got) != conns:
            raise RuntimeError(f"{kind}: a fetch loop failed")
        n = sum(g[0] for g in got)
        out[kind] = {"cpu_us": (_cpu(pid) - cpu0) / n * 1e6, "bytes": got[0][1], "requests": n}
    return out


LONG_POLL_MS = 50
LONG_POLL_CONNS = 20


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafkapy.testing import BrokerProcess

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    pin(0)
    samples: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="kafkapy-sessions-") as tmp:
        b = BrokerProcess(Path(tmp) / "b", cpu=1 if (os.cpu_count() or 1) > 1 else None).start()
        try:
            prepare(b.bootstrap, a.partitions, AdminClient, NewTopic, Producer)
            for r in range(a.repeat):
                progress(f"fetch sessions, repeat {r + 1}/{a.repeat}", "sessions")
                for mode, wait, conns in (("immediate", 0, 1),
                                          ("long poll", LONG_POLL_MS, LONG_POLL_CONNS)):
                    got = measure(b.bootstrap, b.pid, "wide", a.partitions, a.seconds, wait,
                                  conns)
                    for k, v in got.items():
                        samples.setdefault(f"{mode}.{k}", []).append(v)
                        progress(f"  {mode} {k}: {v['cpu_us']:.0f} µs/request, "
                                 f"{v['bytes']:.0f} B", "sessions")
        finally:
            b.stop()
    print(f"| fetch of {a.partitions} partitions, nothing new | full µs/request | "
          "incremental µs/request | ratio |")
    print("| --- | --- | --- | --- |")
    for mode in ("immediate", "long poll"):
        full = statistics.median(s["cpu_us"] for s in samples[f"{mode}.full"])
        inc = statistics.median(s["cpu_us"] for s in samples[f"{mode}.incremental"])
        print(f"| {mode} | {full:,.0f} | {inc:,.0f} | {inc / full:.1%} |")


def prepare(bootstrap: str, partitions: int, admin_cls, topic_cls, producer_cls) -> None:
    """The topic ``wide`` of ``partitions`` partitions with one record in each."""
    admin = admin_cls({"bootstrap.servers": bootstrap, "log_level": 0})
    admin.create_topics([topic_cls("wide", partitions, 1)])["wide"].result(60)
    p = producer_cls({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0})
    for i in range(partitions):
        p.produce("wide", b"x", partition=i)
    if p.flush(60):
        raise RuntimeError("records left undelivered")


if __name__ == "__main__":
    main()
