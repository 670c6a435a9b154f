"""The pytest plugin and the embeddable broker (kafkapy/testing/) as users meet them.

The fixtures are used here as any project would use them (the plugin is registered by kafkapy's
``pytest11`` entry point): kafka-python, confluent-kafka and aiokafka on ``kafka_broker`` and
``kafka_topic`` (Spark's sources: test_testing_plugin_spark.py). Inner pytest runs (pytester)
check the options, topic deletion and the skip without ZooKeeper; the embedded broker is checked
for several at once, what stopping releases, memory storage, asyncio and trio, and its faults.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition

import kafkapy.testing
from kafkapy.protocol.record_batch import iter_batches
from kafkapy.testing import BrokerThread, api_versions_answered
from kafkapy.testing.cluster import wait_for
from kafkapy.testing.storage import tmpfs_root

pytest_plugins = ["pytester"]


def confluent_produce(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1})
    errors: list = []
    for v in values:
        producer.produce(
            topic, v, partition=partition, on_delivery=lambda e, m: e and errors.append(e)
        )
    assert producer.flush(30) == 0 and not errors, errors


def confluent_read(bootstrap: str, topic: str, partitions: int, count: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"r-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None:
            assert msg.error() is None, msg.error()
            got.append(msg.value())
    consumer.close()
    return got


# --- the fixtures, with every Python client --------------------------------------------------


@pytest.mark.kafka_topic(partitions=2, config={"retention.ms": "3600000"})
def test_three_python_clients_on_the_session_broker_and_a_fresh_topic(kafka_broker, kafka_topic):
    bootstrap = kafka_broker.bootstrap_servers
    assert kafka_topic.partitions == 2 and kafka_topic.config == {"retention.ms": "3600000"}
    described = AdminClient({"bootstrap.servers": bootstrap}).list_topics(kafka_topic, timeout=10)
    assert len(described.topics[kafka_topic].partitions) == 2

    confluent_produce(bootstrap, kafka_topic, [b"confluent-%d" % i for i in range(5)], 0)
    kp = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(5):
        kp.send(kafka_topic, b"kafka-python-%d" % i, partition=1).get(timeout=10)
    kp.close()

    async def aio_roundtrip() -> list[bytes]:
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
        from aiokafka.structs import TopicPartition as AioTp

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(kafka_topic, b"aiokafka-%d" % i, partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tps = [AioTp(kafka_topic, p) for p in range(2)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            got: list[bytes] = []
            while len(got) < 15:
                batches = await consumer.getmany(timeout_ms=1000)
                got += [r.value for recs in batches.values() for r in recs]
            return got
        finally:
            await consumer.stop()

    everything = sorted(
        [b"confluent-%d" % i for i in range(5)]
        + [b"kafka-python-%d" % i for i in range(5)]
        + [b"aiokafka-%d" % i for i in range(5)]
    )
    assert sorted(asyncio.run(aio_roundtrip())) == everything
    assert sorted(confluent_read(bootstrap, kafka_topic, 2, 15)) == everything
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tps = [KpTopicPartition(kafka_topic, p) for p in range(2)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < 15 and time.monotonic() < deadline:
        got += [r.value for recs in consumer.poll(timeout_ms=500).values() for r in recs]
    consumer.close()
    assert sorted(got) == everything


def test_transactions_work_on_the_fixture_broker(kafka_broker, kafka_topic):
    """The fixtures' single-broker settings cover __transaction_state as well."""
    producer = Producer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "transactional.id": kafka_topic}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(kafka_topic, b"committed")
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(kafka_topic, b"aborted")
    producer.abort_transaction(30)
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap_servers,
            "group.id": f"g-{kafka_topic}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(kafka_topic, 0, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not got:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.close()
    assert got == [b"committed"]


@pytest.mark.parametrize("kafka_topic", [3], indirect=True)
def test_kafka_topic_by_indirect_parametrization(kafka_topic, kafka_topic_factory):
    other = kafka_topic_factory(1, {"cleanup.policy": "compact"})
    assert kafka_topic.partitions == 3 and other.config == {"cleanup.policy": "compact"}
    assert other != kafka_topic and "test_kafka_topic_by_indirect" in other


