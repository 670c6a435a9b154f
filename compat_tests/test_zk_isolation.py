"""A partition leader cut off from ZooKeeper (issue 26, item 6): three brokers, each reaching
ZooKeeper through its own TCP proxy (kafkapy/testing/tcp_proxy.py); the proxy of the leader of an
RF 3, min.insync.replicas 2 topic stops forwarding (a black hole, as a network partition that
drops packets) while the leader still reaches its peers and the clients. Its ZooKeeper session
expires, the controller elects a new leader, the followers follow it, and the isolated broker,
without ZooKeeper for zookeeper.session.timeout.ms and without followers, resigns: a
confluent-kafka producer (acks=all, idempotent) gets NOT_LEADER_OR_FOLLOWER, its metadata request
there closes the connection (the isolated broker's view is stale), it finds the new leader
through another broker and has its records acknowledged by it within the session timeout plus a
few seconds of the cut, long before the heal (before the fence: only after the heal). After the
heal nothing acknowledged is lost or duplicated and the three logs are identical. With every
broker cut off (as with the ensemble down) nobody is elected, the followers stay, and the leader
keeps serving."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkapy.testing.cluster import SESSION_MS, Cluster, wait_for
from kafkapy.testing.tcp_proxy import TcpProxy
from kafkapy.testing.zookeeper import ZooKeeperServer

TOPIC = "isolated"
CUT_S = SESSION_MS / 1000 + 8  # long enough that an ack before the heal proves the failover
# the new leader's first acknowledgement, at the latest, after the cut: the session timeout,
# the controller's election and the producer's metadata refresh and retry backoff
ACK_WITHIN_S = SESSION_MS / 1000 + 4

pytestmark = pytest.mark.timeout(150)


@pytest.fixture
def proxied_cluster(tmp_path):
    """Three brokers on one ZooKeeper, each through a TcpProxy of its own (``.proxies``)."""
    zk = ZooKeeperServer(tmp_path / "zookeeper").start()
    proxies = {i: TcpProxy(zk.host, zk.port) for i in range(3)}
    cluster = Cluster(
        tmp_path,
        zk.connect_string,
        overrides=lambda i, _port: {"zookeeper.connect": f"{proxies[i].address}/kafkapy"},
    )
    cluster.proxies = proxies  # type: ignore[attr-defined]
    try:
        yield cluster.start()
    finally:
        try:
            cluster.stop()
        finally:
            for p in proxies.values():
                p.close()
            zk.stop()


class TimedProducer:
    """An acks=all idempotent producer writing continuously; each acknowledgement with the
    monotonic time its delivery report arrived."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.acked: list[tuple[float, int, bytes]] = []  # (time, offset, value)
        self.errors: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        p = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 90000,
                "retry.backoff.ms": 100,
            }
        )

        def report(err, msg):
            if err is None:
                self.acked.append((time.monotonic(), msg.offset(), msg.value()))
            else:
                self.errors.append(err)

        i = 0
        while not self._stop.is_set():
            try:
                p.produce(TOPIC, value=b"r%d" % i, partition=0, callback=report)
                i += 1
            except BufferError:
                pass
            p.poll(0.01)
        p.flush(90)

    def __enter__(self) -> TimedProducer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)


