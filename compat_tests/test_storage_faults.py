"""Storage faults (issue 12, point 7) against real brokers: a log directory that fills up.

The log directories live on a size-limited tmpfs mounted for the test (or, where mounting is
refused, behind the storage layer's fault-injection seam: compat_tests/small_disk.py). A single
broker whose only directory fills answers KAFKA_STORAGE_ERROR and stops; once the disk is freed
and the broker restarted, every acknowledged record is there. In a 3-broker cluster a broker's
full directory goes offline, leadership of its partitions moves, and when its last directory
fills too the broker stops; an acks=all idempotent producer loses nothing throughout.
"""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.testing import BrokerProcess
from kafkapy.testing.cluster import BROKERS, Cluster, wait_for

from .rawclient import RawClient, produce_request
from .small_disk import MiB, SmallDisk, env_spec

KAFKA_STORAGE_ERROR = 56
OFFLINE_LINE = "log directory offline"


@pytest.fixture
def disks(tmp_path):
    made: list[SmallDisk] = []

    def make(name: str, size: int) -> SmallDisk:
        disk = SmallDisk(tmp_path / name, size)
        made.append(disk)
        return disk

    yield make
    for disk in made:  # the tests stop their brokers first
        disk.close()


def start_with_env(broker: BrokerProcess, env: dict[str, str], monkeypatch) -> BrokerProcess:
    with monkeypatch.context() as m:
        for k, v in env.items():
            m.setenv(k, v)
        return broker.start()


def batch_of(values: list[bytes]) -> bytes:
    now = int(time.time() * 1000)
    return encode_batch([Record(i, now, None, v, []) for i, v in enumerate(values)])


def consume_all(bootstrap: str, topic: str, partitions: int, at_least: int = 0) -> list[bytes]:
    """Every record of the topic, once the high watermarks cover ``at_least`` records (a new
    leader's high watermark catches up with what was acknowledged as its followers fetch)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False}
    )
    tps = [TopicPartition(topic, p, 0) for p in range(partitions)]

    def records_below_high_watermarks() -> int:
        tp = TopicPartition
        return sum(consumer.get_watermark_offsets(tp(topic, p), 15)[1] for p in range(partitions))

    want = wait_for(
        lambda: (n := records_below_high_watermarks()) >= at_least and n, 30, "high watermarks"
    )
    consumer.assign(tps)
    seen: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(seen) < want and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None:
            assert msg.error() is None, msg.error()
            seen.append(msg.value())
    consumer.close()
    assert len(seen) == want, f"read {len(seen)} of {want} records"
    return seen


def test_single_broker_full_disk(tmp_path, disks, monkeypatch):
    """Its only log directory fills mid-produce: the request that does not fit gets
    KAFKA_STORAGE_ERROR, the broker says so in one log line and stops with exit status 1. After
    the disk is freed and the broker restarted, every acknowledged record is there, once."""
    disk = disks("disk", 16 * MiB)
    logs = disk.path / "logs"
    broker = BrokerProcess(tmp_path / "broker", {"log.dirs": str(logs)})
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("full", 1, 1)])["full"].result(15)
        broker.stop()  # restarted with the disk nearly full
        disk.leave_free(3 * MiB)
        start_with_env(broker, disk.broker_env(logs), monkeypatch)
        acked: list[bytes] = []
        error = None
        with RawClient(broker.bootstrap, timeout=30) as client:
            for i in range(100):  # 256 KiB per request: the disk fills within 12 requests
                values = [b"%06d-%04d:" % (i, j) + b"x" * 1014 for j in range(256)]
                resp = client.request(produce_request("full", batch_of(values)))
                part = resp.responses[0].partition_responses[0]
                if part.error_code:
                    error = part
                    break
                acked += values
        assert error is not None, f"{len(acked)} records fit on a full disk ({disk.mode})"
        assert error.error_code == KAFKA_STORAGE_ERROR
        assert str(logs) in (error.error_message or ""), error.error_message
        assert acked, "nothing fitted before the disk was full"
        assert broker.proc is not None and broker.proc.wait(30) == 1
        text = broker.log_text()
        assert text.count(OFFLINE_LINE) == 1, text[-3000:]
        line = next(ln for ln in text.splitlines() if OFFLINE_LINE in ln)
        assert "No space left on device" in line and "the broker stops" in line
        assert "Traceback" not in text
        broker.proc = None
        disk.free()
        broker.start()
        assert consume_all(broker.bootstrap, "full", 1, at_least=len(acked)) == acked
    finally:
        code = broker.stop()
    assert code in (0, None), broker.log_text()[-3000:]


class ProducerLoop:
    """An acks=all idempotent producer writing numbered records round-robin to every
    partition until stopped; records which deliveries were acknowledged, and any errors."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.topic, self.partitions = topic, partitions
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 120000,
                "reconnect.backoff.max.ms": 500,
            }
        )
        self._stop = threading.Event()
        self.paused = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg) -> None:
        if err is None:
            self.acked.append(msg.value())
        else:
            self.errors.append(str(err))

    def _run(self) -> None:
        i = 0
        pad = b"x" * 1000
        while not self._stop.is_set():
            if self.paused.is_set() or len(self.producer) >= 200:  # a short queue: paced
                self.producer.poll(0.01)
                continue
            p = i % self.partitions
            try:
                self.producer.produce(
                    self.topic,
                    value=b"%d-%08d:" % (p, i) + pad,
                    partition=p,
                    on_delivery=self._delivered,
                )
                i += 1
            except BufferError:
                self.producer.poll(0.05)
            self.producer.poll(0)
            if i % 100 == 0:
                time.sleep(0.01)

    def start(self) -> ProducerLoop:
        self._thread.start()
        return self

    def wait_acked(self, n: int, timeout: float, what: str) -> None:
        wait_for(lambda: len(self.acked) >= n, timeout, what)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self.producer.flush(120) == 0, "records still unacknowledged"
        assert not self.errors, self.errors[:5]


