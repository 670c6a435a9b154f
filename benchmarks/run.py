"""kafkapy benchmark suite (issue 8): every figure next to this machine's own ceiling, measured
in the same run.

    .venv/bin/python benchmarks/run.py --quick          # 3-4 minutes, the README figures
    .venv/bin/python benchmarks/run.py                  # full: 3 repeats, longer runs, 2 GiB fetch
    .venv/bin/python benchmarks/run.py --quick --repeat 1 --only fetch --profile

Sections (--only): ceilings, requests, produce, kafka-python, fetch, latency, scale,
cluster.
Progress goes to stderr; the table to stdout; JSON (every sample), the markdown table and the
latency plot to benchmarks/results/<mode>.{json,md} and latency-<mode>.png. With --profile,
py-spy (.venv/bin/pip install py-spy) samples the broker under produce load (100 B, 1 KiB; the
confluent-kafka and the raw Produce loop), under Metadata of 1,000 partitions and, when the
fetch section runs, under fetch load; the top functions (self and inclusive) and the collapsed
stacks (loadable in speedscope or flamegraph.pl) go to benchmarks/results/profiles/, which is
not committed.

Method: the broker runs on core 1, every client (and this script) on core 0, the same in every
compared run; ceilings put the receiving side on core 0 and the sending/writing side on core 1,
the broker's. Fetch data is read once before it is measured (page cache warm). Each figure is
the median of --repeat runs with min-max. Broker peak RSS is VmHWM from /proc, reset before
each run (clear_refs 5); CPU is the broker's utime+stime over the run, utime (Python) also
separately. Produce brokers free deleted topics at once (file.delete.delay.ms=0) so that they
write into recycled page cache as the write ceiling does (benchmarks/README.md, Method). The
latency section (latency.py) offers fractions of its own end-to-end maximum.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing as mp
import os
import resource
import select
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import fetch_sessions
import issue17
import latency
import per_request
import relay
from common import create_topic, delete_topic, fmt, fmt_values, parse_sections, pin, progress
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from raw_produce import raw_produce

from kafkapy.testing import BrokerProcess
from kafkapy.testing.profiling import py_spy_binary
from kafkapy.testing.usage import measured

MiB = 1024 * 1024
MB = 1e6
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
RESULTS = Path(__file__).resolve().parent / "results"
LOG_APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}
SECTIONS = ("ceilings", "requests", "produce", "kafka-python", "fetch", "latency", "scale",
            "sessions", "cleaner", "cluster")


# ---- settings ---------------------------------------------------------------------------------


@dataclass
class Settings:
    quick: bool
    repeat: int
    produce_s: float  # duration of one produce run
    fetch_bytes: int  # size of the partition read by the fetch runs
    latency_s: float  # duration of one offered-load level
    commit_s: float
    ceiling_bytes: int
    data_dir: Path | None
    profile: bool
    sections: tuple[str, ...]

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Settings:
        only = parse_sections(a.only, SECTIONS)
        if a.quick:
            return cls(True, a.repeat or 2, 1.5, 512 * MiB, 2.5, 1.5, 1024 * MiB, a.data_dir,
                       a.profile, only)
        return cls(False, a.repeat or 3, 6.0, 2048 * MiB, 8.0, 5.0, 1024 * MiB, a.data_dir,
                   a.profile, only)


# ---- results ------------------------------------------------------------------------------


@dataclass
class Row:
    section: str
    name: str
    unit: str
    values: list[float] = field(default_factory=list)
    ceiling: str | None = None  # key of the row this one is compared to
    note: str = ""
    higher_is_better: bool = True


class Results:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.extra: dict[str, object] = {}

    def add(self, key: str, section: str, name: str, unit: str, value: float | None,
            ceiling: str | None = None, note: str = "", higher_is_better: bool = True) -> None:
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = Row(section, name, unit, [], ceiling, note, higher_is_better)
        if value is not None:
            row.values.append(float(value))

    def median(self, key: str) -> float | None:
        row = self.rows.get(key)
        return statistics.median(row.values) if row and row.values else None


# ---- broker helpers -----------------------------------------------------------------------


def pinned_broker(root: Path, name: str, overrides: dict[str, str] | None = None) -> BrokerProcess:
    """A broker on the broker core with 1 GiB segments and one partition per topic by default;
    ``with`` starts and stops it, ``.usage()`` gives its CPU and peak RSS (``measured``)."""
    ov = {"log.segment.bytes": str(1024 * MiB), "num.partitions": "1"}
    ov.update(overrides or {})
    return BrokerProcess(root / name, ov, cpu=BROKER_CPU)


# ---- a minimal raw client (request bytes by hand or with kio; responses only counted) --------


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


# ---- ceilings ----------------------------------------------------------------------------


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


# ---- produce -------------------------------------------------------------------------------


def producer_config(bootstrap: str, acks: str, codec: str, linger_ms: float = 5) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "linger.ms": linger_ms,
        "batch.size": MiB,
        "message.max.bytes": 2 * MiB,
        "compression.type": codec,
        "queue.buffering.max.kbytes": 256 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": False,
        "delivery.report.only.error": True,
    }


def own_cpu_s() -> float:
    """CPU seconds of this process, every thread (librdkafka's included), user and system."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def confluent_produce(bootstrap: str, topic: str, size: int, seconds: float, acks: str = "1",
                      codec: str = "none", partitions: int = 1) -> tuple[int, float]:
    """Produce for `seconds` as fast as the broker takes it; return (records acked, elapsed)."""
    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    p = Producer({**producer_config(bootstrap, acks, codec), "on_delivery": on_delivery})
    # compressible payloads, as real data is (random bytes would make lz4 pointless)
    base = (b"kafkapy benchmark record " * (size // 25 + 1))[:size]
    payloads = [bytes([i]) + base[1:] for i in range(16)]
    p.produce(topic, payloads[0], partition=0)  # metadata and connection before the clock
    p.flush(30)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    produce = p.produce
    while True:
        for i in range(1000):
            payload = payloads[i & 15]
            while True:
                try:
                    if partitions > 1:
                        produce(topic, payload, partition=i % partitions)
                    else:
                        produce(topic, payload)
                    break
                except BufferError:
                    p.poll(0.001)
        n += 1000
        if time.perf_counter() >= deadline:
            break
    left = p.flush(120)
    elapsed = time.perf_counter() - start
    if left or errors:
        raise RuntimeError(f"produce: {left} undelivered, errors: {Counter(errors).most_common(3)}")
    return n, elapsed


def record_run(res: Results, key: str, section: str, label: str, m: dict, records: int,
               size: int, ceiling_mb: str | None = None, rec_ceiling: str | None = None) -> None:
    mb = records * size / MB
    res.add(f"{key}.rec_s", section, label, "records/s", records / m["elapsed"], rec_ceiling)
    res.add(f"{key}.mb_s", section, label, "MB/s", mb / m["elapsed"], ceiling_mb)
    res.add(f"{key}.cpu_mb", section, label, "broker CPU ms/MB", m["cpu_s"] / mb * 1000,
            higher_is_better=False)
    res.add(f"{key}.user_mb", section, label, "broker user CPU ms/MB (Python)",
            m["cpu_user_s"] / mb * 1000, higher_is_better=False,
            note="the rest is kernel time: socket receive, page-cache write")
    res.add(f"{key}.rss", section, label, "broker peak RSS MB", m["peak_rss_mb"],
            higher_is_better=False)


def produce_matrix(s: Settings) -> list[tuple[int, str, str, int]]:
    return [(size, acks, codec, parts) for size in (100, 1024) for acks in ("1", "all")
            for codec in ("none", "lz4") for parts in (1, 8)]


# Deleted topics free their files at once, as the write ceiling's unlinks do: on these VMs
# writing into page cache that was never touched (or was handed back to the host) costs about
# 4 ms/MB in the kernel, into recently freed pages about 0.3 ms/MB, so with Kafka's default
# 60 s delay every run would write into fresh memory while the ceiling reuses its own.
PRODUCE_BROKER = {"file.delete.delay.ms": "0"}


def run_produce(s: Settings, res: Results, root: Path, rep: int) -> None:
    with pinned_broker(root, f"produce-{rep}", PRODUCE_BROKER) as b:
        for size in (100, 1024):
            topic = f"raw{size}"
            create_topic(b, topic, 1)
            label = f"produce {size} B, acks=1, none, 1 partition, raw pipelined Produce loop"
            progress(f"{label} ({s.produce_s:g} s)")
            with measured(b.usage()) as m:
                n, elapsed = raw_produce(b.bootstrap, topic, size, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, f"produce.raw.{size}", "produce", label, m, n, size, "ceil.write")
            delete_topic(b, topic)
        for i, (size, acks, codec, parts) in enumerate(produce_matrix(s)):
            topic = f"p{i}"
            create_topic(b, topic, parts)
            label = f"produce {size} B, acks={acks}, {codec}, {parts} partition{'s' * (parts > 1)}"
            progress(f"{label} ({s.produce_s:g} s)")
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, topic, size, s.produce_s, acks, codec,
                                               parts)
            m["elapsed"] = elapsed  # producer side: first record to last acknowledgement
            record_run(res, f"produce.{size}.{acks}.{codec}.{parts}", "produce", label, m, n, size,
                       "ceil.write", f"ceil.client.{size}")
            delete_topic(b, topic)


def kafka_python_produce(
    bootstrap: str, topic: str, size: int, seconds: float
) -> tuple[int, float]:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5, batch_size=MiB,
                      max_request_size=2 * MiB)
    payload = os.urandom(size)
    p.send(topic, payload).get(30)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(500):
            p.send(topic, payload)
        n += 500
    p.flush(120)
    elapsed = time.perf_counter() - start
    p.close()
    return n, elapsed


