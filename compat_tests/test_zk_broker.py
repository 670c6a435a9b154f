"""A kafkapy broker process on a real ZooKeeper (zookeeper.connect with a chroot): registration,
Kafka's tree seen through kazoo and zkCli, a stock client producing and consuming, clean exit."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kazoo.client import KazooClient

from kafkapy.testing import BrokerProcess, free_port


def raw_client(connect: str) -> KazooClient:
    client = KazooClient(hosts=connect, timeout=10.0)
    client.start(timeout=10.0)
    return client


def test_broker_on_zookeeper(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/kafkapy"
    broker = BrokerProcess(tmp_path / "broker", {
        "zookeeper.connect": connect,
        "broker.id": "0",
        "zookeeper.session.timeout.ms": "6000",
    })
    raw = raw_client(zookeeper.connect_string)
    try:
        broker.start()
        # registered: an ephemeral /brokers/ids/0 owned by the broker's session
        data, stat = raw.get("/kafkapy/brokers/ids/0")
        assert stat.ephemeralOwner != 0
        doc = json.loads(data)
        assert doc["endpoints"] == [f"PLAINTEXT://127.0.0.1:{broker.port}"]
        assert doc["port"] == broker.port and doc["host"] == "127.0.0.1"
        assert raw.exists("/kafkapy/controller") is not None
        assert len(json.loads(raw.get("/kafkapy/cluster/id")[0])["id"]) == 22
        # no embedded store next to the logs
        assert not (tmp_path / "broker" / "logs" / "__metadata.db").exists()

        # ZooKeeper's own shell shows the registration
        out = zookeeper.cli("ls", "/kafkapy/brokers/ids")
        assert "[0]" in out.splitlines()[-1] or "[0]" in out

        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            admin.create_topics([NewTopic("zk-topic", num_partitions=2, replication_factor=1)])
        finally:
            admin.close()
        assert sorted(raw.get_children("/kafkapy/brokers/topics/zk-topic/partitions")) == [
            "0", "1"
        ]
        topic = json.loads(raw.get("/kafkapy/brokers/topics/zk-topic")[0])
        assert topic["partitions"] == {"0": [0], "1": [0]} and len(topic["topic_id"]) == 22
        state = json.loads(raw.get("/kafkapy/brokers/topics/zk-topic/partitions/1/state")[0])
        assert state["leader"] == 0 and state["isr"] == [0] and state["leader_epoch"] == 0

        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        try:
            for i in range(20):
                producer.send("zk-topic", value=f"v{i}".encode(), partition=i % 2)
            producer.flush(30)
        finally:
            producer.close()
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap, enable_auto_commit=False, group_id=None,
            consumer_timeout_ms=10000,
        )
        try:
            tps = [TopicPartition("zk-topic", 0), TopicPartition("zk-topic", 1)]
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            got = []
            for rec in consumer:
                got.append(rec.value)
                if len(got) == 20:
                    break
        finally:
            consumer.close()
        assert sorted(got) == sorted(f"v{i}".encode() for i in range(20))

        # the topics survive a broker restart (they live in ZooKeeper), the registration is back
        broker.restart()
        assert raw.exists("/kafkapy/brokers/ids/0") is not None
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            assert "zk-topic" in admin.list_topics()
        finally:
            admin.close()
    finally:
        code = broker.stop()
        try:
            # a clean stop ends the session: the registration is gone at once
            assert raw.exists("/kafkapy/brokers/ids/0") is None
            assert raw.exists("/kafkapy/controller") is None
            assert raw.exists("/kafkapy/brokers/topics/zk-topic") is not None
        finally:
            raw.stop()
            raw.close()
    assert code == 0, broker.log_text()[-3000:]


def test_zookeeper_unreachable_is_a_clear_error(tmp_path):
    connect = f"127.0.0.1:{free_port()}/kafkapy"
    cmd = [
        sys.executable, "-m", "kafkapy.cli.main", "server",
        "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
        "--override", f"log.dirs={tmp_path / 'logs'}",
        "--override", f"zookeeper.connect={connect}",
        "--override", "zookeeper.connection.timeout.ms=2000",
    ]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kafkapy: error:") and connect in last and "Timed out" in last
    assert "Traceback" not in done.stderr
    assert elapsed < 30


SESSION_MS = 4000  # short, so that waiting for an expiry stays quick


def short_session(zookeeper, broker_id: int) -> dict[str, str]:
    return {
        "zookeeper.connect": f"{zookeeper.connect_string}/kafkapy",
        "broker.id": str(broker_id),
        "zookeeper.session.timeout.ms": str(SESSION_MS),
    }


def registration_owner(connect: str, broker_id: int) -> int:
    raw = raw_client(connect)
    try:
        return raw.exists(f"/kafkapy/brokers/ids/{broker_id}").ephemeralOwner
    finally:
        raw.stop()
        raw.close()


def test_restart_right_after_kill9_waits_out_the_old_session(zookeeper, tmp_path):
    """Kafka exits with "broker.id N is already registered" until the killed broker's session
    expires; kafkapy waits for the expiry (logging it) and registers."""
    overrides = short_session(zookeeper, 4)
    broker = BrokerProcess(tmp_path / "b", overrides)
    try:
        broker.start()
        old_owner = registration_owner(zookeeper.connect_string, 4)
        broker.kill()
        started = time.monotonic()
        broker.start()
        waited = time.monotonic() - started
        new_owner = registration_owner(zookeeper.connect_string, 4)
        log = broker.log_text()
        assert new_owner != old_owner
        assert f"registered by another ZooKeeper session 0x{old_owner:x}" in log
        assert "registered broker.id 4 after the old registration expired" in log
        assert waited < SESSION_MS / 1000 + 3 + 5, waited  # the expiry wait, not longer
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            brokers = admin.describe_cluster()["brokers"]
            assert [b.get("node_id", b.get("broker_id")) for b in brokers] == [4], brokers
        finally:
            admin.close()
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]


def test_broker_id_of_a_live_broker_is_refused_in_one_line(zookeeper, tmp_path):
    overrides = short_session(zookeeper, 3)
    first = BrokerProcess(tmp_path / "b1", overrides)
    second = BrokerProcess(tmp_path / "b2", overrides)
    try:
        first.start()
        started = time.monotonic()
        done = subprocess.run(
            second.command(), capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        waited = time.monotonic() - started
        assert done.returncode != 0
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("kafkapy: error: broker.id 3 is already registered by a live "), last
        assert waited >= SESSION_MS / 1000, waited  # it gave the session time to expire first
        assert "waiting up to" in done.stderr
        assert registration_owner(zookeeper.connect_string, 3) != 0  # the first keeps its id
    finally:
        assert first.stop() == 0
