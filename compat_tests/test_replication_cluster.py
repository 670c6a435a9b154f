"""A three-broker kafkapy cluster on a real ZooKeeper: controller election and failover,
replication with acks=all across a leader kill -9, controlled shutdown, preferred-leader election,
topic deletion, and stock clients (confluent-kafka, kafka-python, kcat) seeing the cluster.

One cluster per module (the tests run in order and leave it whole); one test on a three-node
ZooKeeper ensemble.
"""

from __future__ import annotations

import shutil
import subprocess
import time

from confluent_kafka import Producer, TopicPartition

from compat_tests.cluster_clients import ProducerThread, assert_nothing_lost, consume_all
from kafkapy.testing.cluster import SESSION_MS, Cluster
from kafkapy.testing.zookeeper import ZooKeeperEnsemble


def test_cluster_metadata_and_clients(cluster):
    cluster.create_topic("spread", partitions=6)
    md = cluster.admin().list_topics(timeout=10)
    assert sorted(md.brokers) == [0, 1, 2]
    parts = md.topics["spread"].partitions
    assert {p.leader for p in parts.values()} == {0, 1, 2}  # leaders spread over brokers
    for p in parts.values():
        assert sorted(p.replicas) == [0, 1, 2] and sorted(p.isrs) == [0, 1, 2]
    first = {p.replicas[0] for p in parts.values()}
    assert first == {0, 1, 2}

    from kafka import KafkaConsumer

    kc = KafkaConsumer(bootstrap_servers=cluster.bootstrap)
    try:
        assert len(kc._client.cluster.brokers()) == 3
        assert kc.partitions_for_topic("spread") == set(range(6))
    finally:
        kc.close()
    if shutil.which("kcat"):
        out = subprocess.run(
            ["kcat", "-b", cluster.bootstrap, "-L", "-t", "spread"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        assert "3 brokers" in out
        assert "isrs:" in out and "leader" in out


def _converged(cluster, topic: str, partitions: int) -> bool:
    for p in range(partitions):
        st = cluster.state(topic, p)
        if sorted(st["isr"]) != [0, 1, 2]:
            return False
        logs = {cluster.log_bytes(b, topic, p) for b in range(3)}
        if len(logs) != 1:
            return False
    return True


def test_leader_kill_acks_all_loses_nothing(cluster):
    topic = "durable"
    cluster.create_topic(topic, partitions=3)
    with ProducerThread(cluster, topic) as producer:
        acked = producer.acked
        cluster.wait_for(lambda: len(acked) > 200, what="first acks")
        victim = cluster.state(topic, 0)["leader"]
        epoch = cluster.state(topic, 0)["leader_epoch"]
        cluster.brokers[victim].kill()
        killed_at = time.monotonic()
        cluster.wait_for(
            lambda: cluster.state(topic, 0)["leader"] not in (victim, -1),
            timeout=SESSION_MS / 1000 + 10,
            what="new leader",
        )
        failover = time.monotonic() - killed_at
        st = cluster.state(topic, 0)
        assert st["leader_epoch"] > epoch and victim not in st["isr"]
        before = len(acked)
        cluster.wait_for(lambda: len(acked) > before + 200, what="acks after failover")
        cluster.brokers[victim].start()
        cluster.wait_for(
            lambda: victim in cluster.state(topic, 0)["isr"], timeout=30, what="rejoin ISR"
        )
        time.sleep(1)
    assert not producer.errors, producer.errors[:5]
    assert failover < SESSION_MS / 1000 + 8
    cluster.wait_for(lambda: _converged(cluster, topic, 3), timeout=30, what="identical logs")
    assert_nothing_lost(cluster, topic, 3, acked)


def test_controller_failover(cluster):
    cid, epoch = cluster.controller()
    assert cid is not None
    cluster.brokers[cid].kill()
    started = time.monotonic()
    new = cluster.wait_for(
        lambda: (c := cluster.controller())[0] not in (None, cid) and c,
        timeout=SESSION_MS / 1000 + 10,
        what="new controller",
    )
    assert time.monotonic() - started < SESSION_MS / 1000 + 5
    assert new[1] > epoch
    cluster.brokers[cid].start()
    cluster.wait_for(lambda: len(cluster.zk.get_children("/kafkapy/brokers/ids")) == 3)
    cluster.wait_for(lambda: _converged(cluster, "durable", 3), timeout=30, what="ISR back")


def test_controlled_shutdown_and_preferred_election(cluster):
    topic = "moving"
    cluster.create_topic(topic, partitions=3)
    victim = cluster.state(topic, 1)["leader"]
    led = [p for p in range(3) if cluster.state(topic, p)["leader"] == victim]
    with ProducerThread(cluster, topic) as producer:
        acked = producer.acked
        cluster.wait_for(lambda: len(acked) > 100, what="acks")
        assert cluster.brokers[victim].stop() == 0  # SIGTERM: controlled shutdown
        # leadership had moved before the process exited
        for p in led:
            assert cluster.state(topic, p)["leader"] not in (victim, -1)
        before = len(acked)
        cluster.wait_for(lambda: len(acked) > before + 100, what="acks after shutdown")
        cluster.brokers[victim].start()
        cluster.wait_for(
            lambda: all(victim in cluster.state(topic, p)["isr"] for p in range(3)),
            what="rejoin",
        )
    assert not producer.errors, producer.errors[:5]
    # preferred-leader election (ElectLeaders) gives the leaderships back
    from confluent_kafka import ElectionType

    admin = cluster.admin()
    tps = [TopicPartition(topic, p) for p in led]
    res = admin.elect_leaders(ElectionType.PREFERRED, tps).result(30)
    for tp, err in res.items():
        assert err is None, (tp, err)
    cluster.wait_for(
        lambda: all(cluster.state(topic, p)["leader"] == victim for p in led),
        what="preferred leaders back",
    )


def test_topic_deletion_on_every_broker(cluster):
    cluster.create_topic("doomed", partitions=2)
    admin = cluster.admin()
    fs = admin.delete_topics(["doomed"])
    for f in fs.values():
        f.result(15)

    def gone():
        return all(
            not list((b.data_dir / "logs").glob("doomed-*")) for b in cluster.brokers.values()
        )

    cluster.wait_for(gone, timeout=20, what="logs removed")
    assert cluster.zk.exists("/kafkapy/brokers/topics/doomed") is None


def test_ensemble_cluster_survives_leader_kill(tmp_path):
    ensemble = ZooKeeperEnsemble(tmp_path / "ensemble", 3)
    ensemble.start()
    c = Cluster(tmp_path, ensemble.connect_string)
    try:
        c.start()
        c.create_topic("ens", partitions=1)
        p = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "enable.idempotence": True})
        acked = []
        for i in range(100):
            p.produce(
                "ens",
                value=f"a{i}".encode(),
                callback=lambda e, m: acked.append(m.offset()) if e is None else None,
            )
        p.flush(30)
        leader = c.state("ens", 0)["leader"]
        c.brokers[leader].kill()
        c.wait_for(
            lambda: c.state("ens", 0)["leader"] not in (leader, -1), timeout=20, what="new leader"
        )
        for i in range(100, 200):
            p.produce(
                "ens",
                value=f"a{i}".encode(),
                callback=lambda e, m: acked.append(m.offset()) if e is None else None,
            )
        p.flush(30)
        assert len(acked) == 200
        got = consume_all(c, "ens", 1)
        assert sorted(v for _, _, v in got) == sorted(f"a{i}".encode() for i in range(200))
    finally:
        c.stop()
        ensemble.stop()