def test_cluster_broker_log_dirs_fill_up(tmp_path, disks, zookeeper, monkeypatch):
    """Broker 1 of three keeps its replicas on two small disks, A and B; it leads every
    partition of an RF=3 topic (min.insync.replicas=2) written by an acks=all idempotent
    producer. A fills first: its directory goes offline, broker 1 posts a log dir event and the
    controller moves the leadership of the partitions there away and takes broker 1 out of their
    ISRs, while broker 1 keeps leading the partitions on B. Then B fills: no directory is left,
    broker 1 unregisters and stops with exit status 1, leadership moves at once. The producer
    never gets an error, and every acknowledged record is in the topic exactly once."""
    a, b = disks("disk-a", 8 * MiB), disks("disk-b", 16 * MiB)
    logs_a, logs_b = a.path / "logs", b.path / "logs"
    a.leave_free(int(1.5 * MiB))
    b.leave_free(5 * MiB)
    cluster = Cluster(tmp_path, zookeeper.connect_string)
    one = cluster.brokers[1]
    one.overrides["log.dirs"] = f"{logs_a},{logs_b}"
    loop = None
    try:
        cluster.zk.start(timeout=20)
        for i, broker in cluster.brokers.items():
            env = env_spec(a.broker_env(logs_a), b.broker_env(logs_b)) if i == 1 else {}
            start_with_env(broker, env, monkeypatch)
        wait_for(lambda: cluster.registered() == set(BROKERS), what="3 brokers registered")
        parts = 6
        admin = cluster.admin()
        fs = admin.create_topics(
            [
                NewTopic(
                    "moving",
                    parts,
                    replica_assignment=[[1, (p % 2) * 2, 2 - (p % 2) * 2] for p in range(parts)],
                    config={"min.insync.replicas": "2"},
                )
            ]
        )
        fs["moving"].result(15)
        wait_for(lambda: cluster.full_isr("moving", parts), what="full ISR")

        def placed() -> tuple[set[int], set[int]] | None:
            on_a = {p for p in range(parts) if (logs_a / f"moving-{p}").is_dir()}
            on_b = {p for p in range(parts) if (logs_b / f"moving-{p}").is_dir()}
            return (on_a, on_b) if on_a | on_b == set(range(parts)) else None

        on_a, on_b = wait_for(placed, 30, "broker 1's logs of every partition")
        assert on_a and on_b
        assert all(cluster.state("moving", p)["leader"] == 1 for p in range(parts))

        loop = ProducerLoop(cluster.bootstrap, "moving", parts).start()
        wait_for(lambda: OFFLINE_LINE in one.log_text(), 120, f"disk A full ({a.mode})")
        loop.paused.set()  # B must not fill before the checks below

        def a_moved() -> bool:
            states = {p: cluster.state("moving", p) for p in range(parts)}
            return all(
                states[p]["leader"] not in (1, -1) and 1 not in states[p]["isr"] for p in on_a
            ) and all(states[p]["leader"] == 1 for p in on_b)

        wait_for(a_moved, 30, "leadership of disk A's partitions moved, disk B's kept")
        assert one.proc is not None and one.proc.poll() is None  # broker 1 still serves B
        assert cluster.zk.get_children("/kafkapy/log_dir_event_notification") == []  # taken
        acked = len(loop.acked)
        loop.paused.clear()
        loop.wait_acked(acked + 1000, 60, "acks after disk A failed")

        code = one.proc.wait(120)  # disk B fills: no directory left
        assert code == 1, one.log_text()[-3000:]
        one.proc = None
        assert one.log_text().count(OFFLINE_LINE) == 2
        assert "Traceback" not in one.log_text()
        wait_for(
            lambda: all(cluster.state("moving", p)["leader"] in (0, 2) for p in range(parts)),
            30,
            "every leadership away from broker 1",
        )
        assert cluster.registered() == {0, 2}
        acked = len(loop.acked)
        loop.wait_acked(acked + 1000, 60, "acks after broker 1 stopped")
        loop.stop()
        seen = consume_all(cluster.bootstrap, "moving", parts, at_least=len(loop.acked))
        assert len(seen) == len(set(seen)), "duplicates"
        missing = set(loop.acked) - set(seen)
        extra = set(seen) - set(loop.acked)
        assert not missing and not extra, (
            f"{len(missing)} acknowledged records missing, e.g. {sorted(missing)[:3]!r:.200}; "
            f"{len(extra)} never acknowledged, e.g. {sorted(extra)[:3]!r:.200}"
        )
        loop = None
    finally:
        if loop is not None:
            loop._stop.set()
        cluster.stop()


def test_flush_messages_moves_the_checkpointed_recovery_point(tmp_path):
    """log.flush.interval.messages=1: every append is fsynced (in a worker thread) before it is
    acknowledged, and the recovery point it reached is checkpointed every
    log.flush.offset.checkpoint.interval.ms while the broker runs, so a restart after a crash
    only scans what was not flushed."""
    from kafkapy.storage.checkpoints import RECOVERY_POINT_CHECKPOINT, read_offset_checkpoint

    broker = BrokerProcess(
        tmp_path / "broker",
        {"log.flush.interval.messages": "1", "log.flush.offset.checkpoint.interval.ms": "200"},
    ).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("flushed", 1, 1)])["flushed"].result(15)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
        for i in range(300):
            producer.produce("flushed", value=b"%d" % i)
        assert producer.flush(30) == 0
        path = broker.data_dir / "logs" / RECOVERY_POINT_CHECKPOINT
        wait_for(
            lambda: read_offset_checkpoint(path).get(("flushed", 0)) == 300,
            15,
            "the recovery point of flushed-0 checkpointed at 300",
        )
        assert consume_all(broker.bootstrap, "flushed", 1, at_least=300) == [
            b"%d" % i for i in range(300)
        ]
    finally:
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]