# --- inner pytest runs: options, deletion, skips ----------------------------------------------


def test_topics_go_after_each_test_and_kafka_bootstrap_uses_a_running_cluster(
    pytester, kafka_broker
):
    pytester.makepyfile(
        test_inner="""
        import pytest
        from confluent_kafka.admin import AdminClient

        @pytest.mark.parametrize("i", range(3))
        def test_own_topic(kafka_broker, kafka_topic, i):
            admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
            assert kafka_topic in admin.list_topics(timeout=10).topics
            with open("names.txt", "a") as f:
                f.write(kafka_topic + "\\n")

        def test_faults_need_a_broker_of_our_own(kafka_broker):
            kafka_broker.kill()
        """
    )
    result = pytester.runpytest("--kafka-bootstrap", kafka_broker.bootstrap_servers, "-rs")
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines(["*kill() needs a broker started by kafkapy*"])
    names = set((pytester.path / "names.txt").read_text().split())
    assert len(names) == 3
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    assert not names & set(admin.list_topics(timeout=10).topics)


def test_process_mode_and_kept_data(pytester):
    pytester.makepyfile(
        test_inner="""
        from confluent_kafka import Producer

        def test_write(kafka_broker, kafka_topic):
            assert kafka_broker.mode == "process"
            p = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
            p.produce(kafka_topic, b"kept-record")
            assert p.flush(10) == 0
            with open("topic.txt", "w") as f:
                f.write(kafka_topic)
        """
    )
    result = pytester.runpytest("--kafka-broker-mode=process", "--kafka-keep-data")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["kafkapy: 1 broker(s) (process, disk) started in *", "kafkapy: kept broker data in *"]
    )
    kept = Path(next(line for line in result.outlines if "kept broker data in" in line).split()[-1])
    topic = (pytester.path / "topic.txt").read_text()
    # deleted after the test, as every fixture topic; the rest of the data dir stays
    assert (kept / "meta.properties").is_file() and not (kept / f"{topic}-0").exists()
    assert (kept / "__metadata.db").is_file()


def test_kafka_cluster_skips_naming_the_debian_packages_without_java(pytester, monkeypatch):
    monkeypatch.setenv("PATH", str(pytester.path))  # no java on it
    monkeypatch.delenv("KAFKAPY_JAVA", raising=False)
    pytester.makepyfile(test_inner="def test_cluster(kafka_cluster):\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*kafka_cluster needs Java and ZooKeeper*default-jre-headless*"])


# --- the embeddable broker ----------------------------------------------------------------------


