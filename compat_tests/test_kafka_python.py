"""kafka-python 3.x against a real kafkapy broker: admin, produce every way, consume every way."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


def create_topic(bootstrap, name, partitions=1, configs=None):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            [
                NewTopic(
                    name,
                    num_partitions=partitions,
                    replication_factor=1,
                    topic_configs=configs or {},
                )
            ]
        )
    finally:
        admin.close()


def consume_all(bootstrap, tp, expected, **kw):
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        group_id=None,
        consumer_timeout_ms=10000,
        **kw,
    )
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        out = []
        for rec in consumer:
            out.append(rec)
            if len(out) >= expected:
                break
        return out
    finally:
        consumer.close()


def test_broker_version_is_inferred_as_kafka_4_4s(broker):
    """kafka-python infers the release from the highest API versions it knows of: its table
    stops at 4.3 (DescribeLogDirs v5), which is also what it infers for Apache Kafka 4.4."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        assert admin._client.check_version() == (4, 3)
    finally:
        admin.close()


@pytest.mark.parametrize("codec", CODECS)
def test_produce_and_consume_round_trip(broker, codec):
    topic = f"rt-{codec or 'none'}"
    create_topic(broker.bootstrap, topic)
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap, compression_type=codec, acks="all", linger_ms=5
    )
    sent = []
    base_ts = int(time.time() * 1000) - 10_000
    for i in range(200):
        key = None if i % 7 == 0 else f"key-{i}".encode()
        value = (
            None
            if (i % 11 == 1 and key is not None)
            else (f"value-{i}-".encode() + bytes(range(256)) * (i % 3))
        )
        headers = [("h1", f"v{i}".encode()), ("empty", b"")] if i % 2 else []
        ts = base_ts + i
        fut = producer.send(topic, key=key, value=value, headers=headers, timestamp_ms=ts)
        sent.append((key, value, headers, ts, fut))
    producer.flush()
    offsets = [f.get(timeout=10).offset for *_, f in sent]
    assert offsets == list(range(200))
    producer.close()

    recs = consume_all(broker.bootstrap, TopicPartition(topic, 0), 200)
    assert [r.offset for r in recs] == list(range(200))
    for rec, (key, value, headers, ts, _) in zip(recs, sent, strict=True):
        assert rec.key == key
        assert rec.value == value
        assert list(rec.headers) == headers
        assert rec.timestamp == ts


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_acks(broker, acks):
    topic = f"acks-{acks}"
    create_topic(broker.bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=acks)
    for i in range(50):
        producer.send(topic, value=f"m{i}".encode())
    producer.flush()
    producer.close()
    recs = consume_all(broker.bootstrap, TopicPartition(topic, 0), 50)
    assert [r.value for r in recs] == [f"m{i}".encode() for i in range(50)]


def test_offsets_seek_and_timestamps(broker):
    topic = "positions"
    create_topic(broker.bootstrap, topic, partitions=3)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    base = int(time.time() * 1000) - 100_000
    for i in range(30):
        producer.send(topic, value=str(i).encode(), partition=1, timestamp_ms=base + i * 1000)
    producer.flush()
    producer.close()
    tp = TopicPartition(topic, 1)
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000
    )
    try:
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 30}
        found = consumer.offsets_for_times({tp: base + 12_500})
        assert found[tp].offset == 13
        assert found[tp].timestamp == base + 13_000
        assert consumer.offsets_for_times({tp: base + 10**9})[tp] is None
        consumer.assign([tp])
        consumer.seek(tp, 25)
        got = [r.value for r in consumer]
        assert got == [str(i).encode() for i in range(25, 30)]
        # latest: nothing new
        consumer.seek_to_end(tp)
        assert consumer.position(tp) == 30
    finally:
        consumer.close()
    assert consumer_partitions(broker.bootstrap, topic) == {0, 1, 2}


def consumer_partitions(bootstrap, topic):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        return consumer.partitions_for_topic(topic)
    finally:
        consumer.close()


def test_auto_create_on_metadata(broker):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    producer.send("auto-created", b"x").get(timeout=10)
    producer.close()
    assert consumer_partitions(broker.bootstrap, "auto-created") == {0}


def test_admin_describe_and_delete(broker):
    create_topic(broker.bootstrap, "to-delete", partitions=2, configs={"retention.ms": "1000"})
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        assert "to-delete" in admin.list_topics()
        desc = admin.describe_topics(["to-delete"])
        assert len(desc[0]["partitions"]) == 2
        admin.create_partitions({"to-delete": __import__("kafka").admin.NewPartitions(4)})
        desc = admin.describe_topics(["to-delete"])
        assert len(desc[0]["partitions"]) == 4
        admin.delete_topics(["to-delete"])
        assert "to-delete" not in admin.list_topics()
    finally:
        admin.close()


def test_log_append_time_topic(broker):
    create_topic(broker.bootstrap, "lat", configs={"message.timestamp.type": "LogAppendTime"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    before = int(time.time() * 1000)
    meta = producer.send("lat", b"v", timestamp_ms=1_000_000).get(timeout=10)
    after = int(time.time() * 1000)
    producer.close()
    assert before - 5 <= meta.timestamp <= after + 5
    (rec,) = consume_all(broker.bootstrap, TopicPartition("lat", 0), 1)
    assert rec.timestamp_type == 1
    assert rec.timestamp == meta.timestamp


def test_topics_and_data_survive_restart(broker):
    create_topic(broker.bootstrap, "kept", partitions=2)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for i in range(20):
        producer.send("kept", f"a{i}".encode(), partition=i % 2)
    producer.flush()
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    topic_id = admin.describe_topics(["kept"])[0].get("topic_id")
    admin.close()

    broker.restart()

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        desc = admin.describe_topics(["kept"])[0]
        assert desc.get("topic_id") == topic_id
        assert len(desc["partitions"]) == 2
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    assert producer.send("kept", b"after", partition=0).get(timeout=10).offset == 10
    producer.close()
    recs = consume_all(broker.bootstrap, TopicPartition("kept", 0), 11)
    assert [r.value for r in recs] == [f"a{i}".encode() for i in range(0, 20, 2)] + [b"after"]