def run_kafka_python(s: Settings, res: Results, root: Path, rep: int) -> None:
    with pinned_broker(root, f"kafka-python-{rep}") as b:
        for size in (100, 1024):
            topic = f"kp{size}"
            create_topic(b, topic, 1)
            label = f"kafka-python produce {size} B, acks=1, none, 1 partition (reference)"
            progress(label)
            with measured(b.usage()) as m:
                n, elapsed = kafka_python_produce(b.bootstrap, topic, size, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, f"kafka_python.{size}", "produce", label, m, n, size, "ceil.write")


# ---- fetch ----------------------------------------------------------------------------------


def fill_topic(bootstrap: str, topic: str, size: int, total_bytes: int) -> int:
    p = Producer(producer_config(bootstrap, "1", "none"))
    payload = os.urandom(size)
    n = total_bytes // size
    for _ in range(n):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.001)
    if p.flush(300):
        raise RuntimeError("fill: records left undelivered")
    return n


def warm_page_cache(log_dir: Path, topic: str) -> None:
    for seg in sorted((log_dir / f"{topic}-0").glob("*.log")):
        with open(seg, "rb") as f:
            while f.read(8 * MiB):
                pass


def raw_fetch_all(bootstrap: str, topic: str, end_offset: int) -> tuple[int, int, float]:
    """Read partition 0 from offset 0 to end_offset with Fetch v11 requests of up to 50 MiB,
    counting bytes only; return (record bytes, requests, elapsed)."""
    c = Raw(bootstrap)
    c.buf = bytearray(64 * MiB)
    offset = 0
    total = 0
    requests = 0
    start = time.perf_counter()
    try:
        while offset < end_offset:
            c.send(1, 11, fetch_v11(topic, {0: offset}, 50 * MiB, 50 * MiB))
            err, nxt, nbytes = parse_fetch_v11(c.recv())[0]
            requests += 1
            if err or nxt < 0:
                raise RuntimeError(f"fetch at {offset}: error {err}, next {nxt}")
            offset = nxt
            total += nbytes
    finally:
        c.close()
    return total, requests, time.perf_counter() - start


def kcat_fetch(bootstrap: str, topic: str, records: int) -> float:
    start = time.perf_counter()
    out = subprocess.run(
        ["kcat", "-b", bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
         "-X", "fetch.max.bytes=52428800", "-X", "max.partition.fetch.bytes=52428800",
         "-f", "\n"],
        capture_output=True, check=True, timeout=900,
    )
    got = out.stdout.count(b"\n")
    if got != records:
        raise RuntimeError(f"kcat fetched {got} records, expected {records}")
    return time.perf_counter() - start