def open_files_under(path: Path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


def test_in_process_brokers_run_side_by_side_and_stopping_releases_everything(tmp_path):
    brokers = [BrokerThread(tmp_path / f"b{i}") for i in range(2)]
    for b in brokers:
        b.start()
    assert len({b.port for b in brokers}) == 2
    for i, b in enumerate(brokers):
        confluent_produce(b.bootstrap_servers, f"only-on-{i}", [b"x"])
    for i, b in enumerate(brokers):  # two brokers, two metadata stores
        topics = AdminClient({"bootstrap.servers": b.bootstrap_servers}).list_topics(timeout=10)
        assert f"only-on-{i}" in topics.topics and f"only-on-{1 - i}" not in topics.topics
    assert open_files_under(tmp_path)  # segments, indexes, the metadata store
    for b in brokers:
        assert b.stop() == 0
    assert open_files_under(tmp_path) == []
    ours = {f"kafkapy-broker-{b.port}" for b in brokers}
    assert not [t for t in threading.enumerate() if t.name in ours]
    for b in brokers:  # the listener is closed: its port can be bound again
        with socket.socket() as s:
            s.bind(("127.0.0.1", b.port))
    # the same data comes back on a restart
    brokers[0].start()
    try:
        assert confluent_read(brokers[0].bootstrap_servers, "only-on-0", 1, 1) == [b"x"]
    finally:
        brokers[0].close()


def test_memory_storage_writes_kafkas_format_on_tmpfs_and_leaves_nothing():
    with kafkapy.testing.broker(storage="memory") as b:
        confluent_produce(b.bootstrap_servers, "mem", [b"a", b"b", b"c"])
        log_dir = b.log_dirs[0]
        if tmpfs_root() is not None:
            assert b.on_tmpfs and str(log_dir).startswith(str(tmpfs_root()))
        segment = log_dir / "mem-0" / "00000000000000000000.log"
        batches = list(iter_batches(segment.read_bytes()))
        assert sum(h.record_count for _, h in batches) == 3
        assert (log_dir / "mem-0" / "00000000000000000000.index").is_file()
        assert (log_dir / "meta.properties").is_file()
        memory = b.memory_dir
    assert not memory.exists()


def test_async_broker_under_asyncio_with_aiokafka():
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def main() -> list[bytes]:
        async with kafkapy.testing.async_broker(num_partitions=1) as b:
            producer = AIOKafkaProducer(bootstrap_servers=b.bootstrap_servers)
            await producer.start()
            await producer.send_and_wait("aio", b"from asyncio")
            await producer.stop()
            consumer = AIOKafkaConsumer(
                "aio", bootstrap_servers=b.bootstrap_servers, auto_offset_reset="earliest"
            )
            await consumer.start()
            try:
                return [(await consumer.getone()).value]
            finally:
                await consumer.stop()

    assert asyncio.run(main()) == [b"from asyncio"]


def test_async_broker_under_trio_keeps_the_callers_loop_running():
    import trio

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.sleep(0.001)

    async def main() -> bool:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            async with kafkapy.testing.async_broker(mode="process") as b:
                answered = await trio.to_thread.run_sync(api_versions_answered, b.host, b.port)
            nursery.cancel_scope.cancel()
        return answered

    assert trio.run(main) and ticks > 10


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_faults_kill_pause_and_dropped_connections(kafka_broker_factory, mode):
    b = kafka_broker_factory(mode)
    producer = Producer(
        {"bootstrap.servers": b.bootstrap_servers, "enable.idempotence": True, "linger.ms": 1}
    )
    for i in range(10):
        producer.produce("faults", b"before-%d" % i)
    assert producer.flush(30) == 0

    assert b.drop_connections() >= 1  # the producer's, at least; it reconnects and carries on
    for i in range(10):
        producer.produce("faults", b"after-drop-%d" % i)
    assert producer.flush(30) == 0

    b.pause()
    assert not api_versions_answered(b.host, b.port, timeout=0.5)
    b.resume()
    assert api_versions_answered(b.host, b.port)

    b.kill()
    assert not b.running
    b.start()  # recovers the logs of the crashed broker
    got = confluent_read(b.bootstrap_servers, "faults", 1, 20)
    assert got == [b"before-%d" % i for i in range(10)] + [b"after-drop-%d" % i for i in range(10)]


def test_subprocess_brokers_fork_from_the_zygote_unless_the_environment_differs(
    tmp_path, monkeypatch
):
    import subprocess

    from kafkapy.testing import BrokerProcess
    from kafkapy.testing.zygote import ZygoteChild, warm

    zygote = warm()  # the run's zygote (started along with an earlier broker, or now)
    assert zygote is not None
    wait_for(lambda: zygote.alive, 30, "the zygote ready")
    broker = BrokerProcess(tmp_path / "a").start()
    child = broker.proc
    assert isinstance(child, ZygoteChild) and child.poll() is None
    assert f"127.0.0.1:{broker.port}" in broker.log_text()  # its own output, in its file
    assert broker.stop() == 0 and child.returncode == 0
    monkeypatch.setenv("UNRELATED_TO_KAFKAPY", "1")  # not read at import: the zygote serves on
    broker.start()
    assert isinstance(broker.proc, ZygoteChild)
    child = broker.proc
    broker.kill()
    assert child.returncode == -9  # as subprocess reports a SIGKILL
    monkeypatch.setenv("KAFKAPY_LOG_LEVEL", "DEBUG")  # modules may read KAFKAPY_* at import
    other = BrokerProcess(tmp_path / "b").start()
    try:
        assert isinstance(other.proc, subprocess.Popen)
    finally:
        assert other.stop() == 0


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_fail_log_dir_takes_that_directory_offline_and_repair_brings_it_back(
    kafka_broker_factory, tmp_path, mode
):
    from kafkapy.protocol.record_batch import Record, encode_batch

    from .rawclient import RawClient, produce_request

    dirs = f"{tmp_path}/d1,{tmp_path}/d2"
    b = kafka_broker_factory(
        mode, overrides={"log.dirs": dirs, "log.flush.offset.checkpoint.interval.ms": "100"}
    )
    for topic in ("first", "second"):  # one partition in each log dir
        confluent_produce(b.bootstrap_servers, topic, [b"ok"])
    assert {b.log_dir_of("first", 0), b.log_dir_of("second", 0)} == set(b.log_dirs)

    def produce(topic: str) -> int:
        batch = encode_batch([Record(0, int(time.time() * 1000), None, b"v", [])])
        with RawClient(b.bootstrap_servers) as c:
            resp = c.request(produce_request(topic, batch))
        return resp.responses[0].partition_responses[0].error_code

    failed = b.fail_log_dir("first", 0)
    assert failed.is_file()
    kafka_storage_error = 56
    wait_for(lambda: produce("first") == kafka_storage_error, 30, "first-0 offline")
    assert produce("second") == 0  # the other directory serves on
    b.stop()
    b.repair_log_dir()
    assert failed.is_dir()
    b.start()
    assert produce("first") == 0
    assert confluent_read(b.bootstrap_servers, "first", 1, 2)[0] == b"ok"


def test_a_killed_session_broker_is_back_for_the_next_test(kafka_broker, kafka_topic_factory):
    kafka_broker.kill()
    wait_for(lambda: not kafka_broker.running, 5, "broker stopped")


def test_the_session_broker_came_back(kafka_broker, kafka_topic):
    assert kafka_broker.running and api_versions_answered(kafka_broker.host, kafka_broker.port)


# --- the cluster ----------------------------------------------------------------------------------


def test_first_group_lookups_on_every_broker_at_once_get_no_server_error(kafka_cluster):
    """Every broker creating __consumer_offsets for the same first FindCoordinator: the losers
    answer COORDINATOR_NOT_AVAILABLE (clients retry), not UNKNOWN_SERVER_ERROR."""
    from kio.schema.find_coordinator.v2.request import FindCoordinatorRequest

    from .rawclient import RawClient

    clients = [RawClient(b.bootstrap, timeout=30) for b in kafka_cluster.brokers.values()]
    start = threading.Barrier(len(clients))
    codes: list[int] = []

    def lookup(client: RawClient) -> None:
        start.wait()
        codes.append(client.request(FindCoordinatorRequest(key="g", key_type=0)).error_code)

    threads = [threading.Thread(target=lookup, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for c in clients:
        c.close()
    coordinator_not_available = 15
    assert len(codes) == len(clients) and set(codes) <= {0, coordinator_not_available}, codes


def test_cluster_faults_move_leadership_pause_and_drop_connections(kafka_cluster):
    c = kafka_cluster
    c.create_topic("moves", partitions=1, rf=3)
    first = c.leader("moves", 0)
    to = next(i for i in c.ids if i != first)
    c.move_leadership("moves", 0, to)
    assert c.leader("moves", 0) == to

    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 1})
    confluent_values = [b"m-%d" % i for i in range(20)]
    for v in confluent_values[:10]:
        producer.produce("moves", v)
    assert producer.flush(30) == 0
    assert c.drop_connections() >= 1
    # SIGSTOP the leader: its ZooKeeper session expires and the controller moves the leadership
    c.pause(to)
    wait_for(lambda: c.leader("moves", 0) not in (to, -1), 60, "leadership moved off the paused")
    for v in confluent_values[10:]:
        producer.produce("moves", v)
    assert producer.flush(60) == 0
    c.resume(to)
    wait_for(lambda: c.full_isr("moves", 1), 60, "the resumed broker back in the ISR")
    assert confluent_read(c.bootstrap, "moves", 1, 20) == confluent_values