def read_with_epochs(bootstrap: str) -> list[tuple[int, int | None, bytes]]:
    """(offset, leader epoch, value) of every record of the partition, to its end."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "isolation-check",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        end = c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)[1]
        c.assign([TopicPartition(TOPIC, 0, 0)])
        got: list[tuple[int, int | None, bytes]] = []
        deadline = time.monotonic() + 30
        while (not got or got[-1][0] < end - 1) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append((m.offset(), m.leader_epoch(), m.value()))
        return got
    finally:
        c.close()


def test_leader_cut_off_from_zookeeper_hands_over_to_a_new_leader(proxied_cluster):
    cluster = proxied_cluster
    cluster.create_topic(TOPIC, partitions=1)
    before = cluster.state(TOPIC, 0)
    old = before["leader"]
    with TimedProducer(cluster.bootstrap) as producer:
        wait_for(lambda: len(producer.acked) > 50, what="acknowledgements before the cut")
        cut_at = time.monotonic()
        cluster.proxies[old].cut()
        (new,) = wait_for(
            lambda: (s := cluster.state(TOPIC, 0))["leader"] not in (old, -1) and (s["leader"],),
            timeout=SESSION_MS / 1000 + 10,
            what="a new leader elected",
        )
        elected_s = time.monotonic() - cut_at
        time.sleep(max(CUT_S - (time.monotonic() - cut_at), 0))
        cluster.proxies[old].heal()
        healed_s = time.monotonic() - cut_at
        wait_for(
            lambda: cluster.converged(TOPIC, 1),
            timeout=SESSION_MS / 1000 + 30,
            what="the old leader back in the ISR with an identical log",
        )
    assert not producer.errors, producer.errors[:5]
    records = read_with_epochs(cluster.bootstrap)
    by_value = {v: (off, epoch) for off, epoch, v in records}
    values = [v for _, _, v in records]
    assert len(values) == len(set(values)), "a record was written twice"
    assert [off for off, _, _ in records] == list(range(len(records))), "offsets not dense"
    for _, off, v in producer.acked:
        assert by_value.get(v, (None,))[0] == off, f"acknowledged record {v!r} at {off} lost"
    # acknowledgements of records the new leader wrote (a higher leader epoch than the old one's)
    new_epoch_acks = sorted(
        t - cut_at
        for t, _, v in producer.acked
        if t > cut_at and (by_value[v][1] or 0) > before["leader_epoch"]
    )
    assert new_epoch_acks, "nothing acknowledged by the new leader"
    first_s = new_epoch_acks[0]
    figures = (
        f"cut leader {old}; new leader {new} elected after {elected_s:.1f}s; first ack by the "
        f"new leader after {first_s:.1f}s; healed after {healed_s:.1f}s; "
        f"{len(producer.acked)} acknowledged"
    )
    print(figures)
    assert first_s <= ACK_WITHIN_S, figures


def test_every_broker_cut_off_from_zookeeper_keeps_serving(proxied_cluster):
    """ZooKeeper out of reach of every broker past the session (as with the ensemble down): no
    controller can elect anyone, the followers go on fetching from their leaders, and so the
    leaders keep their partitions and acks=all producers keep being acknowledged throughout (as
    Kafka's ZooKeeper-mode brokers keep serving); afterwards nothing is lost or duplicated."""
    cluster = proxied_cluster
    cluster.create_topic(TOPIC, partitions=1)
    leader = cluster.state(TOPIC, 0)["leader"]
    with TimedProducer(cluster.bootstrap) as producer:
        wait_for(lambda: len(producer.acked) > 50, what="acknowledgements before the cut")
        cut_at = time.monotonic()
        for proxy in cluster.proxies.values():
            proxy.cut()
        time.sleep(SESSION_MS / 1000 + 3)
        healed_at = time.monotonic()
        for proxy in cluster.proxies.values():
            proxy.heal()
        wait_for(
            lambda: cluster.converged(TOPIC, 1),
            timeout=SESSION_MS / 1000 + 30,
            what="every broker back with an identical log",
        )
    assert not producer.errors, producer.errors[:5]
    during = [t for t, _, _ in producer.acked if cut_at <= t <= healed_at]
    gaps = [b - a for a, b in zip([cut_at, *during], [*during, healed_at], strict=True)]
    assert max(gaps) < 2.0, f"acknowledgements stopped for {max(gaps):.1f}s during the cut"
    assert cluster.state(TOPIC, 0)["leader"] == leader
    records = read_with_epochs(cluster.bootstrap)
    values = [v for _, _, v in records]
    assert len(values) == len(set(values)), "a record was written twice"
    by_value = {v: off for off, _, v in records}
    for _, off, v in producer.acked:
        assert by_value.get(v) == off, f"acknowledged record {v!r} at {off} lost"