def run_fetch(s: Settings, res: Results, root: Path, rep: int) -> None:
    size = 1024
    with pinned_broker(root, f"fetch-{rep}") as b:
        create_topic(b, "f", 1)
        progress(f"fetch: filling a partition with {s.fetch_bytes // MiB} MiB of {size} B records")
        records = fill_topic(b.bootstrap, "f", size, s.fetch_bytes)
        log_bytes = sum(p.stat().st_size for p in (b.log_dirs[0] / "f-0").glob("*.log"))
        warm_page_cache(b.log_dirs[0], "f")
        raw_fetch_all(b.bootstrap, "f", records)  # warm the broker (indexes, first requests)
        progress("fetch: raw Fetch v11 loop, page cache warm")
        with measured(b.usage()) as m:
            nbytes, requests, elapsed = raw_fetch_all(b.bootstrap, "f", records)
        m["elapsed"] = elapsed
        res.add("fetch.raw.mb_s", "fetch",
                f"fetch {log_bytes / MiB:,.0f} MiB from the start, raw Fetch loop (bytes counted)",
                "MB/s", nbytes / elapsed / MB, "ceil.sendfile")
        res.add("fetch.raw.rec_s", "fetch", "fetch, raw Fetch loop", "records/s",
                records / elapsed)
        res.add("fetch.raw.cpu_mb", "fetch", "fetch, raw Fetch loop", "broker CPU ms/MB",
                m["cpu_s"] / (nbytes / MB) * 1000, higher_is_better=False)
        res.add("fetch.raw.rss", "fetch", "fetch, raw Fetch loop", "broker peak RSS MB",
                m["peak_rss_mb"], higher_is_better=False)
        res.add("fetch.raw.req_ms", "fetch", "fetch, raw Fetch loop", "ms per 50 MiB request",
                elapsed / requests * 1000, higher_is_better=False)
        res.extra["fetch_log_bytes"] = log_bytes
        progress("fetch: kcat (librdkafka) from the start, for reference")
        warm_page_cache(b.log_dirs[0], "f")
        with measured(b.usage()) as m:
            elapsed = kcat_fetch(b.bootstrap, "f", records)
        res.add("fetch.kcat.mb_s", "fetch", "fetch from the start, kcat (client-bound reference)",
                "MB/s", log_bytes / elapsed / MB, "ceil.sendfile")
        res.add("fetch.kcat.rec_s", "fetch", "fetch, kcat", "records/s", records / elapsed)
        res.add("fetch.kcat.rss", "fetch", "fetch, kcat", "broker peak RSS MB", m["peak_rss_mb"],
                higher_is_better=False)
        if s.profile:
            profile_broker(b, "fetch", lambda: raw_fetch_all(b.bootstrap, "f", records), res)


# ---- per-request CPU -------------------------------------------------------------------------


def run_requests(s: Settings, res: Results, root: Path, rep: int) -> None:
    """Broker CPU per small Produce and per empty long-poll Fetch next to the minimal framed trio
    server's, same frames at the same rate (benchmarks/per_request.py)."""
    seconds = 2.0 if s.quick else 5.0
    with pinned_broker(root, f"requests-{rep}") as b, per_request.MinimalServer(BROKER_CPU) as m:
        progress(f"per-request CPU: broker and minimal server, produce and fetch ({seconds:g} s "
                 "each)")
        create_topic(b, "req-produce", 1)
        create_topic(b, "req-fetch", 1)
        got = per_request.run_section([per_request.Server("minimal", m.pid, m.bootstrap, False),
                                       per_request.Server("broker", b.pid, b.bootstrap)],
                                      seconds)
    for key, v in got.items():
        load, shape, server = key.split(".")
        what = ("Produce v9, 16 x 1,000 B, acks=1" if load == "produce"
                else f"empty long-poll Fetch v12 ({per_request.FETCH_WAIT_MS} ms)")
        who = "broker" if server == "broker" else "minimal framed trio server"
        label = f"{what}, {shape}, {who}"
        res.add(f"requests.{key}.cpu_us", "requests", label, "CPU µs per request", v["cpu_us"],
                higher_is_better=False)
        res.add(f"requests.{key}.user_us", "requests", label, "user CPU µs per request",
                v["user_us"], higher_is_better=False)
        res.add(f"requests.{key}.rate", "requests", label, "requests/s", v["rate"])


# ---- fetch sessions --------------------------------------------------------------------------


def run_sessions(s: Settings, res: Results, root: Path, rep: int) -> None:
    """A consumer of 1,000 partitions with nothing new: incremental fetch (KIP-227 session)
    against full fetch, broker CPU per request (benchmarks/fetch_sessions.py)."""
    parts = 1000
    seconds = 2.0 if s.quick else 5.0
    with pinned_broker(root, f"sessions-{rep}") as b:
        progress(f"sessions: {parts} partitions, one record each")
        fetch_sessions.prepare(b.bootstrap, parts, AdminClient, NewTopic, Producer)
        for mode, wait, conns, key in (
            ("long poll", fetch_sessions.LONG_POLL_MS, fetch_sessions.LONG_POLL_CONNS, "sessions"),
            ("immediate", 0, 1, "sessions.immediate"),
        ):
            progress(f"sessions: full and incremental fetches, {mode} ({seconds:g} s each)")
            got = fetch_sessions.measure(b.bootstrap, b.pid, "wide", parts, seconds, wait, conns)
            for kind, v in got.items():
                res.add(f"{key}.{kind}.cpu_us", "sessions",
                        f"fetch of {parts} partitions with nothing new, {kind}, {mode}"
                        + (f" ({conns} connections, max_wait {wait} ms)" if wait else
                           " (max_wait 0)"),
                        "broker CPU µs per request", v["cpu_us"], higher_is_better=False,
                        note=f"{v['bytes']:,.0f} B response")


# ---- log cleaner -------------------------------------------------------------------------------


def run_cleaner(s: Settings, res: Results, root: Path, rep: int) -> None:
    """One cleaning pass against the decode-only reference, and produce while the broker cleans
    a compacted topic against produce with the cleaner idle (benchmarks/cleaner.py)."""
    import cleaner

    cs = cleaner.Settings.from_args(argparse.Namespace(
        quick=s.quick, repeat=1, only="inprocess,broker", mb=None, dirty_mb=None, seconds=None,
        batch_records=32, codecs="none", data_dir=None, output=RESULTS / "cleaner.json"))
    cr = cleaner.Results()
    cleaner.run_inprocess(cs, cr, root, rep)
    cleaner.run_broker(cs, cr, root, rep)
    for key, src, label, unit in (
        ("cleaner.pass_mb_s", "ip.none.read", "one cleaning pass, uncompressed, log read",
         "MB/s"),
        ("cleaner.decode_mb_s", "ip.none.decode", "reference: read and decode every record once",
         "MB/s"),
        ("cleaner.scan_mb_s", "ip.none.scan",
         "reference: read and scan every record once (the cleaner's scanner)", "MB/s"),
        ("cleaner.produce_idle", None, "produce 1 KiB, cleaner idle (mean of before and after)",
         "MB/s"),
        ("cleaner.produce_cleaning", "br.busy.mb", "produce 1 KiB while the broker cleans",
         "MB/s"),
        ("cleaner.busy", "br.busy", "produce window with a cleaning pass in progress", "%"),
    ):
        if src is None:
            a, b_ = cr.median("br.idle.mb"), cr.median("br.after.mb")
            value = None if a is None or b_ is None else (a + b_) / 2
        else:
            value = cr.median(src)
        res.add(key, "cleaner", label, unit, value)
    for note in cr.notes:
        res.extra.setdefault("notes", []).append(f"cleaner: {note}")  # type: ignore[union-attr]


# ---- end-to-end latency ----------------------------------------------------------------------


