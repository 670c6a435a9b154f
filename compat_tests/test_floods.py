"""Floods (issue 12, point 6): thousands of connections at once, slow senders holding half
frames, clients pipelining large produce requests without reading responses, a process out of
file descriptors. Each test starts a real broker with Kafka's limits set and checks that
existing clients keep being served, over-limit connections are closed as Kafka closes them, and
the broker's memory stays within the bound stated here and in the README.

Connections come from several loopback addresses (127.0.0.2, 127.0.0.3, ...: all of 127/8 is
loopback on Linux) so that per-address limits can be told apart from the healthy clients on
127.0.0.1.
"""

from __future__ import annotations

import errno
import os
import resource
import select
import shutil
import socket
import struct
import threading
import time

import pytest
from kio.schema.api_versions.v0.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.testing import BrokerProcess

from .rawclient import RawClient, encode_request, produce_request

MiB = 1 << 20
API_VERSIONS = encode_request(ApiVersionsRequest(), correlation_id=7)


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def status_kb(pid: int, field: str) -> int:
    """VmRSS / VmHWM (peak RSS) of a process, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, clock ticks of 10 ms


def need_open_files(n: int) -> None:
    """Raise this process's RLIMIT_NOFILE to at least ``n`` (the hard limit too, as root)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= n:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, max(hard, n)))
    except (OSError, ValueError) as e:
        pytest.skip(f"this test opens {n} sockets; RLIMIT_NOFILE is {soft}/{hard}: {e}")


def open_flood(port: int, source: str, n: int) -> list[socket.socket]:
    """``n`` connections from ``source`` started at once (non-blocking connects)."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((source, 0))
        err = s.connect_ex(("127.0.0.1", port))
        assert err in (0, errno.EINPROGRESS), errno.errorcode.get(err, err)
        socks.append(s)
    return socks


_HUNG_UP = select.POLLRDHUP | select.POLLHUP | select.POLLERR


def closed_by_broker(s: socket.socket) -> bool:
    """The broker closed (or reset) it, even with responses still unread in its buffer."""
    poller = select.poll()
    poller.register(s, _HUNG_UP)
    return bool(poller.poll(0))


def count_closed(socks: list[socket.socket]) -> int:
    return sum(closed_by_broker(s) for s in socks)


def wait_until(cond, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def answered(socks: list[socket.socket], timeout: float) -> int:
    """Send ApiVersions v0 on every socket; how many got a response within ``timeout``."""
    for s in socks:
        s.setblocking(True)
        s.sendall(frame(API_VERSIONS))
        s.setblocking(False)
    done: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(done) < len(socks) and time.monotonic() < deadline:
        for i, s in enumerate(socks):
            if i in done:
                continue
            try:
                head = s.recv(8, socket.MSG_PEEK)
            except BlockingIOError:
                continue
            except OSError:
                continue
            if len(head) == 8 and struct.unpack(">i", head[4:])[0] == 7:
                done.add(i)
        time.sleep(0.05)
    return len(done)


class HealthyClient:
    """A client connected before the flood that keeps asking (Metadata, ApiVersions) and records
    how long each answer took; it must keep being served."""

    def __init__(self, bootstrap: str) -> None:
        self.client = RawClient(bootstrap, timeout=30)
        self.latencies: list[float] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                if i % 2:
                    self.client.request(
                        MetadataRequest(
                            topics=None,
                            allow_auto_topic_creation=False,
                            include_topic_authorized_operations=False,
                        )
                    )
                else:
                    self.client.request(ApiVersionsRequest())
            except BaseException as e:  # recorded, asserted on by the test
                self.errors.append(e)
                return
            self.latencies.append(time.monotonic() - t0)
            i += 1
            self._stop.wait(0.05)

    def __enter__(self) -> HealthyClient:
        self.client.request(ApiVersionsRequest())  # connected and served before the flood
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)
        self.client.close()

    def check(self, max_latency: float) -> None:
        assert not self.errors, f"healthy client failed: {self.errors[0]!r}"
        assert self.latencies, "healthy client made no request"
        assert max(self.latencies) < max_latency, (
            f"healthy client waited {max(self.latencies):.1f}s (bound {max_latency}s)"
        )


def close_all(socks: list[socket.socket]) -> None:
    for s in socks:
        s.close()


def test_thousands_of_connections_at_once(tmp_path):
    """3,000 connections at once from one address with max.connections.per.ip=1000: 1,000 are
    served, 2,000 closed at once. 800 from an address whose override is 400: 400 and 400. Then
    max.connections=1500 is reached: the next connections wait (not accepted, not answered)
    until others close, then are served. Clients connected before keep being served; the
    broker's RSS grows by less than 30 MB for its 1,500 connections (measured: 10 MB)."""
    need_open_files(8192)
    broker = BrokerProcess(
        tmp_path / "broker",
        {
            "max.connections": "1500",
            "max.connections.per.ip": "1000",
            "max.connections.per.ip.overrides": "127.0.0.3:400",
        },
    ).start()
    floods: list[list[socket.socket]] = []
    try:
        pid = broker.pid
        with HealthyClient(broker.bootstrap) as healthy, HealthyClient(broker.bootstrap) as other:
            time.sleep(0.3)
            rss_before = status_kb(pid, "VmRSS")
            a = open_flood(broker.port, "127.0.0.2", 3000)
            floods.append(a)
            wait_until(lambda: count_closed(a) == 2000, 60, "2,000 of 3,000 closed (per ip)")
            b = open_flood(broker.port, "127.0.0.3", 800)
            floods.append(b)
            wait_until(lambda: count_closed(b) == 400, 60, "400 of 800 closed (override)")
            time.sleep(0.5)
            assert count_closed(a) == 2000 and count_closed(b) == 400  # no more than that
            kept_a = [s for s in a if not closed_by_broker(s)]
            assert answered(kept_a[:200], 30) == 200  # the admitted ones are served
            # 2 healthy + 1,000 + 400 connections: 98 more fit under max.connections=1500
            c = open_flood(broker.port, "127.0.0.4", 300)
            floods.append(c)
            assert answered(c, 5) == 98
            assert count_closed(c) == 0  # waiting in the listen backlog, not refused
            close_all(kept_a[:300])  # 300 slots free: the waiting connections are accepted
            assert answered(c, 30) == 300
            rss_peak = status_kb(pid, "VmHWM")
            healthy.check(max_latency=10)
            other.check(max_latency=10)
        grown_mb = (rss_peak - rss_before) / 1024
        assert grown_mb < 30, f"RSS grew by {grown_mb:.1f} MB for 1,500 connections"
        assert "max.connections.per.ip" in broker.log_text()
    finally:
        for socks in floods:
            close_all(socks)
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]


