"""confluent-kafka (librdkafka) against a real kafkapy broker: admin, idempotent producer,
compression, acks, and consumption from earliest, latest, an offset and a timestamp."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap, name, partitions=1):
    client = admin(bootstrap)  # must outlive the future
    futures = client.create_topics([NewTopic(name, partitions, 1)])
    futures[name].result(timeout=15)


def consumer(bootstrap):
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "unused-no-commits",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
        }
    )


def read(c, n, timeout=15.0):
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        out.append(msg)
    return out


def produce(bootstrap, topic, records, **conf):
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    reports = []

    def on_delivery(err, msg):
        reports.append((err, msg.offset() if err is None else None))

    for key, value, headers, ts in records:
        extra = {"timestamp": ts} if ts is not None else {}
        p.produce(topic, key=key, value=value, headers=headers, on_delivery=on_delivery, **extra)
    assert p.flush(20) == 0
    return reports


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_idempotent_round_trip(broker, codec):
    topic = f"cf-{codec}"
    create_topic(broker.bootstrap, topic)
    base = int(time.time() * 1000) - 5000
    records = []
    for i in range(300):
        key = None if i % 5 == 0 else f"k{i}".encode()
        value = None if i % 13 == 0 else b"v" * (i % 50) + str(i).encode()
        headers = [("a", b"1"), ("b", None)] if i % 3 == 0 else None
        records.append((key, value, headers, base + i))
    reports = produce(
        broker.bootstrap,
        topic,
        records,
        **{
            "enable.idempotence": True,
            "compression.type": codec,
            "acks": "all",
        },
    )
    assert [e for e, _ in reports if e is not None] == []
    assert sorted(o for _, o in reports) == list(range(300))

    c = consumer(broker.bootstrap)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        msgs = read(c, 300)
    finally:
        c.close()
    assert [m.offset() for m in msgs] == list(range(300))
    for m, (key, value, headers, ts) in zip(msgs, records, strict=True):
        assert m.key() == key
        assert m.value() == value
        assert (m.headers() or None) == headers
        assert m.timestamp()[1] == ts


@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_acks_levels(broker, acks):
    topic = f"cf-acks-{acks}"
    create_topic(broker.bootstrap, topic)
    reports = produce(
        broker.bootstrap,
        topic,
        [(None, f"m{i}".encode(), None, None) for i in range(100)],
        acks=acks,
    )
    assert all(e is None for e, _ in reports)
    c = consumer(broker.bootstrap)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        msgs = read(c, 100)
    finally:
        c.close()
    assert [m.value() for m in msgs] == [f"m{i}".encode() for i in range(100)]


def test_positions_offset_latest_timestamp(broker):
    topic = "cf-positions"
    create_topic(broker.bootstrap, topic, partitions=2)
    base = int(time.time() * 1000) - 60_000
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(40):
        p.produce(topic, value=str(i).encode(), partition=1, timestamp=base + i * 100)
    assert p.flush(15) == 0

    c = consumer(broker.bootstrap)
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 1), timeout=10)
        assert (low, high) == (0, 40)
        found = c.offsets_for_times([TopicPartition(topic, 1, base + 2050)], timeout=10)
        assert found[0].offset == 21
        c.assign([TopicPartition(topic, 1, 35)])
        assert [m.value() for m in read(c, 5)] == [str(i).encode() for i in range(35, 40)]
        c.assign([TopicPartition(topic, 1, OFFSET_END)])
        deadline = time.monotonic() + 2  # let the consumer resolve END before producing
        while time.monotonic() < deadline:
            assert c.poll(0.2) is None
        p.produce(topic, value=b"after", partition=1)
        assert p.flush(15) == 0
        msgs = read(c, 1)
        assert [(m.offset(), m.value()) for m in msgs] == [(40, b"after")]
    finally:
        c.close()


def test_admin_metadata_and_configs(broker):
    create_topic(broker.bootstrap, "cf-admin", partitions=3)
    a = admin(broker.bootstrap)
    md = a.list_topics(timeout=10)
    assert len(md.topics["cf-admin"].partitions) == 3
    assert md.cluster_id
    from confluent_kafka.admin import ConfigResource

    res = ConfigResource(ConfigResource.Type.TOPIC, "cf-admin")
    configs = a.describe_configs([res])[res].result(timeout=10)
    assert configs["cleanup.policy"].value == "delete"
    assert configs["segment.bytes"].value == "1073741824"