def run_latency(s: Settings, res: Results, root: Path, rep: int) -> None:
    """Latency at 10/50/90 % of the maximum the latency setup itself sustains (benchmarks/
    latency.py says why and what each figure means)."""
    size = 1024
    with pinned_broker(root, f"latency-{rep}") as b:
        create_topic(b, "lmax", 1, LOG_APPEND_TIME)
        progress(f"latency: maximum end-to-end rate of producer + consumer ({s.produce_s:g} s)")
        top = latency.run_level(b.bootstrap, b.pid, "lmax", size, None, s.produce_s, CLIENT_CPU)
        max_rate = top["e2e_rate"]
        delete_topic(b, "lmax")
        res.add("latency.max", "latency", "latency setup, maximum end to end (producer and "
                "consumer on the client core)", "records/s", max_rate,
                note="offered loads are fractions of this")
        # the first repeat runs 10 % and 50 % issue17.TAIL_RUNS times in a row (issue 17's
        # tail target holds for each of them), then 90 %; later repeats run each level once
        levels = [0.1, 0.5] * (issue17.TAIL_RUNS if rep == 0 else 1) + [0.9]
        for i, frac in enumerate(levels):
            topic = f"lat{i}"
            create_topic(b, topic, 1, LOG_APPEND_TIME)
            rate = max_rate * frac
            tail_run = rep == 0 and frac < 0.9
            if tail_run:
                progress("latency: the minimal relay's tail first (benchmarks/relay.py)")
                relayed = relay.run_relay(BROKER_CPU, CLIENT_CPU, s.latency_s)
            progress(f"latency at {frac:.0%} of max = {rate:,.0f} records/s of {size} B")
            with measured(b.usage()) as m:
                f = latency.run_level(b.bootstrap, b.pid, topic, size, rate, s.latency_s,
                                      CLIENT_CPU)
            label = f"end-to-end latency at {frac:.0%} of max"
            key = f"latency.{int(frac * 100)}"
            if tail_run:
                res.add(f"tail.{int(frac * 100)}.ratio", "latency", label, "p99 / p50",
                        f["p99"] / f["p50"], higher_is_better=False,
                        note=f"each of {issue17.TAIL_RUNS} consecutive runs")
                # waits of the broker and the clients for their cores in that run: the tail's
                # scheduling share (other processes on the cores)
                res.add(f"tail.{int(frac * 100)}.wait", "latency", label,
                        "broker / client run-queue wait %",
                        max(f["broker_wait"], f["producer_wait"] + f["consumer_wait"]),
                        higher_is_better=False, note="the larger of the two")
                # the least p99 / p50 this p50 allows with the relay's scheduling jitter
                res.add(f"tail.{int(frac * 100)}.bound", "latency", label,
                        "1 + relay (p99 - p50) / p50", 1 + relayed["jitter"] / f["p50"],
                        higher_is_better=False, note="minimal trio relay, just before the run")
                res.add(f"tail.{int(frac * 100)}.relay_jitter", "latency", label,
                        "relay p99 - p50 ms", relayed["jitter"], higher_is_better=False)

            def add(name: str, unit: str, value: float, note: str = "",
                    higher: bool = False, k: str = key, lb: str = label) -> None:
                res.add(f"{k}.{name}", "latency", lb, unit, value, note=note,
                        higher_is_better=higher)

            for q in ("p50", "p99", "p99.9"):
                add(q, f"{q} ms", f[q])
            add("to_append.p99", "p99 ms send → broker append", f["to_append.p99"],
                "LogAppendTime, 1 ms resolution")
            add("from_append.p99", "p99 ms broker append → consumed", f["from_append.p99"])
            add("rate", "offered records/s", rate, higher=True)
            add("achieved", "records/s the paced producer achieved", f["achieved"], higher=True)
            add("received", "records received", f["received"], higher=True)
            add("rss", "broker peak RSS MB", m["peak_rss_mb"])
            add("client_busy", "client core busy %", f.get(f"core{CLIENT_CPU}_busy", 0.0),
                "all processes on the core, over the produce window")
            add("broker_busy", "broker core busy %", f.get(f"core{BROKER_CPU}_busy", 0.0),
                "all processes on the core, over the produce window")
            add("broker_wait", "broker run-queue wait %", f["broker_wait"],
                "runnable but not running (other processes had its core)")
            add("client_wait", "producer + consumer run-queue wait %",
                f["producer_wait"] + f["consumer_wait"])
            delete_topic(b, topic)
        if rep == 0:
            run_latency_split(b, res, max_rate * 0.1, s.latency_s, size)


def run_latency_split(b: BrokerProcess, res: Results, rate: float, seconds: float,
                      size: int) -> None:
    """One more run at 10 % load with a packet tap on the loopback interface
    (benchmarks/wire_split.py): where each record's latency went, and the p99 / p50 that a
    broker whose residence never varied would give with these clients on this machine."""
    create_topic(b, "lsplit", 1, LOG_APPEND_TIME)
    progress("latency: one more run at 10 % of max, split on the wire")
    f = latency.run_level(b.bootstrap, b.pid, "lsplit", size, rate, seconds, CLIENT_CPU,
                          tap_cpu=CLIENT_CPU)
    delete_topic(b, "lsplit")
    if "split_error" in f or not f.get("split.matched"):
        progress(f"latency split skipped: {f.get('split_error', 'no record found on the wire')}")
        return
    label = "latency at 10% of max, split on the wire (one more run)"
    for part, what in (("client", "produce() → request sent"),
                       ("broker", "request in → fetch response out"),
                       ("consumer", "fetch response out → consumer has it")):
        for q in ("p50", "p99"):
            res.add(f"split.10.{part}.{q}", "latency", label, f"{q} ms {what}",
                    f[f"split.{part}.{q}"], higher_is_better=False)
    res.add("split.10.ratio", "latency", label, "p99 / p50 end to end (this run)",
            f["split.ratio"], higher_is_better=False)
    res.add("split.10.steady", "latency", label, "p99 / p50, broker part at its median",
            f["split.ratio_steady_broker"], higher_is_better=False,
            note="the least a broker of constant residence leaves")
    res.add("split.10.matched", "latency", label, "records found on the wire",
            f["split.matched"], note=f"of {f['received']:,.0f} received")
    res.add("split.10.neighbours_ms", "latency", label,
            "ms of CPU other threads took on the broker's core", f["split.neighbours_ms"],
            higher_is_better=False, note=f"largest: {f['split.neighbours'] or 'none'}")


# ---- scale -----------------------------------------------------------------------------------


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