def test_slow_senders_are_closed_after_connections_max_idle_ms(tmp_path):
    """connections.max.idle.ms=3000: connections that sent half a frame (or half a size prefix,
    or nothing) and stall are closed 3 s after their last byte, which frees their slots under
    max.connections; a client that keeps talking is never closed."""
    idle_ms = 3000
    broker = BrokerProcess(
        tmp_path / "broker", {"connections.max.idle.ms": str(idle_ms), "max.connections": "17"}
    ).start()
    slow: list[socket.socket] = []
    try:
        with HealthyClient(broker.bootstrap) as healthy:
            started = time.monotonic()
            half_frames = open_flood(broker.port, "127.0.0.2", 10)
            silent = open_flood(broker.port, "127.0.0.3", 3)
            half_prefix = open_flood(broker.port, "127.0.0.4", 3)
            slow = half_frames + silent + half_prefix
            time.sleep(0.2)
            for s in half_frames:  # announces 1,000 bytes, sends 100 of them
                s.send(struct.pack(">i", 1000) + API_VERSIONS + b"x" * (100 - len(API_VERSIONS)))
            for s in half_prefix:
                s.send(b"\x00\x00")
            # 1 healthy + 16 slow connections: max.connections=17 is reached
            late = open_flood(broker.port, "127.0.0.5", 1)
            slow += late
            assert answered(late, 0.5) == 0, "accepted over max.connections"
            if time.monotonic() - started < idle_ms / 1000 * 0.8:  # (unless this test stalled)
                assert count_closed(half_frames + silent + half_prefix) == 0  # not idle yet
            wait_until(
                lambda: count_closed(half_frames + silent + half_prefix) == 16,
                idle_ms / 1000 + 10,
                "the stalled connections to be closed",
            )
            closed_after = time.monotonic() - started
            assert closed_after >= idle_ms / 1000
            # their slots are free again: the connection waiting in the backlog is served
            assert answered(late, 10) == 1
            time.sleep(idle_ms / 1000 + 0.5)  # the healthy client talked all along
            healthy.check(max_latency=10)
            assert not closed_by_broker(healthy.client.sock)
    finally:
        close_all(slow)
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]


