"""More failure scenarios on a three-broker kafkapy cluster over a real ZooKeeper: a broker's
ZooKeeper session expiring (SIGSTOP past zookeeper.session.timeout.ms, then SIGCONT), a broker
restarted with an empty disk, replication factor above the live broker count, the topics CLI's
--under-replicated-partitions report, and a consumer group reading through leader kills.

One cluster per module; every test leaves it whole (three brokers registered, full ISRs).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import NewTopic

from compat_tests.cluster_clients import ProducerThread, assert_nothing_lost
from kafkapy.testing.cluster import BROKERS, SESSION_MS, Cluster, wait_for

# -- helpers ------------------------------------------------------------------------------------


def ensure_whole(cluster: Cluster) -> None:
    for b in cluster.brokers.values():
        if b.proc is None:
            b.start()
    wait_for(cluster.whole, timeout=60, what="cluster whole again")


@pytest.fixture(autouse=True)
def _leave_whole(cluster):
    yield
    ensure_whole(cluster)


# -- tests --------------------------------------------------------------------------------------


def test_replication_factor_above_live_brokers(cluster):
    admin = cluster.admin()
    fs = admin.create_topics([NewTopic("too-many", 1, 4)])
    with pytest.raises(KafkaException) as e:
        fs["too-many"].result(15)
    assert e.value.args[0].code() == KafkaError.INVALID_REPLICATION_FACTOR
    assert cluster.zk.exists("/kafkapy/brokers/topics/too-many") is None

    # with one broker gone, three replicas are more than the live brokers
    assert cluster.brokers[2].stop() == 0
    try:
        wait_for(lambda: cluster.registered() == {0, 1}, what="broker 2 deregistered")
        admin = cluster.admin()
        fs = admin.create_topics([NewTopic("three-of-two", 1, 3)])
        with pytest.raises(KafkaException) as e:
            fs["three-of-two"].result(15)
        assert e.value.args[0].code() == KafkaError.INVALID_REPLICATION_FACTOR
        assert cluster.zk.exists("/kafkapy/brokers/topics/three-of-two") is None
        # RF 2 is still fine
        admin.create_topics([NewTopic("two-of-two", 1, 2)])["two-of-two"].result(15)
    finally:
        cluster.brokers[2].start()
    wait_for(lambda: cluster.registered() == set(BROKERS), what="broker 2 back")
    admin = cluster.admin()
    admin.delete_topics(["two-of-two"])["two-of-two"].result(15)


def _cli_under_replicated(cluster: Cluster) -> list[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkapy.cli.main",
            "topics",
            "--bootstrap-server",
            cluster.bootstrap,
            "--describe",
            "--under-replicated-partitions",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.strip()]


def test_cli_under_replicated_partitions(cluster):
    cluster.create_topic("cli-urp", partitions=3)
    assert _cli_under_replicated(cluster) == []
    victim = 1
    assert cluster.brokers[victim].stop() == 0
    try:
        wait_for(
            lambda: all(victim not in cluster.state("cli-urp", p)["isr"] for p in range(3)),
            what="ISR shrunk",
        )
        lines = wait_for(
            lambda: (
                (ls := _cli_under_replicated(cluster))
                and sum("Topic: cli-urp\t" in x for x in ls) == 3
                and ls
            ),
            what="CLI lists the under-replicated partitions",
        )
        mine = sorted(x for x in lines if "Topic: cli-urp\t" in x)
        for p, line in enumerate(mine):
            assert f"Partition: {p}\t" in line
            replicas = re.search(r"\tReplicas: ([\d,]+)", line).group(1)
            isr = re.search(r"\tIsr: ([\d,]+)", line).group(1)
            leader = re.search(r"\tLeader: (\d+)", line).group(1)
            assert sorted(int(r) for r in replicas.split(",")) == [0, 1, 2]
            assert sorted(int(r) for r in isr.split(",")) == [0, 2]
            assert int(leader) in (0, 2)
    finally:
        cluster.brokers[victim].start()
    wait_for(cluster.whole, timeout=60, what="broker back in every ISR")
    wait_for(lambda: _cli_under_replicated(cluster) == [], what="CLI reports nothing")


def test_session_expiry_moves_leaderships_and_rejoins(cluster):
    topic = "expiry"
    cluster.create_topic(topic, partitions=3)
    victim = cluster.state(topic, 0)["leader"]
    led = [p for p in range(3) if cluster.state(topic, p)["leader"] == victim]
    epochs = {p: cluster.state(topic, p)["leader_epoch"] for p in range(3)}
    owner_before = cluster.zk.exists(f"/kafkapy/brokers/ids/{victim}").ephemeralOwner
    pid = cluster.brokers[victim].pid
    with ProducerThread(cluster, topic) as prod:
        prod.wait_more(200, "first acks")
        os.kill(pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            wait_for(
                lambda: victim not in cluster.registered(),
                timeout=SESSION_MS / 1000 + 10,
                what="registration gone after session timeout",
            )
            for p in led:
                wait_for(
                    lambda p=p: cluster.state(topic, p)["leader"] not in (victim, -1),
                    timeout=15,
                    what=f"partition {p} leadership moved",
                )
            prod.wait_more(200, "acks while the broker is frozen")
            # stay frozen past the session timeout so the session really is expired server-side
            time.sleep(max(0.0, SESSION_MS / 1000 + 2 - (time.monotonic() - stopped_at)))
        finally:
            os.kill(pid, signal.SIGCONT)
        for p in led:
            st = cluster.state(topic, p)
            assert st["leader_epoch"] > epochs[p]
        wait_for(lambda: victim in cluster.registered(), timeout=30, what="broker re-registered")
        owner_after = cluster.zk.exists(f"/kafkapy/brokers/ids/{victim}").ephemeralOwner
        assert owner_after != owner_before, "re-registered under a new session"
        wait_for(lambda: cluster.full_isr(topic, 3), timeout=30, what="rejoined the ISR")
        prod.wait_more(200, "acks after rejoin")
    assert cluster.brokers[victim].proc.poll() is None, "broker died after session expiry"
    assert not prod.errors, prod.errors[:5]
    wait_for(lambda: cluster.converged(topic, 3), timeout=30, what="identical logs")
    assert_nothing_lost(cluster, topic, 3, prod.acked)


def test_empty_disk_restart_rereplicates(cluster):
    topic = "emptydisk"
    cluster.create_topic(topic, partitions=3)
    with ProducerThread(cluster, topic) as prod:
        prod.wait_more(1500, "acks before wiping")
    assert not prod.errors, prod.errors[:5]
    victim = 2
    broker = cluster.brokers[victim]
    assert broker.stop() == 0
    logs = broker.data_dir / "logs"
    shutil.rmtree(logs)
    assert not logs.exists()
    with ProducerThread(cluster, topic) as prod2:
        prod2.wait_more(300, "acks while the broker is away")
        broker.start()
        wait_for(lambda: victim in cluster.registered(), what="re-registered")
        wait_for(lambda: cluster.full_isr(topic, 3), timeout=60, what="rejoined ISR")
        prod2.wait_more(300, "acks after rejoin")
    assert not prod2.errors, prod2.errors[:5]
    wait_for(lambda: cluster.converged(topic, 3), timeout=60, what="byte-identical logs")
    for p in range(3):
        assert cluster.log_bytes(victim, topic, p), f"partition {p} not re-replicated"
    # the other topics it held came back too
    wait_for(cluster.whole, timeout=60, what="every topic fully replicated")
    for t, n in cluster.topics.items():
        wait_for(lambda t=t, n=n: cluster.converged(t, n), timeout=30, what=f"{t} identical")
    assert_nothing_lost(cluster, topic, 3, prod.acked + prod2.acked)


class GroupReader:
    """One confluent-kafka consumer in group ``group``, committing synchronously after each
    processed batch; records every delivery and the last successful commit per partition."""

    def __init__(self, cluster: Cluster, topic: str, group: str, shared: dict) -> None:
        self.cluster = cluster
        self.topic = topic
        self.group = group
        self.shared = shared
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        c = Consumer(
            {
                "bootstrap.servers": self.cluster.bootstrap,
                "group.id": self.group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 30000,
                "max.poll.interval.ms": 60000,
            }
        )
        c.subscribe([self.topic])
        lock = self.shared["lock"]
        try:
            while not self._stop.is_set():
                msgs = c.consume(num_messages=500, timeout=0.5)
                batch = [m for m in msgs if m.error() is None]
                if not batch:
                    continue
                with lock:
                    for m in batch:
                        key = (m.partition(), m.offset())
                        committed = self.shared["committed"].get(m.partition(), 0)
                        if key in self.shared["seen"] and m.offset() < committed:
                            self.shared["dups"].append((key, committed))
                        self.shared["seen"].setdefault(key, m.value())
                        self.shared["deliveries"] += 1
                try:
                    result = c.commit(asynchronous=False)
                except KafkaException as e:
                    self.shared["commit_errors"].append(e)
                    continue
                with lock:
                    for tp in result or []:
                        if tp.error is None and tp.offset >= 0:
                            cur = self.shared["committed"].get(tp.partition, 0)
                            self.shared["committed"][tp.partition] = max(cur, tp.offset)
        finally:
            c.close()

    def start(self) -> GroupReader:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


def test_consumer_group_through_leader_kills(cluster):
    topic = "grouped"
    cluster.create_topic(topic, partitions=3)
    shared: dict = {
        "lock": threading.Lock(),
        "seen": {},
        "committed": {},
        "dups": [],
        "deliveries": 0,
        "commit_errors": [],
    }
    readers = [GroupReader(cluster, topic, "through-kills", shared).start() for _ in range(2)]
    try:
        with ProducerThread(cluster, topic) as prod:
            prod.wait_more(300, "first acks")
            for p in range(3):
                victim = cluster.state(topic, p)["leader"]
                epoch = cluster.state(topic, p)["leader_epoch"]
                cluster.brokers[victim].kill()
                wait_for(
                    lambda p=p, v=victim: cluster.state(topic, p)["leader"] not in (v, -1),
                    timeout=SESSION_MS / 1000 + 10,
                    what=f"new leader for {p}",
                )
                assert cluster.state(topic, p)["leader_epoch"] > epoch
                prod.wait_more(200, f"acks after killing the leader of {p}")
                cluster.brokers[victim].start()
                wait_for(cluster.whole, timeout=60, what=f"broker {victim} back in every ISR")
                prod.wait_more(100, f"acks after broker {victim} rejoined")
        assert not prod.errors, prod.errors[:5]
        acked = {(p, off): v for p, off, v in prod.acked}

        def all_read() -> bool:
            with shared["lock"]:
                return all(k in shared["seen"] for k in acked)

        wait_for(all_read, timeout=60, what="the group consumed every acknowledged record")
        # and committed it all
        ends = {p: max(off for q, off in acked if q == p) + 1 for p in range(3)}
        wait_for(
            lambda: all(shared["committed"].get(p, 0) >= ends[p] for p in range(3)),
            timeout=30,
            what="commits caught up",
        )
    finally:
        for r in readers:
            r.stop()
    for key, v in acked.items():
        assert shared["seen"][key] == v, f"acknowledged record {key} read back differently"
    assert not shared["dups"], (
        f"records delivered twice below the committed offset: {shared['dups'][:5]}"
    )
    wait_for(lambda: cluster.converged(topic, 3), timeout=30, what="identical logs")
    # a fresh group starting from the committed offsets reads nothing old
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": "through-kills",
            "enable.auto.commit": False,
        }
    )
    try:
        committed = c.committed([TopicPartition(topic, p) for p in range(3)], timeout=15)
        for tp in committed:
            assert tp.offset == shared["committed"][tp.partition]
    finally:
        c.close()