def run_scale(s: Settings, res: Results, root: Path, rep: int) -> None:
    parts = 1000
    with pinned_broker(root, f"scale-{rep}", {"group.initial.rebalance.delay.ms": "0"}) as b:
        progress(f"scale: creating a topic of {parts} partitions")
        t = time.perf_counter()
        create_topic(b, "wide", parts)
        res.add("scale.create_ms", "scale", f"CreateTopics, {parts} partitions", "ms",
                (time.perf_counter() - t) * 1000, higher_is_better=False)
        c = Raw(b.bootstrap)
        ms, nbytes = timed_roundtrips(c, 3, 12, metadata_v12_all(), 30, flexible=True)
        res.add("scale.metadata_ms", "scale", f"Metadata v12, all topics ({parts} partitions)",
                "ms per request", ms, higher_is_better=False,
                note=f"{nbytes / 1024:.0f} KiB response")
        empty = fetch_v11("wide", dict.fromkeys(range(parts), 0), 50 * MiB, MiB, 0, 0)
        ms, _ = timed_roundtrips(c, 1, 11, empty, 30)
        res.add("scale.fetch_empty_ms", "scale", f"Fetch v11 of {parts} empty partitions",
                "ms per request", ms, higher_is_better=False)
        # one producer over 1, 8 and 1,000 partitions on this broker (issue 17's ratios)
        create_topic(b, "narrow", 1)
        create_topic(b, "eight", 8)
        for key, topic, n_parts in (("scale.produce_1", "narrow", 1),
                                    ("scale.produce_8", "eight", 8),
                                    ("scale.produce_wide", "wide", parts)):
            progress(f"scale: produce 100 B records over {n_parts} partition(s)")
            client0 = own_cpu_s()
            window = latency.Window({"client": os.getpid()})
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, topic, 100, s.produce_s,
                                               partitions=n_parts)
            client = own_cpu_s() - client0
            cores = window.close()
            m["elapsed"] = elapsed
            label = f"produce 100 B, acks=1, none, over {n_parts} partition(s)"
            record_run(res, key, "scale", label, m, n, 100)
            # which side bounds the rate: the producer's process (Python loop and librdkafka's
            # threads, all on the client core) against the broker's core
            res.add(f"{key}.client_us", "scale", label, "client CPU µs per record",
                    client / n * 1e6, higher_is_better=False,
                    note="producer process: Python loop and librdkafka threads")
            res.add(f"{key}.client_busy", "scale", label, "client process CPU s/s",
                    client / elapsed, higher_is_better=False)
            res.add(f"{key}.broker_busy", "scale", label, "broker CPU s/s",
                    m["cpu_s"] / elapsed, higher_is_better=False)
            res.add(f"{key}.client_core", "scale", label, "client core busy %",
                    cores.get(f"core{CLIENT_CPU}_busy", 0.0), higher_is_better=False,
                    note="all processes on the core")
            res.add(f"{key}.client_wait", "scale", label, "producer run-queue wait %",
                    cores["client_wait"], higher_is_better=False,
                    note="runnable but not running: other processes had its core")
        ms, nbytes = timed_roundtrips(c, 1, 11, empty, 10)
        res.add("scale.fetch_full_ms", "scale",
                f"Fetch v11 of {parts} partitions with data (1 MiB max each)", "ms per request",
                ms, higher_is_better=False, note=f"{nbytes / MiB:.1f} MiB response")
        c.close()

        progress("scale: 1,000 idle connections plus one busy producer")
        idle = []
        with measured(b.usage()) as m_conn:
            for _ in range(1000):
                r = Raw(b.bootstrap)
                r.roundtrip(18, 0, b"")  # ApiVersions v0: a real, served connection
                idle.append(r)
        res.add("scale.idle_rss", "scale", "1,000 idle connections open", "broker peak RSS MB",
                m_conn["peak_rss_mb"], higher_is_better=False,
                note=f"{m_conn['elapsed'] * 1000:.0f} ms to open and serve them")
        try:
            create_topic(b, "busy", 1)
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, "busy", 1024, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, "scale.idle_conns", "scale",
                       "produce 1024 B, acks=1, none, 1 partition, 1,000 idle connections open",
                       m, n, 1024, "ceil.write")
        finally:
            for r in idle:
                r.close()

        progress("scale: 10 consumer groups committing at once")
        create_topic(b, "groups", 10)
        run_commits(b, res, s.commit_s)


