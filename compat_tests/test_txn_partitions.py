"""The partition side of transactions against a real broker, with no transaction coordinator:
a raw client writes transactional batches and ends them with WriteTxnMarkers (as a coordinator
does), and real clients read with read_committed / read_uncommitted. The transactional ids used
here are not known to the broker's transaction coordinator, so KIP-890 verification is turned
off (transaction.partition.verification.enable=false), as it would refuse those writes."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from compat_tests.rawclient import RawClient
from compat_tests.suites import jvm
from compat_tests.txn_raw import (
    batch,
    create_topic,
    fetch_partition,
    list_latest,
    produce,
    producer_id,
    req,
    txn_batch,
    write_markers,
)

READ_UNCOMMITTED, READ_COMMITTED = 0, 1


@pytest.fixture
def broker(broker_factory):
    return broker_factory({"transaction.partition.verification.enable": "false"}, clean_stop=True)


def build_log(c: RawClient, topic: str) -> tuple[list[bytes], list[bytes]]:
    """plain, txn A (committed) and txn B (aborted) interleaved; returns the values each
    isolation level must deliver, in offset order."""
    create_topic(c, topic)
    a, b = producer_id(c), producer_id(c)
    assert produce(c, topic, batch([b"p0"])).error_code == 0
    assert produce(c, topic, txn_batch(a, 0, [b"a0", b"a1"]), "txn-a").error_code == 0
    assert produce(c, topic, txn_batch(b, 0, [b"b0"]), "txn-b").error_code == 0
    assert produce(c, topic, batch([b"p1"])).error_code == 0
    assert produce(c, topic, txn_batch(a, 2, [b"a2"]), "txn-a").error_code == 0
    assert produce(c, topic, txn_batch(b, 1, [b"b1", b"b2"]), "txn-b").error_code == 0
    assert write_markers(c, a, True, {topic: [0]}) == {(topic, 0): 0}
    assert write_markers(c, b, False, {topic: [0]}) == {(topic, 0): 0}
    assert produce(c, topic, batch([b"p2"])).error_code == 0
    committed = [b"p0", b"a0", b"a1", b"p1", b"a2", b"p2"]
    everything = [b"p0", b"a0", b"a1", b"b0", b"p1", b"a2", b"b1", b"b2", b"p2"]
    return committed, everything


def confluent_read(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "txn-reader",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[bytes] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise AssertionError(msg.error())
            out.append(msg.value())
        raise AssertionError(f"no end of partition within 30 s; read {out}")
    finally:
        consumer.close()


def kafka_python_read(bootstrap: str, topic: str, isolation: str, expected: int) -> list[bytes]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    try:
        tp = KTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        out: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(out) < expected and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                out += [r.value for r in recs]
        for recs in consumer.poll(timeout_ms=500).values():  # nothing more may come
            out += [r.value for r in recs]
        return out
    finally:
        consumer.close()


def test_read_committed_consumers_skip_aborted_records_and_markers(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        committed, everything = build_log(c, "tx")
        assert list_latest(c, "tx", READ_COMMITTED) == list_latest(c, "tx", READ_UNCOMMITTED)
    assert confluent_read(broker.bootstrap, "tx", "read_committed") == committed
    assert confluent_read(broker.bootstrap, "tx", "read_uncommitted") == everything
    assert kafka_python_read(broker.bootstrap, "tx", "read_committed", 6) == committed
    assert kafka_python_read(broker.bootstrap, "tx", "read_uncommitted", 9) == everything
    out = subprocess.run(
        ["kcat", "-b", broker.bootstrap, "-C", "-t", "tx", "-o", "beginning", "-e", "-q"]
        + ["-X", "isolation.level=read_committed", "-f", "%s\n"],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    assert out.split() == committed


def test_open_transaction_holds_read_committed_at_its_first_offset(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "held")
        pid = producer_id(c)
        assert produce(c, "held", batch([b"before"])).error_code == 0  # 0
        assert produce(c, "held", txn_batch(pid, 0, [b"t0"]), "t").error_code == 0  # 1
        assert produce(c, "held", batch([b"after"])).error_code == 0  # 2
        assert list_latest(c, "held", READ_UNCOMMITTED) == 3
        assert list_latest(c, "held", READ_COMMITTED) == 1
        p = fetch_partition(c, "held", 0, READ_COMMITTED)
        assert (p.high_watermark, p.last_stable_offset) == (3, 1)
        assert confluent_read(broker.bootstrap, "held", "read_committed") == [b"before"]
        assert write_markers(c, pid, True, {"held": [0]}) == {("held", 0): 0}  # 3
        assert list_latest(c, "held", READ_COMMITTED) == 4
        assert fetch_partition(c, "held", 0, READ_UNCOMMITTED).last_stable_offset == 4
    assert confluent_read(broker.bootstrap, "held", "read_committed") == [
        b"before",
        b"t0",
        b"after",
    ]


def test_fetch_reports_aborted_transactions_only_to_read_committed(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "ab")
        pid = producer_id(c)
        produce(c, "ab", txn_batch(pid, 0, [b"x"]), "t")
        write_markers(c, pid, False, {"ab": [0]})
        p = fetch_partition(c, "ab", 0, READ_COMMITTED)
        assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == [(pid, 0)]
        assert fetch_partition(c, "ab", 0, READ_UNCOMMITTED).aborted_transactions is None
        # a fetch from past the aborted transaction gets no entry
        assert fetch_partition(c, "ab", 2, READ_COMMITTED).aborted_transactions == ()


def test_write_txn_markers_errors(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "m")
        pid = producer_id(c)
        produce(c, "m", txn_batch(pid, 0, [b"x"], epoch=2), "t")
        assert write_markers(c, pid, True, {"m": [0]}, epoch=2, coordinator_epoch=5) == {
            ("m", 0): 0
        }
        # an older coordinator epoch is fenced; an older producer epoch is refused
        got = write_markers(c, pid, False, {"m": [0]}, epoch=2, coordinator_epoch=4)
        assert got == {("m", 0): 52}  # TRANSACTION_COORDINATOR_FENCED
        got = write_markers(c, pid, False, {"m": [0]}, epoch=1, coordinator_epoch=5)
        assert got == {("m", 0): 47}  # INVALID_PRODUCER_EPOCH
        got = write_markers(c, pid, False, {"m": [7], "nope": [0]}, epoch=2, coordinator_epoch=5)
        assert got == {("m", 7): 3, ("nope", 0): 3}  # UNKNOWN_TOPIC_OR_PARTITION
        # no marker without a producer id: Kafka answers UNKNOWN_SERVER_ERROR
        assert write_markers(c, -1, True, {"m": [0]}) == {("m", 0): -1}


def test_transactional_produce_rules(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "rules")
        pid, other = producer_id(c), producer_id(c)
        # transactional records need the request's transactional id
        assert produce(c, "rules", txn_batch(pid, 0, [b"x"]), None).error_code == 53
        assert produce(c, "rules", txn_batch(pid, 0, [b"x"]), "t").error_code == 0
        # a plain write of a producer whose transaction is open
        plain = batch([b"y"], producer_id=pid, producer_epoch=0, base_sequence=1)
        assert produce(c, "rules", plain, "t").error_code == 48  # INVALID_TXN_STATE
        # one request, two producer ids
        Q = req(0, 9)
        resp = c.request(
            Q.ProduceRequest(
                transactional_id="t",
                acks=-1,
                timeout=__import__("datetime").timedelta(seconds=5),
                topic_data=(
                    Q.TopicProduceData(
                        name="rules",
                        partition_data=(
                            Q.PartitionProduceData(index=0, records=txn_batch(pid, 1, [b"z"])),
                        ),
                    ),
                    Q.TopicProduceData(
                        name="rules2",
                        partition_data=(
                            Q.PartitionProduceData(index=0, records=txn_batch(other, 0, [b"z"])),
                        ),
                    ),
                ),
            )
        )
        codes = [p.error_code for t in resp.responses for p in t.partition_responses]
        assert codes == [49, 49]  # INVALID_PRODUCER_ID_MAPPING


def describe_producers(c: RawClient, topic: str) -> dict[int, tuple[int, int]]:
    Q = req(61, 0)
    resp = c.request(
        Q.DescribeProducersRequest(topics=(Q.TopicRequest(name=topic, partition_indexes=(0,)),))
    )
    (p,) = resp.topics[0].partitions
    return {
        s.producer_id: (s.coordinator_epoch, s.current_txn_start_offset) for s in p.active_producers
    }


@pytest.mark.parametrize("crash", [False, True], ids=["clean-restart", "kill-9"])
def test_transaction_state_survives_restart(broker, crash) -> None:
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "keep")
        a, b = producer_id(c), producer_id(c)
        produce(c, "keep", txn_batch(a, 0, [b"aborted"]), "ta")  # 0
        produce(c, "keep", batch([b"plain"]))  # 1
        write_markers(c, a, False, {"keep": [0]}, coordinator_epoch=3)  # 2
        produce(c, "keep", txn_batch(b, 0, [b"open"]), "tb")  # 3, stays open
        produce(c, "keep", batch([b"later"]))  # 4
        before = describe_producers(c, "keep")
    assert before[a] == (3, -1) and before[b] == (-1, 3)
    if crash:
        broker.kill()
        broker.start()
    else:
        broker.restart()
    d = Path(broker.data_dir) / "logs" / "keep-0"
    assert (d / "00000000000000000000.txnindex").stat().st_size == 34
    with RawClient(broker.bootstrap) as c:
        assert describe_producers(c, "keep") == before
        assert list_latest(c, "keep", READ_COMMITTED) == 3
        p = fetch_partition(c, "keep", 0, READ_COMMITTED)
        assert p.last_stable_offset == 3
        assert [(x.producer_id, x.first_offset) for x in p.aborted_transactions] == [(a, 0)]
        write_markers(c, b, True, {"keep": [0]})
    assert confluent_read(broker.bootstrap, "keep", "read_committed") == [
        b"plain",
        b"open",
        b"later",
    ]


def test_idle_producers_expire_unless_their_transaction_is_open(tmp_path) -> None:
    """producer.id.expiration.ms: DescribeProducers stops listing a producer idle that long
    (its state is forgotten, as Kafka's leaders and followers forget it), except one whose
    transaction is still open here."""
    from kafkapy.testing import BrokerProcess

    proc = BrokerProcess(
        tmp_path / "b",
        {
            "transaction.partition.verification.enable": "false",
            "producer.id.expiration.ms": "1000",
            "producer.id.expiration.check.interval.ms": "200",
        },
    ).start()
    try:
        with RawClient(proc.bootstrap) as c:
            create_topic(c, "exp")
            idle, open_txn = producer_id(c), producer_id(c)
            plain = batch([b"i"], producer_id=idle, producer_epoch=0, base_sequence=0)
            assert produce(c, "exp", plain).error_code == 0
            assert produce(c, "exp", txn_batch(open_txn, 0, [b"t"]), "t").error_code == 0
            assert set(describe_producers(c, "exp")) == {idle, open_txn}
            deadline = time.monotonic() + 15
            while set(describe_producers(c, "exp")) != {open_txn}:
                assert time.monotonic() < deadline, "the idle producer did not expire"
                time.sleep(0.2)
            # a producer forgotten starts afresh: any sequence is taken as its first
            later = batch([b"j"], producer_id=idle, producer_epoch=0, base_sequence=7)
            assert produce(c, "exp", later).error_code == 0
    finally:
        assert proc.stop() == 0


def test_console_consumer_isolation_level(broker) -> None:
    import sys

    with RawClient(broker.bootstrap) as c:
        committed, everything = build_log(c, "cc")
    root = Path(__file__).resolve().parents[1]
    # the flag, or else a consumer property (Kafka's ConsoleConsumer merges them so), or else
    # Kafka's default, read_uncommitted
    for level, expected in (
        (["--isolation-level", "read_committed"], committed),
        (["--command-property", "isolation.level=read_committed"], committed),
        ([], everything),
    ):
        out = subprocess.run(
            [sys.executable, "-m", "kafkapy.cli.main", "console-consumer"]
            + ["--bootstrap-server", broker.bootstrap, "--topic", "cc", "--from-beginning"]
            + level
            + ["--max-messages", str(len(expected)), "--timeout-ms", "20000"],
            capture_output=True,
            timeout=60,
            cwd=root,
        )
        assert out.stdout.split() == expected, out.stderr.decode()[-2000:]


def test_access_log_job_passes_isolation_level_to_its_source() -> None:
    from kafkapy.pipelines.access_log_job import _read_options, job_config, parse_args

    cfg = job_config(
        parse_args(["--bootstrap-server", "h:1", "--isolation-level", "read_committed"])
    )
    assert _read_options(cfg)["kafka.isolation.level"] == "read_committed"
    assert "kafka.isolation.level" not in _read_options(
        job_config(parse_args(["--bootstrap-server", "h:1"]))
    )


def test_java_console_consumer_read_committed(broker) -> None:
    jvm.require_kafka_jvm()
    with RawClient(broker.bootstrap) as c:
        committed, _ = build_log(c, "javatx")
    out = subprocess.run(
        jvm.java_command("org.apache.kafka.tools.consumer.ConsoleConsumer")
        + ["--bootstrap-server", broker.bootstrap, "--topic", "javatx", "--from-beginning"]
        + ["--isolation-level", "read_committed", "--max-messages", str(len(committed))]
        + ["--timeout-ms", "30000"],
        capture_output=True,
        timeout=120,
    )
    assert out.stdout.split() == committed, out.stderr[-2000:]


def test_unexpected_marker_failure_answers_every_partition(tmp_path, monkeypatch) -> None:
    """An unexpected exception in the WriteTxnMarkers handler is answered (Kafka's
    getErrorResponse): each marker's producer id and partitions with UNKNOWN_SERVER_ERROR, so a
    coordinator retries those markers instead of reconnecting."""
    from kafkapy.testing import BrokerProcess

    monkeypatch.setenv("KAFKAPY_TEST_FAIL_APIS", "WriteTxnMarkers")
    proc = BrokerProcess(tmp_path / "broker").start()
    monkeypatch.delenv("KAFKAPY_TEST_FAIL_APIS")
    try:
        with RawClient(proc.bootstrap) as c:
            got = write_markers(c, 77, True, {"x": [0, 3]})
        assert got == {("x", 0): -1, ("x", 3): -1}
    finally:
        assert proc.stop() == 0
