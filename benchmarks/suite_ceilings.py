"""The suite's ceilings section: what this machine does without a broker (loopback TCP,
sendfile, file writes, confluent-kafka's enqueue rate), measured in the same run as the broker."""

from __future__ import annotations

import multiprocessing as mp
import os
import select
import socket
import time
from pathlib import Path

from common import pin, progress
from confluent_kafka import Producer
from suite import BROKER_CPU, CLIENT_CPU, MB, MiB, Results, Settings


def _sink_process(ports, results) -> None:
    """Child process on the client core: accept one connection, count bytes until EOF, as the
    raw fetch client receives (recv_into a large buffer)."""
    pin(CLIENT_CPU)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    ports.put(srv.getsockname()[1])
    conn, _ = srv.accept()
    view = memoryview(bytearray(16 * MiB))
    n = 0
    while True:
        k = conn.recv_into(view)
        if not k:
            break
        n += k
    results.put((n, time.perf_counter()))


def _to_sink(send) -> float:
    """MB/s of `send(socket)` from the broker core to a receiving process on the client core,
    from the first byte sent to the last byte received."""
    ctx = mp.get_context("spawn")
    ports, results = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_sink_process, args=(ports, results))
    proc.start()
    try:
        c = socket.create_connection(("127.0.0.1", ports.get(timeout=30)))
        pin(BROKER_CPU)
        try:
            start = time.perf_counter()
            send(c)
            c.close()
        finally:
            pin(CLIENT_CPU)
        n, end = results.get(timeout=120)
    finally:
        proc.join(30)
    return n / (end - start) / MB


def ceiling_loopback(total: int) -> float:
    """Python blocking-socket loopback TCP, 1 MiB writes, from the broker core."""
    chunk = b"\x00" * MiB

    def send(c: socket.socket) -> None:
        for _ in range(total // MiB):
            c.sendall(chunk)

    return _to_sink(send)


def ceiling_sendfile(directory: Path, total: int) -> float:
    """os.sendfile from a page-cached file to a loopback socket, from the broker core."""
    path = directory / "sendfile.ceiling"
    size = min(total, 256 * MiB)
    with open(path, "wb") as f:
        for _ in range(size // MiB):
            f.write(os.urandom(64) * (MiB // 64))
    with open(path, "rb") as f:  # page cache warm
        while f.read(8 * MiB):
            pass
    fd = os.open(path, os.O_RDONLY)

    def send(c: socket.socket) -> None:
        # non-blocking with a readiness wait, as the broker sends (a blocking sendfile wakes on
        # every bit of freed buffer and measures ~40 % lower on this VM)
        c.setblocking(False)
        poller = select.poll()
        poller.register(c, select.POLLOUT)
        for _ in range(max(total // size, 1)):
            off = 0
            while off < size:
                try:
                    off += os.sendfile(c.fileno(), fd, off, size - off)
                except BlockingIOError:
                    poller.poll()
        c.setblocking(True)

    try:
        return _to_sink(send)
    finally:
        os.close(fd)
        path.unlink()


def ceiling_file_write(directory: Path, total: int) -> tuple[float, float]:
    """Sequential 1 MiB os.write to the log directory's disk: (buffered MB/s, incl. fsync MB/s)."""
    path = directory / "write.ceiling"
    chunk = os.urandom(64) * (MiB // 64)
    pin(BROKER_CPU)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        start = time.perf_counter()
        for _ in range(total // MiB):
            os.write(fd, chunk)
        t1 = time.perf_counter()
        os.fsync(fd)
        t2 = time.perf_counter()
    finally:
        pin(CLIENT_CPU)
        os.close(fd)
        path.unlink()
    n = total // MiB * MiB
    return n / (t1 - start) / MB, n / (t2 - start) / MB


def client_enqueue_rate(size: int, n: int = 300_000) -> float:
    """records/s one confluent-kafka producer can hand to librdkafka with no broker at all:
    the load client's own ceiling."""
    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 5, "batch.size": MiB,
                  "queue.buffering.max.messages": 2 * n, "queue.buffering.max.kbytes": 2**21,
                  "log_level": 0, "message.timeout.ms": 1000})
    payload = os.urandom(size)
    start = time.perf_counter()
    for _ in range(n):
        p.produce("t", payload)
    rate = n / (time.perf_counter() - start)
    p.purge()
    p.flush(0)
    return rate


def run_ceilings(s: Settings, res: Results, directory: Path, _rep: int) -> None:
    progress("ceilings: loopback TCP, sendfile, file write, client enqueue")
    # a ceiling is the best this machine does: the best of 3 tries in each run
    res.add("ceil.loopback", "ceilings", "Python loopback TCP, blocking, 1 MiB writes", "MB/s",
            max(ceiling_loopback(s.ceiling_bytes) for _ in range(3)))
    res.add("ceil.sendfile", "ceilings", "os.sendfile page-cached file → loopback socket", "MB/s",
            max(ceiling_sendfile(directory, s.ceiling_bytes) for _ in range(3)))
    buffered, synced = max(ceiling_file_write(directory, s.ceiling_bytes) for _ in range(3))
    res.add("ceil.write", "ceilings", "sequential write to the log dir's disk, incl. fsync",
            "MB/s", synced)
    res.add("ceil.write_buffered", "ceilings", "sequential write, page cache only (no fsync)",
            "MB/s", buffered)
    for size in (100, 1024):
        res.add(f"ceil.client.{size}", "ceilings",
                f"confluent-kafka produce() enqueue, {size} B, no broker", "records/s",
                client_enqueue_rate(size))