def run_commits(b: BrokerProcess, res: Results, seconds: float) -> None:
    groups = 10
    consumers = []
    for g in range(groups):
        cons = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"bench-group-{g}",
                         "enable.auto.commit": False, "session.timeout.ms": 30000,
                         "log_level": 0})
        cons.subscribe(["groups"])
        consumers.append(cons)
    deadline = time.monotonic() + 60
    assigned = [False] * groups
    while not all(assigned) and time.monotonic() < deadline:
        for i, cons in enumerate(consumers):
            cons.poll(0.05)
            assigned[i] = assigned[i] or bool(cons.assignment())
    if not all(assigned):
        raise RuntimeError("consumer groups did not get their assignments within 60 s")
    latencies: list[list[float]] = [[] for _ in range(groups)]
    barrier = threading.Barrier(groups)

    def commit_loop(i: int) -> None:
        cons = consumers[i]
        barrier.wait()
        end = time.monotonic() + seconds
        off = 0
        while time.monotonic() < end:
            off += 1
            tps = [TopicPartition("groups", p, off) for p in range(10)]
            t = time.perf_counter()
            with contextlib.suppress(KafkaException):
                cons.commit(offsets=tps, asynchronous=False)
                latencies[i].append((time.perf_counter() - t) * 1000)

    client0 = own_cpu_s()
    with measured(b.usage()) as m:
        threads = [threading.Thread(target=commit_loop, args=(i,)) for i in range(groups)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    client = own_cpu_s() - client0
    for cons in consumers:
        cons.close()
    flat = sorted(x for lst in latencies for x in lst)
    label = "10 consumer groups committing at once (10 partitions each, sync commits)"
    res.add("scale.commits_s", "scale", label, "commits/s", len(flat) / m["elapsed"])
    res.add("scale.commit_p50", "scale", label, "p50 ms per commit", latency.percentile(flat, 50),
            higher_is_better=False)
    res.add("scale.commit_p99", "scale", label, "p99 ms per commit", latency.percentile(flat, 99),
            higher_is_better=False)
    # both sides' core use: a closed loop of 10 committers keeps one of them saturated
    res.add("scale.commit_client_busy", "scale", label,
            "client process CPU s/s (10 consumers' threads and the loops)",
            client / m["elapsed"], higher_is_better=False)
    res.add("scale.commit_broker_busy", "scale", label, "broker CPU s/s",
            m["cpu_s"] / m["elapsed"], higher_is_better=False)
    res.add("scale.commit_cpu", "scale", label, "broker CPU ms per commit",
            m["cpu_s"] * 1000 / max(len(flat), 1), higher_is_better=False)
    res.add("scale.commit_rss", "scale", label, "broker peak RSS MB", m["peak_rss_mb"],
            higher_is_better=False)


# ---- cluster -----------------------------------------------------------------------------------


def run_cluster(s: Settings, res: Results, root: Path) -> None:
    """acks=all on a replication factor 3 topic against acks=1, on one ZooKeeper and three
    brokers (benchmarks/cluster.py's throughput runs: 1 KiB records, one partition)."""
    import cluster

    seconds = 2.0 if s.quick else 6.0
    # The earlier sections leave gigabytes in the page cache. Free them first, so that the three
    # brokers write into recycled pages as the write ceiling and the single-broker runs do (on
    # this VM first-touch page-cache writes cost several times more kernel time; RF=3 writes every
    # byte three times on the brokers' shared core).
    progress("cluster: freeing the earlier sections' data")
    for child in root.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
    os.sync()
    zk, c = cluster.start_cluster(root / "cluster", session_ms=6000, pin=True)
    samples: dict[str, list] = {}
    try:
        cluster.run_throughput(c, seconds, s.repeat, samples)
        for _ in range(s.repeat):
            lat = cluster.follower_latency(c)
            for q in ("p50", "p99"):
                res.add(f"cluster.follower.{q}", "cluster", "follower fetch latency: acks=all "
                        "minus acks=1 round trip of one 1 KiB record (RF=3, 200 requests/s)",
                        f"{q} ms", lat[q], higher_is_better=False,
                        note=f"acks=1 {lat['acks1.' + q]:.2f} ms, "
                             f"acks=all {lat['acksall.' + q]:.2f} ms")
    finally:
        cluster.stop_cluster(zk, c)
    for key, _rf, _acks, label in cluster.THROUGHPUT_CASES:
        for sample in samples.get(key, []):
            res.add(f"cluster.{key}.records_s", "cluster", f"1024 B, {label}", "records/s",
                    sample["records_s"])
            res.add(f"cluster.{key}.mb_s", "cluster", f"1024 B, {label}", "MB/s", sample["mb_s"])
            res.add(f"cluster.{key}.replicated_mb_s", "cluster", f"1024 B, {label}",
                    "MB/s until every replica had every record", sample["replicated_mb_s"])
            res.add(f"cluster.{key}.cpu_ms_mb", "cluster", f"1024 B, {label}",
                    "three brokers' CPU ms/MB (until replicated)", sample["brokers_cpu_ms_mb"],
                    higher_is_better=False)
            res.add(f"cluster.{key}.core_busy", "cluster", f"1024 B, {label}",
                    "broker core busy % (all processes, produce window)",
                    sample["broker_core_busy"], higher_is_better=False)


# ---- profiling --------------------------------------------------------------------------------


def profile_broker(b: BrokerProcess, name: str, load, res: Results, seconds: float = 4.0) -> None:
    """py-spy the broker while `load()` runs; write collapsed stacks and top functions."""
    if py_spy_binary() is None:
        progress("py-spy not installed (.venv/bin/pip install py-spy): profile skipped")
        return
    out = RESULTS / "profiles"
    out.mkdir(parents=True, exist_ok=True)
    raw = out / f"{name}.collapsed.txt"
    progress(f"profiling the broker under {name} load with py-spy")
    load()  # warm: lazily imported schemas and first-request costs stay out of the profile
    proc = b.profile(raw, seconds)
    assert proc is not None
    time.sleep(0.5)
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        load()
    _, err = proc.communicate(timeout=60)
    if not raw.exists():
        progress(f"py-spy failed: {err.decode(errors='replace')[-400:]}")
        return
    top = summarize_profile(raw)
    (out / f"{name}.top.txt").write_text(top)
    res.extra.setdefault("profiles", {})[name] = top  # type: ignore[index]


def summarize_profile(path: Path, n: int = 25) -> str:
    """Top functions by self and by total (inclusive) samples from py-spy's collapsed stacks."""
    self_c: Counter[str] = Counter()
    total_c: Counter[str] = Counter()
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        k = int(count)
        samples += k
        frames = [f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].split("/")[-1] + ")"
                  if " (" in f else f for f in stack.split(";")]
        frames = [f for f in frames if not f.startswith("process ") and not f.startswith("thread ")]
        if frames:
            self_c[frames[-1]] += k
        for f in set(frames):
            total_c[f] += k
    lines = [f"{samples} samples", "", "self %   function (file)"]
    lines += [f"{c / samples * 100:6.1f}  {f}" for f, c in self_c.most_common(n)]
    lines += ["", "total %  function (file)"]
    lines += [f"{c / samples * 100:6.1f}  {f}" for f, c in total_c.most_common(n)]
    return "\n".join(lines) + "\n"


def run_profiles(s: Settings, res: Results, root: Path) -> None:
    with pinned_broker(root, "profile", PRODUCE_BROKER) as b:
        for size in (100, 1024):
            topic = f"prof{size}"
            create_topic(b, topic, 1)
            profile_broker(b, f"produce-{size}B",
                           lambda t=topic, z=size: confluent_produce(b.bootstrap, t, z, 1.0),
                           res)
            topic = f"profraw{size}"
            create_topic(b, topic, 1)
            profile_broker(b, f"produce-raw-{size}B",
                           lambda t=topic, z=size: raw_produce(b.bootstrap, t, z, 1.0), res)
        create_topic(b, "wide", 1000)
        c = Raw(b.bootstrap)
        try:
            profile_broker(b, "metadata-1000-partitions",
                           lambda: timed_roundtrips(c, 3, 12, metadata_v12_all(), 20, True), res)
        finally:
            c.close()


# ---- report -----------------------------------------------------------------------------------


def targets(res: Results) -> list[tuple[str, str, str, bool | None]]:
    """(target, measured, required, met) for each ratio target of issue 8."""
    out: list[tuple[str, str, str, bool | None]] = []

    def ratio(num: str, den: str, need: float, what: str) -> None:
        a, b_ = res.median(num), res.median(den)
        if a is None or b_ is None:
            out.append((what, "not measured", f">= {need:.0%}", None))
            return
        r = a / b_
        out.append((what, f"{fmt(a)} / {fmt(b_)} MB/s = {r:.0%}", f">= {need:.0%}", r >= need))

    ratio("produce.raw.1024.mb_s", "ceil.write", 0.5,
          "produce 1 KiB (raw pipelined Produce loop, acks=1, 1 partition) vs file-write ceiling")
    ratio("produce.1024.1.none.1.mb_s", "ceil.write", 0.5,
          "produce 1 KiB (confluent-kafka, acks=1, none, 1 partition; client-bound) vs "
          "file-write ceiling")
    ratio("fetch.raw.mb_s", "ceil.sendfile", 0.7, "fetch vs os.sendfile ceiling")
    v = res.median("produce.100.1.none.1.rec_s")
    out.append(("produce 100 B records/s, one confluent-kafka producer (acks=1, none, 1 partition)",
                "not measured" if v is None else f"{fmt(v)} records/s", ">= 400,000",
                None if v is None else v >= 400_000))
    v = res.median("latency.10.p99")
    out.append(("p99 end-to-end latency at 10 % load",
                "not measured" if v is None else f"{fmt(v)} ms", "<= 5 ms",
                None if v is None else v <= 5))
    rss = [max(r.values) for r in res.rows.values() if r.unit == "broker peak RSS MB" and r.values]
    out.append(("broker peak RSS, every run", "not measured" if not rss else f"{fmt(max(rss))} MB",
                "<= 200 MB", None if not rss else max(rss) <= 200))
    rf3_all, rf3_one = res.median("cluster.rf3.all.mb_s"), res.median("cluster.rf3.1.mb_s")
    if rf3_all is None or not rf3_one:
        out.append(("acks=all RF=3 vs acks=1", "not measured", ">= 40%", None))
    else:
        ratio = 100 * rf3_all / rf3_one
        out.append(("acks=all RF=3 vs acks=1",
                    f"{fmt(rf3_all)} / {fmt(rf3_one)} MB/s = {ratio:.0f}%", ">= 40%",
                    ratio >= 40))
    return out


