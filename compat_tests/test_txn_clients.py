"""Transactions end to end with real clients against one broker: confluent-kafka and
kafka-python transactional producers committing and aborting, read_committed and
read_uncommitted consumers, consume-transform-produce with send_offsets_to_transaction exactly
once (also across a kill -9 of the broker in the middle of a transaction), zombie fencing,
the transaction timeout, a hanging transaction found and aborted with kafka-transactions.sh,
and compaction of a topic with aborted transactions."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KTopicPartition
from kafka.structs import OffsetAndMetadata

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.testing import BrokerProcess

from .rawclient import RawClient
from .txn_clients import BROKER, create_topics, produce_input, read_all, transform_batch
from .txn_raw import produce, producer_id


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory):
    proc = BrokerProcess(tmp_path_factory.mktemp("txn-broker"), BROKER)
    proc.start()
    yield proc
    code = proc.stop()
    assert code == 0, f"broker did not shut down cleanly (exit {code}):\n{proc.log_text()[-3000:]}"


def txn_producer(bootstrap: str, txn_id: str, **conf) -> Producer:
    p = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, **conf}
    )
    p.init_transactions(30)
    return p


def open_transaction(bootstrap: str, txn_id: str, topic: str, value: bytes, **conf) -> Producer:
    """A transactional producer whose transaction holds ``value`` on ``topic``, left open."""
    p = txn_producer(bootstrap, txn_id, **conf)
    p.begin_transaction()
    p.produce(topic, value=value)
    assert p.flush(30) == 0
    return p


def kafka_python_read(bootstrap: str, topic: str, isolation: str, expected: int) -> list[bytes]:
    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        consumer_timeout_ms=3000,
    )
    try:
        c.assign([KTopicPartition(topic, 0)])
        out = []
        deadline = time.monotonic() + 20
        while len(out) < expected and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=500).values():
                out += [r.value for r in recs]
        time.sleep(0.3)  # nothing more may come
        for recs in c.poll(timeout_ms=300).values():
            out += [r.value for r in recs]
        return out
    finally:
        c.close()


def test_confluent_commit_and_abort(txn_broker):
    b = txn_broker.bootstrap
    create_topics(b, "cf")
    p = txn_producer(b, "cf-app")
    p.begin_transaction()
    for i in range(5):
        p.produce("cf", value=b"c%d" % i)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(3):
        p.produce("cf", value=b"a%d" % i)
    assert p.flush(30) == 0  # on the log, then aborted
    p.abort_transaction(30)
    p.begin_transaction()
    p.produce("cf", value=b"last")
    p.commit_transaction(30)
    committed = [b"c0", b"c1", b"c2", b"c3", b"c4", b"last"]
    everything = committed[:5] + [b"a0", b"a1", b"a2", b"last"]
    assert read_all(b, "cf", "read_committed") == committed
    assert read_all(b, "cf", "read_uncommitted") == everything
    assert kafka_python_read(b, "cf", "read_committed", 6) == committed
    assert kafka_python_read(b, "cf", "read_uncommitted", 9) == everything


def test_kafka_python_transactional_producer(txn_broker):
    b = txn_broker.bootstrap
    create_topics(b, "kp")
    p = KafkaProducer(bootstrap_servers=b, transactional_id="kp-app")
    try:
        p.init_transactions()
        p.begin_transaction()
        p.send("kp", b"k1")
        p.send("kp", b"k2")
        p.commit_transaction()
        p.begin_transaction()
        p.send("kp", b"dropped")
        p.flush()
        p.abort_transaction()
        p.begin_transaction()
        p.send("kp", b"k3")
        p.commit_transaction()
    finally:
        p.close()
    assert read_all(b, "kp", "read_committed") == [b"k1", b"k2", b"k3"]
    assert read_all(b, "kp", "read_uncommitted") == [b"k1", b"k2", b"dropped", b"k3"]


def test_kafka_python_consume_transform_produce(txn_broker):
    b = txn_broker.bootstrap
    create_topics(b, "kin", "kout")
    produce_input(b, "kin", 30)
    c = KafkaConsumer(
        "kin",
        bootstrap_servers=b,
        group_id="kctp",
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    p = KafkaProducer(bootstrap_servers=b, transactional_id="kctp-app")
    try:
        p.init_transactions()
        done = 0
        deadline = time.monotonic() + 30
        while done < 30 and time.monotonic() < deadline:
            batches = c.poll(timeout_ms=500, max_records=10)
            if not batches:
                continue
            p.begin_transaction()
            offsets = {}
            for tp, recs in batches.items():
                for r in recs:
                    p.send("kout", b"x" + r.value)
                offsets[tp] = OffsetAndMetadata(recs[-1].offset + 1, "", -1)
                done += len(recs)
            p.send_offsets_to_transaction(offsets, c.group_metadata())
            p.commit_transaction()
    finally:
        p.close()
        c.close()
    assert sorted(read_all(b, "kout", "read_committed")) == sorted(b"x%d" % i for i in range(30))
    cc = Consumer({"bootstrap.servers": b, "group.id": "kctp", "isolation.level": "read_committed"})
    try:
        assert cc.committed([TopicPartition("kin", 0)], timeout=10)[0].offset == 30
    finally:
        cc.close()


def test_offsets_sent_in_a_transaction_are_visible_only_once_committed(txn_broker):
    """Offsets sent with send_offsets_to_transaction stay invisible while the transaction is
    open (kafka-python's OffsetFetch sees the previous commit; librdkafka read_committed asks
    for stable offsets and waits), are dropped by an abort and become the group's by a
    commit."""
    b = txn_broker.bootstrap
    create_topics(b, "vis")
    consumer = Consumer({"bootstrap.servers": b, "group.id": "vis", "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition("vis", 0, 2)], asynchronous=False)

    def committed() -> int:
        c = KafkaConsumer(bootstrap_servers=b, group_id="vis", enable_auto_commit=False)
        try:
            return c.committed(KTopicPartition("vis", 0))
        finally:
            c.close()

    def stable_read_waits() -> bool:
        c = Consumer(
            {"bootstrap.servers": b, "group.id": "vis", "isolation.level": "read_committed"}
        )
        try:
            c.committed([TopicPartition("vis", 0)], timeout=1)
        except KafkaException as e:
            return e.args[0].code() == KafkaError._TIMED_OUT
        finally:
            c.close()
        return False

    p = txn_producer(b, "vis-app")
    for end, expected in ((p.abort_transaction, 2), (p.commit_transaction, 7)):
        p.begin_transaction()
        p.send_offsets_to_transaction(
            [TopicPartition("vis", 0, 7)], consumer.consumer_group_metadata(), 30
        )
        assert committed() == 2 and stable_read_waits()
        end(30)
        deadline = time.monotonic() + 10  # the marker follows the answer to EndTxn
        while committed() != expected:
            assert time.monotonic() < deadline, f"committed offset is not {expected}"
            time.sleep(0.1)
    consumer.close()


def test_zombie_is_fenced(txn_broker):
    b = txn_broker.bootstrap
    create_topics(b, "zt")
    zombie = open_transaction(b, "zombie-app", "zt", b"zombie")
    fresh = txn_producer(b, "zombie-app")  # fences the zombie and aborts its transaction
    fresh.begin_transaction()
    fresh.produce("zt", value=b"fresh")
    fresh.commit_transaction(30)
    with pytest.raises(KafkaException) as e:
        zombie.commit_transaction(30)
    assert e.value.args[0].fatal(), e.value
    assert read_all(b, "zt", "read_committed") == [b"fresh"]
    assert read_all(b, "zt", "read_uncommitted") == [b"zombie", b"fresh"]


def describe_txn(bootstrap: str, txn_id: str):
    from kio.schema.describe_transactions.v0 import request as dq

    with RawClient(bootstrap) as c:
        (state,) = c.request(
            dq.DescribeTransactionsRequest(transactional_ids=(txn_id,))
        ).transaction_states
    return state


def test_transaction_timeout_aborts(txn_broker):
    b = txn_broker.bootstrap
    create_topics(b, "slow")
    p = open_transaction(b, "slow-app", "slow", b"late", **{"transaction.timeout.ms": 1000})
    first = describe_txn(b, "slow-app")
    assert first.transaction_state == "Ongoing"
    deadline = time.monotonic() + 15
    while describe_txn(b, "slow-app").transaction_state != "CompleteAbort":
        assert time.monotonic() < deadline, "the timed-out transaction was not aborted"
        time.sleep(0.1)
    # aborted with a bumped epoch: the producer's commit fails
    assert describe_txn(b, "slow-app").producer_epoch == first.producer_epoch + 1
    with pytest.raises(KafkaException):
        p.commit_transaction(30)
    other = txn_producer(b, "slow-other")
    other.begin_transaction()
    other.produce("slow", value=b"after")
    other.commit_transaction(30)
    assert read_all(b, "slow", "read_committed") == [b"after"]


def test_idle_transactional_ids_expire_and_stay_expired_after_a_restart(tmp_path):
    """transactional.id.expiration.ms: an id idle that long is removed (a tombstone in
    __transaction_state, so a restart does not bring it back); an id with a transaction open
    is not, however long it stays open."""
    broker = BrokerProcess(
        tmp_path / "b",
        {
            **BROKER,
            "transactional.id.expiration.ms": "1500",
            "transaction.remove.expired.transaction.cleanup.interval.ms": "300",
        },
    ).start()
    try:
        b = broker.bootstrap
        create_topics(b, "idle")
        done = txn_producer(b, "idle-app")
        done.begin_transaction()
        done.produce("idle", value=b"x")
        done.commit_transaction(30)
        _busy = open_transaction(b, "busy-app", "idle", b"open")  # kept open while alive

        def listed() -> list[str]:
            out = cli(b, "list")
            assert out.returncode == 0, out.stderr
            return sorted(r[0] for r in rows(out.stdout))

        assert listed() == ["busy-app", "idle-app"]
        deadline = time.monotonic() + 20
        while listed() != ["busy-app"]:
            assert time.monotonic() < deadline, "the idle transactional id did not expire"
            time.sleep(0.3)
        broker.restart()
        assert listed() == ["busy-app"]
        assert describe_txn(b, "idle-app").error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND
        assert describe_txn(b, "busy-app").transaction_state == "Ongoing"
    finally:
        broker.stop()


def test_consume_transform_produce_exactly_once_across_kill_9(tmp_path):
    broker = BrokerProcess(tmp_path / "b", BROKER).start()
    try:
        b = broker.bootstrap
        create_topics(b, "in", "out", partitions=2)
        n = 200
        produce_input(b, "in", n, partitions=2)
        consumer = Consumer(
            {
                "bootstrap.servers": b,
                "group.id": "ctp",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
        consumer.subscribe(["in"])
        # librdkafka >= 2.10 re-bootstraps when every broker is down and may then hang in
        # send_offsets_to_transaction on the decommissioned group coordinator (its issue
        # #5511, whatever the broker); its recovery strategy "none" keeps the broker handles
        producer = txn_producer(b, "ctp-app", **{"metadata.recovery.strategy": "none"})
        crashed = []

        def crash():  # records and offsets of this transaction are on the log, not yet ended
            producer.flush(30)
            broker.kill()
            broker.start()
            crashed.append(True)

        done, rounds = 0, 0
        deadline = time.monotonic() + 90
        while done < n and time.monotonic() < deadline:
            rounds += 1
            hook = crash if rounds == 4 and not crashed else None
            done += transform_batch(consumer, producer, "out", before_commit=hook)
        consumer.close()
        assert crashed and done == n, (done, crashed)
        out = read_all(b, "out", "read_committed", partitions=2)
        assert sorted(out) == sorted(b"x%d" % i for i in range(n))  # each exactly once
        check = Consumer({"bootstrap.servers": b, "group.id": "ctp"})
        try:
            got = check.committed([TopicPartition("in", 0), TopicPartition("in", 1)], timeout=10)
            assert [tp.offset for tp in got] == [n // 2, n // 2]
        finally:
            check.close()
    finally:
        broker.stop()


def cli(bootstrap: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "transactions", "--bootstrap-server", bootstrap]
        + list(args),
        capture_output=True,
        text=True,
        timeout=60,
    )


def rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("\t")[:-1]] for line in text.splitlines()[1:]]


def test_hanging_transaction_found_and_aborted_with_the_tool(tmp_path):
    # a hanging transaction needs a write the coordinator never heard of: KIP-890 verification
    # (on by default) refuses those, so this broker runs without it
    broker = BrokerProcess(
        tmp_path / "b", {**BROKER, "transaction.partition.verification.enable": "false"}
    ).start()
    try:
        b = broker.bootstrap
        create_topics(b, "hang")
        # an open transaction its coordinator knows: not hanging
        app = open_transaction(b, "healthy-app", "hang", b"ongoing")
        an_hour_ago = int(time.time() * 1000) - 3_600_000
        with RawClient(b) as c:
            pid = producer_id(c)
            batch = encode_batch(
                [Record(0, an_hour_ago, None, b"stuck")],
                producer_id=pid,
                producer_epoch=0,
                base_sequence=0,
                is_transactional=True,
            )
            assert produce(c, "hang", batch, "lost-app").base_offset == 1
        assert read_all(b, "hang", "read_committed") == []  # the LSO is held at offset 0
        listed = cli(b, "list")
        assert listed.returncode == 0 and listed.stdout.split("\t")[:4] == [
            "TransactionalId",
            "Coordinator",
            "ProducerId",
            "TransactionState",
        ]
        assert [r[0] for r in rows(listed.stdout)] == ["healthy-app"]
        found = cli(b, "find-hanging", "--broker-id", "0", "--max-transaction-timeout", "30")
        assert found.returncode == 0, found.stderr
        assert rows(found.stdout) == [
            ["hang", "0", str(pid), "0", "-1", "1", str(an_hour_ago), "60"]
        ]
        producers = cli(b, "describe-producers", "--topic", "hang", "--partition", "0")
        assert sorted(r[5] for r in rows(producers.stdout)) == ["0", "1"]
        aborted = cli(b, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "1")
        assert aborted.returncode == 0 and aborted.stdout == "", aborted.stderr
        again = cli(b, "find-hanging", "--topic", "hang", "--max-transaction-timeout", "30")
        assert rows(again.stdout) == []
        missing = cli(b, "abort", "--topic", "hang", "--partition", "0", "--start-offset", "1")
        assert missing.returncode == 1  # Kafka's tool's line, with no prefix
        assert missing.stderr == (
            "Could not find any open transactions starting at offset 1 on partition hang-0\n"
        )
        unknown = cli(b, "describe", "--transactional-id", "lost-app")
        assert unknown.returncode == 1
        assert unknown.stderr == (
            "Failed to describe transaction state of transactional-id `lost-app`: "
            "DescribeTransactions request for transactionalId `lost-app` failed because the ID "
            "could not be found. Enable debug logging for additional detail.\n"
        )
        app.commit_transaction(30)
        assert read_all(b, "hang", "read_committed") == [b"ongoing"]
        described = cli(b, "describe", "--transactional-id", "healthy-app")
        assert rows(described.stdout)[0][4] == "CompleteCommit"
    finally:
        broker.stop()


def test_compaction_removes_aborted_transactions(tmp_path):
    broker = BrokerProcess(tmp_path / "b", {**BROKER, "log.cleaner.backoff.ms": "200"}).start()
    try:
        b = broker.bootstrap
        create_topics(
            b,
            "ctx",
            **{
                "cleanup.policy": "compact",
                "segment.bytes": "1000",
                "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "0",
            },
        )
        p = txn_producer(b, "compact-app")
        for value, keys, commit in (
            (b"c1", range(8), True),
            (b"ab", range(8), False),
            (b"c2", range(4), True),
            (b"ab2", range(4, 8), False),
        ):
            p.begin_transaction()
            for k in keys:
                p.produce("ctx", key=b"k%d" % k, value=value + bytes(40))
                assert p.flush(30) == 0  # one batch each: segments roll
            if commit:
                p.commit_transaction(30)
            else:
                p.abort_transaction(30)
        plain = Producer({"bootstrap.servers": b})
        plain.produce("ctx", key=b"pad", value=bytes(900))  # rolls the last segment
        plain.flush(30)
        want = {**{b"k%d" % k: b"c2" for k in range(4)}, **{b"k%d" % k: b"c1" for k in range(4, 8)}}
        deadline = time.monotonic() + 40
        while True:
            values = read_all(b, "ctx", "read_uncommitted")
            aborted_left = sum(v.startswith(b"ab") for v in values)
            if aborted_left == 0 and len(values) == len(want) + 1:
                break
            assert time.monotonic() < deadline, f"not compacted: {len(values)} records"
            time.sleep(0.5)
        c = Consumer(
            {
                "bootstrap.servers": b,
                "group.id": "ctx-check",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        try:
            c.assign([TopicPartition("ctx", 0, 0)])
            latest: dict[bytes, bytes] = {}
            for _ in range(40):
                for m in c.consume(100, 0.3):
                    if not m.error():
                        latest[m.key()] = m.value()[:2]
                if len(latest) == len(want) + 1:
                    break
        finally:
            c.close()
        assert {k: v for k, v in latest.items() if k != b"pad"} == want
    finally:
        broker.stop()