def produce_frame(topic: str, batch: bytes, corr: int) -> bytes:
    return frame(encode_request(produce_request(topic, batch), correlation_id=corr))


QUEUED_MAX = 16 * MiB
REQUEST_MAX = 8 * MiB
PIPELINERS = 32
REQUEST_SIZE = 4 * MiB


def test_pipelined_large_produce_requests_are_bounded_by_queued_max_request_bytes(tmp_path):
    """32 clients each pipeline 4 MiB produce requests and never read a response, 128 MiB in
    flight at once. With queued.max.request.bytes=16 MiB the broker reads no more than that
    (plus one request, socket.request.max.bytes=8 MiB) before the requests are handled: its peak
    RSS grows by less than queued.max.request.bytes + socket.request.max.bytes + 8 MiB = 32 MiB
    (measured: 22 MiB; without the bound: 130 MiB, 4 MiB per connection). Every request is
    appended in the end, and a client connected before keeps being served meanwhile."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    broker = BrokerProcess(
        tmp_path / "broker",
        {
            "socket.request.max.bytes": str(REQUEST_MAX),
            "queued.max.request.bytes": str(QUEUED_MAX),
            "message.max.bytes": str(REQUEST_MAX),
        },
    ).start()
    senders: list[socket.socket] = []
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("bulk", 1, 1)])["bulk"].result(15)
        now = int(time.time() * 1000)
        batch = encode_batch([Record(0, now, None, b"v" * (REQUEST_SIZE - 200), [])])
        requests = [produce_frame("bulk", batch, corr) for corr in (1, 2)]
        with HealthyClient(broker.bootstrap) as healthy:
            time.sleep(0.3)
            hwm_before = status_kb(broker.pid, "VmHWM")
            for _ in range(PIPELINERS):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.bind(("127.0.0.2", 0))
                s.connect(("127.0.0.1", broker.port))
                senders.append(s)

            def pipeline(s: socket.socket) -> None:
                for r in requests:
                    s.sendall(r)  # responses are never read

            threads = [threading.Thread(target=pipeline, args=(s,)) for s in senders]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not any(t.is_alive() for t in threads), "the broker stopped reading for good"
            consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "check"})
            try:
                wait_until(
                    lambda: (
                        consumer.get_watermark_offsets(TopicPartition("bulk", 0), 10)[1]
                        == PIPELINERS * len(requests)
                    ),
                    60,
                    "every pipelined request appended",
                )
            finally:
                consumer.close()
            healthy.check(max_latency=15)
        grown = (status_kb(broker.pid, "VmHWM") - hwm_before) / 1024
        bound = (QUEUED_MAX + REQUEST_MAX) / MiB + 8
        assert grown < bound, f"peak RSS grew by {grown:.0f} MiB (bound {bound:.0f} MiB)"
    finally:
        close_all(senders)
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]


class LimitedBroker(BrokerProcess):
    """A broker started with RLIMIT_NOFILE soft = hard = ``nofile``."""

    nofile = 300

    def command(self) -> list[str]:
        return ["prlimit", f"--nofile={self.nofile}:{self.nofile}", *super().command()]


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_out_of_file_descriptors(tmp_path):
    """Started with 300 descriptors, the broker keeps a tenth of them from connections: a
    flood of 400 is partly closed at once, and a topic can still be created and written (its
    segment files need descriptors). Then its limit is cut below what it holds: accept fails
    with EMFILE, which the broker reports once and waits out without spinning, serving the
    connections it has; when connections close it accepts again."""
    if shutil.which("prlimit") is None:
        pytest.skip("prlimit (util-linux) is needed to start a broker with a low RLIMIT_NOFILE")
    broker = LimitedBroker(tmp_path / "broker", {"num.partitions": "4"}).start()
    floods: list[socket.socket] = []
    try:
        pid = broker.pid
        writer = RawClient(broker.bootstrap, timeout=30)
        with HealthyClient(broker.bootstrap) as healthy:
            flood = open_flood(broker.port, "127.0.0.2", 400)
            floods += flood
            wait_until(lambda: count_closed(flood) > 100, 30, "connections over the reserve closed")
            assert open_fds(pid) <= LimitedBroker.nofile - 32  # the reserve is left free
            assert "reason=file_descriptors" in broker.log_text()
            # storage still gets descriptors: auto-create a 4-partition topic and append to it
            # (created just after the first Metadata answer, as Kafka 4.4: asked until it is)
            def fd_topic_ready() -> bool:
                meta = writer.request(
                    MetadataRequest(
                        topics=(MetadataRequestTopic(topic_id=None, name="fd-topic"),),
                        allow_auto_topic_creation=True,
                        include_topic_authorized_operations=False,
                    )
                )
                return meta.topics[0].error_code == 0

            wait_until(fd_topic_ready, 30, "fd-topic to be auto-created")
            now = int(time.time() * 1000)
            batch = encode_batch([Record(0, now, None, b"still writable", [])])
            writer.send_frame(produce_frame("fd-topic", batch, 5)[4:])
            assert writer.recv_frame()[:4] == struct.pack(">i", 5)
            close_all(flood)
            floods.clear()
            wait_until(lambda: open_fds(pid) < 150, 30, "the flood's descriptors to be freed")

            # now cut the limit below what the broker holds: accept() fails with EMFILE
            held = open_fds(pid)
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (held + 5, LimitedBroker.nofile))
            flood = open_flood(broker.port, "127.0.0.3", LimitedBroker.nofile)  # > any room
            floods += flood
            wait_until(lambda: "EMFILE" in broker.log_text(), 30, "EMFILE to be reported")
            cpu0 = cpu_seconds(pid)
            time.sleep(2)
            spent = cpu_seconds(pid) - cpu0
            assert spent < 0.5, f"the broker used {spent:.2f}s of CPU in 2s while out of fds"
            assert broker.log_text().count("cannot accept connections") == 1
            healthy.check(max_latency=10)
            close_all(flood)  # descriptors free up: the broker accepts again
            floods.clear()
            late = open_flood(broker.port, "127.0.0.4", 1)
            floods += late
            assert answered(late, 30) == 1
            assert "accepting connections again" in broker.log_text()
            healthy.check(max_latency=10)
        writer.close()
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (LimitedBroker.nofile,) * 2)
    finally:
        close_all(floods)
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]


def test_connection_limits_change_at_run_time(tmp_path):
    """max.connections.per.ip and max.connections are dynamic broker configs, as in Kafka:
    set with IncrementalAlterConfigs they apply at once (new connections over the per-address
    limit closed; connections over a lowered max.connections closed, least recently active
    first), and deleting them lifts the limits again."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
    )

    broker = BrokerProcess(tmp_path / "broker").start()
    floods: list[socket.socket] = []
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        res = ConfigResource(ConfigResource.Type.BROKER, "0")

        def alter(op, **configs: str) -> None:
            entries = [
                ConfigEntry(k.replace("_", "."), v, incremental_operation=op)
                for k, v in configs.items()
            ]
            r = ConfigResource(res.restype, res.name, incremental_configs=entries)
            admin.incremental_alter_configs([r])[r].result(15)

        with HealthyClient(broker.bootstrap) as healthy:
            old = open_flood(broker.port, "127.0.0.2", 20)
            floods += old
            assert answered(old, 10) == 20
            alter(AlterConfigOpType.SET, max_connections_per_ip="5")
            new = open_flood(broker.port, "127.0.0.2", 5)
            floods += new
            wait_until(lambda: count_closed(new) == 5, 10, "new connections over 5 closed")
            assert count_closed(old) == 0  # existing connections stay
            alter(AlterConfigOpType.DELETE, max_connections_per_ip="")
            again = open_flood(broker.port, "127.0.0.2", 5)
            floods += again
            assert answered(again, 10) == 5
            # 25 flood connections, the healthy client, the admin client: lower to 10
            time.sleep(0.2)
            alter(AlterConfigOpType.SET, max_connections="10")
            wait_until(lambda: count_closed(old + again) >= 17, 10, "excess connections closed")
            assert not closed_by_broker(healthy.client.sock)  # the most recently active
            healthy.check(max_latency=10)
            alter(AlterConfigOpType.DELETE, max_connections="")
            late = open_flood(broker.port, "127.0.0.3", 20)
            floods += late
            assert answered(late, 10) == 20
    finally:
        close_all(floods)
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]