def render(res: Results, s: Settings) -> str:
    lines = [f"Mode: {'quick' if s.quick else 'full'}, {s.repeat} repeat(s); median "
             f"(min–max). Broker on core {BROKER_CPU}, clients on core {CLIENT_CPU}. Load average "
             f"at start/end: {_load(res, 'loadavg_start')} / {_load(res, 'loadavg_end')} "
             "(above 0 means other processes shared the cores).", ""]
    lines += ["| measurement | unit | value | compared to |", "| --- | --- | --- | --- |"]
    section = None
    for r in res.rows.values():
        if r.section != section:
            section = r.section
            lines.append(f"| **{section}** | | | |")
        cmp_ = ""
        if r.ceiling and r.values and res.median(r.ceiling):
            c = res.rows[r.ceiling]
            ratio = statistics.median(r.values) / statistics.median(c.values)
            cmp_ = f"{ratio:.0%} of {c.name.split(',')[0]} ({fmt(statistics.median(c.values))})"
        if r.note:
            cmp_ = f"{cmp_}; {r.note}" if cmp_ else r.note
        lines.append(f"| {r.name} | {r.unit} | {fmt_values(r.values)} | {cmp_} |")
    lines += ["", "| target (issue 8) | measured | required | |", "| --- | --- | --- | --- |"]
    for what, got, need, met in targets(res):
        mark = "n/a" if met is None else ("met" if met else "**missed**")
        lines.append(f"| {what} | {got} | {need} | {mark} |")
    lines += ["", *issue17.render(res)]
    for err in res.extra.get("errors", []):  # type: ignore[union-attr]
        lines += ["", f"Section failed: {err}"]
    return "\n".join(lines) + "\n"


def _load(res: Results, key: str) -> str:
    la = res.extra.get(key)
    return f"{la[0]:.1f}" if la else "?"  # type: ignore[index]


def render_summary(res: Results, s: Settings) -> str:
    """The compact tables for the README: one line per configuration."""
    def med(key: str) -> str:
        r = res.rows.get(key)
        return fmt_values(r.values) if r and r.values else "–"

    def pct(key: str, ceiling: str) -> str:
        a, b_ = res.median(key), res.median(ceiling)
        return f"{a / b_:.0%}" if a is not None and b_ else "–"

    mode = "quick" if s.quick else "full"
    out = [f"`benchmarks/run.py --{mode}`" if s.quick else "`benchmarks/run.py`",
           f"({s.repeat} repeats; median, min–max in parentheses; broker on core {BROKER_CPU}, "
           f"clients on core {CLIENT_CPU}; load average at start/end "
           f"{_load(res, 'loadavg_start')} / {_load(res, 'loadavg_end')}).", "",
           "| ceiling (same run, best of 3) | MB/s |", "| --- | --- |"]
    for key in ("ceil.loopback", "ceil.sendfile", "ceil.write", "ceil.write_buffered"):
        if key in res.rows:
            out.append(f"| {res.rows[key].name} | {med(key)} |")
    for size in (100, 1024):
        key = f"ceil.client.{size}"
        if key in res.rows:
            out.append(f"| {res.rows[key].name} | {med(key)} records/s |")
    out += ["", "| produce (confluent-kafka unless noted) | records/s | MB/s | % of disk write | "
            "broker CPU ms/MB (user, i.e. Python) | peak RSS MB |",
            "| --- | --- | --- | --- | --- | --- |"]
    for size, acks, codec, parts in produce_matrix(s):
        k = f"produce.{size}.{acks}.{codec}.{parts}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| {size} B, acks={acks}, {codec}, {parts} p | {med(k + '.rec_s')} | "
                       f"{med(k + '.mb_s')} | {pct(k + '.mb_s', 'ceil.write')} | "
                       f"{med(k + '.cpu_mb')} ({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    for size in (100, 1024):
        k = f"produce.raw.{size}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| raw pipelined Produce loop {size} B, acks=1, none, 1 p | "
                       f"{med(k + '.rec_s')} | {med(k + '.mb_s')} | "
                       f"{pct(k + '.mb_s', 'ceil.write')} | {med(k + '.cpu_mb')} "
                       f"({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    for size in (100, 1024):
        k = f"kafka_python.{size}"
        if f"{k}.rec_s" in res.rows:
            out.append(f"| kafka-python {size} B, acks=1, none, 1 p | {med(k + '.rec_s')} | "
                       f"{med(k + '.mb_s')} | {pct(k + '.mb_s', 'ceil.write')} | "
                       f"{med(k + '.cpu_mb')} ({med(k + '.user_mb')}) | {med(k + '.rss')} |")
    if "fetch.raw.mb_s" in res.rows:
        size = res.extra.get("fetch_log_bytes", 0) / MiB  # type: ignore[operator]
        out += ["", f"| fetch {size:,.0f} MiB from offset 0, page-cached | MB/s | "
                "% of sendfile | records/s | broker CPU ms/MB | peak RSS MB |",
                "| --- | --- | --- | --- | --- | --- |",
                f"| raw Fetch v11 loop (counts bytes) | {med('fetch.raw.mb_s')} | "
                f"{pct('fetch.raw.mb_s', 'ceil.sendfile')} | {med('fetch.raw.rec_s')} | "
                f"{med('fetch.raw.cpu_mb')} | {med('fetch.raw.rss')} |",
                f"| kcat (librdkafka; client-bound) | {med('fetch.kcat.mb_s')} | "
                f"{pct('fetch.kcat.mb_s', 'ceil.sendfile')} | {med('fetch.kcat.rec_s')} | – | "
                f"{med('fetch.kcat.rss')} |"]
    if "latency.10.p50" in res.rows:
        out += ["", f"Latency setup maximum, end to end: {med('latency.max')} records/s.", "",
                "| end-to-end latency, 1 KiB, acks=1 | offered records/s | achieved | p50 ms | "
                "p99 ms | p99.9 ms | p99 send → append | p99 append → consumed | client core busy "
                "| broker core busy | broker run-queue wait |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for lv in (10, 50, 90):
            k = f"latency.{lv}"
            out.append(f"| {lv} % of max | {med(k + '.rate')} | {med(k + '.achieved')} | "
                       f"{med(k + '.p50')} | {med(k + '.p99')} | {med(k + '.p99.9')} | "
                       f"{med(k + '.to_append.p99')} | {med(k + '.from_append.p99')} | "
                       f"{med(k + '.client_busy')} % | {med(k + '.broker_busy')} % | "
                       f"{med(k + '.broker_wait')} % |")
    scale = [r for r in res.rows.values() if r.section == "scale"]
    if scale:
        out += ["", "| scale | value | unit |", "| --- | --- | --- |"]
        for r in scale:
            note = f" ({r.note})" if r.note else ""
            out.append(f"| {r.name}{note} | {fmt_values(r.values)} | {r.unit} |")
    out += ["", "| target (issue 8) | measured | required | |", "| --- | --- | --- | --- |"]
    for what, got, need, met in targets(res):
        mark = "n/a" if met is None else ("met" if met else "**missed**")
        out.append(f"| {what} | {got} | {need} | {mark} |")
    out += ["", *issue17.render(res)]
    for err in res.extra.get("errors", []):  # type: ignore[union-attr]
        out += ["", f"Section failed: {err}"]
    return "\n".join(out) + "\n"


def load_results(path: Path) -> tuple[Results, Settings]:
    """Results and settings back from a JSON file this script wrote (for --report)."""
    doc = json.loads(path.read_text())
    res = Results()
    res.rows = {k: Row(**v) for k, v in doc["rows"].items()}
    res.extra = doc.get("extra", {})
    st = dict(doc["settings"])
    st["data_dir"] = None
    st["sections"] = tuple(st["sections"])
    return res, Settings(**st)


def plot_latency(res: Results, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        progress("matplotlib not installed: no latency plot")
        return False
    loads = [lv for lv in (10, 50, 90) if res.median(f"latency.{lv}.p50") is not None]
    if not loads:
        return False
    rates = [res.median(f"latency.{lv}.rate") or 0 for lv in loads]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name in ("p50", "p99", "p99.9"):
        ys = [res.median(f"latency.{lv}.{name}") for lv in loads]
        lo = [min(res.rows[f"latency.{lv}.{name}"].values) for lv in loads]
        hi = [max(res.rows[f"latency.{lv}.{name}"].values) for lv in loads]
        ax.errorbar(rates, ys, yerr=[[y - a for y, a in zip(ys, lo, strict=True)],
                                     [b_ - y for y, b_ in zip(ys, hi, strict=True)]],
                    marker="o", capsize=3, label=name)
    ax.axhline(5, color="grey", linestyle="--", linewidth=0.8, label="5 ms target (p99 @ 10 %)")
    ax.set_yscale("log")
    ax.set_xlabel("offered load, 1 KiB records/s (10 / 50 / 90 % of the end-to-end max)")
    ax.set_ylabel("end-to-end latency, ms")
    ax.set_title("kafkapy end-to-end latency vs offered load")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---- main -------------------------------------------------------------------------------------


def guarded(res: Results, name: str, fn) -> None:
    """Run one section; a failure is reported (and kept in the JSON) and the suite goes on."""
    try:
        fn()
    except Exception as e:
        msg = f"{name}: {type(e).__name__}: {e}"
        progress(f"FAILED {msg}")
        res.extra.setdefault("errors", []).append(msg)  # type: ignore[union-attr]


def main() -> int:
    global RESULTS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ~3 minute README run")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (full: 3, quick: 2)")
    ap.add_argument("--only", help=f"comma-separated sections of: {','.join(SECTIONS)}")
    ap.add_argument("--profile", action="store_true", help="py-spy the broker under load")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="parent of the brokers' log dirs (default: a temporary directory)")
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="directory for the JSON, tables and plot (default: benchmarks/results)")
    ap.add_argument("--report", type=Path, default=None,
                    help="only re-render the tables and plot from a results JSON file")
    args = ap.parse_args()
    RESULTS = args.results
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.report:
        res, s = load_results(args.report)
        write_reports(res, s)
        return 0
    s = Settings.from_args(args)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    pin(CLIENT_CPU)
    res = Results()
    res.extra["loadavg_start"] = os.getloadavg()
    started = time.monotonic()
    if s.data_dir:
        s.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=s.data_dir, prefix="kafkapy-bench-") as tmp:
        root = Path(tmp)
        for rep in range(s.repeat):
            runs = [("ceilings", run_ceilings), ("requests", run_requests),
                    ("produce", run_produce),
                    ("kafka-python", run_kafka_python), ("fetch", run_fetch),
                    ("latency", run_latency), ("scale", run_scale),
                    ("sessions", run_sessions), ("cleaner", run_cleaner)]
            for name, fn in runs:
                if name in s.sections:
                    progress(f"[{rep + 1}/{s.repeat}] {name}")
                    guarded(res, name, functools.partial(fn, s, res, root, rep))
        if s.profile:
            guarded(res, "profile", functools.partial(run_profiles, s, res, root))
        if "cluster" in s.sections:
            progress("cluster")
            guarded(res, "cluster", functools.partial(run_cluster, s, res, root))
    mode = "quick" if s.quick else "full"
    res.extra["duration_s"] = time.monotonic() - started
    res.extra["loadavg_end"] = os.getloadavg()
    payload = {
        "mode": mode, "repeat": s.repeat, "cpu_count": os.cpu_count(),
        "broker_cpu": BROKER_CPU, "client_cpu": CLIENT_CPU,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(s).items()},
        "rows": {k: vars(r) for k, r in res.rows.items()},
        "targets": [dict(zip(("target", "measured", "required", "met"), t, strict=True))
                    for t in targets(res)],
        "extra": res.extra,
    }
    (RESULTS / f"{mode}.json").write_text(json.dumps(payload, indent=2, default=str))
    write_reports(res, s)
    progress(f"done in {res.extra['duration_s']:.0f} s; results in {RESULTS}/{mode}.json")
    return 0


def write_reports(res: Results, s: Settings) -> None:
    """Print the full table; write it, the README summary and the latency plot to results/."""
    mode = "quick" if s.quick else "full"
    table = render(res, s)
    print(table)
    (RESULTS / f"{mode}.md").write_text(table)
    (RESULTS / f"{mode}-summary.md").write_text(render_summary(res, s))
    progress(f"tables: {RESULTS / f'{mode}.md'}, {RESULTS / f'{mode}-summary.md'}")
    if plot_latency(res, RESULTS / f"latency-{mode}.png"):
        progress(f"latency plot: {RESULTS / f'latency-{mode}.png'}")


if __name__ == "__main__":
    sys.exit(main())
