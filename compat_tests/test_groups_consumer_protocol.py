"""The new consumer protocol (KIP-848) with librdkafka (confluent-kafka, group.protocol=consumer)
against a real kafkapy broker: server-side assignment, members joining and leaving, commits with
member epochs, static membership, the range assignor, admin describe/list, and a restart.

kafka-python (3.0.x) has no KIP-848 support (it never sends ConsumerGroupHeartbeat), so only
librdkafka is exercised here; librdkafka needs nothing beyond ConsumerGroupHeartbeat in
ApiVersions (no group.version feature flag)."""

from __future__ import annotations

import subprocess
import sys
import time

from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupType,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from .test_groups_confluent import create_topic, produce

FAST = {
    "offsets.topic.num.partitions": "5",
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "1000",
}


def new_consumer(bootstrap, group, **extra):
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 1000,
    }
    conf.update(extra)
    return Consumer(conf)


def drain(consumers, seconds, records=None):
    records = [] if records is None else records
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for c in consumers:
            m = c.poll(0.05)
            if m is not None and m.error() is None:
                records.append(m)
    return records


def wait_owned_once(consumers, total, timeout=30.0, records=None):
    """Poll until every partition is owned by exactly one consumer (records polled meanwhile go
    to ``records``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            m = c.poll(0.05)
            if m is not None and m.error() is None and records is not None:
                records.append(m)
        owned = [(tp.topic, tp.partition) for c in consumers for tp in c.assignment()]
        if (
            len(owned) == total
            and len(set(owned)) == total
            and all(c.assignment() for c in consumers)
        ):
            return owned
    raise AssertionError(
        f"assignment did not settle: {[[tp.partition for tp in c.assignment()] for c in consumers]}"
    )


def test_consumer_protocol_rebalances_commits_and_survives_restart(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, "events", 6)
    produce(bs, "events", 60, 6)
    consumers = [new_consumer(bs, "cg")]
    records: list = []
    try:
        consumers[0].subscribe(["events"])
        wait_owned_once(consumers, 6, records=records)
        for _ in range(2):  # members join one at a time; partitions move without overlap
            c = new_consumer(bs, "cg")
            c.subscribe(["events"])
            consumers.append(c)
            wait_owned_once(consumers, 6, records=records)
        assert sorted(len(c.assignment()) for c in consumers) == [2, 2, 2]
        drain(consumers, 3, records)
        assert {(m.partition(), m.offset()) for m in records} == {
            (p, o) for p in range(6) for o in range(10)
        }
        for c in consumers:
            c.commit(asynchronous=False)
        admin = AdminClient({"bootstrap.servers": bs})
        desc = admin.describe_consumer_groups(["cg"])["cg"].result(10)
        assert desc.type == ConsumerGroupType.CONSUMER
        assert desc.state == ConsumerGroupState.STABLE
        assert len(desc.members) == 3
        assert sorted(len(m.assignment.topic_partitions) for m in desc.members) == [2, 2, 2]
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(10)
        assert [g.group_id for g in listed.valid] == ["cg"]
        assert admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(10).valid == []
        # a member leaves politely: the two others take its partitions over
        consumers.pop().close()
        wait_owned_once(consumers, 6)
        for c in consumers:
            c.close()
        consumers = []
        broker.restart()
        c = new_consumer(bs, "cg")
        consumers = [c]
        back = c.committed([TopicPartition("events", p) for p in range(6)], timeout=20)
        assert [tp.offset for tp in back] == [10] * 6
        c.subscribe(["events"])
        wait_owned_once(consumers, 6)
        assert drain(consumers, 1.5) == []  # resumes after the committed offsets
    finally:
        for c in consumers:
            c.close()


KILLABLE = """
import sys
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
              "group.protocol": "consumer", "enable.auto.commit": False})
c.subscribe([sys.argv[3]])
while True:
    c.poll(0.1)
    if c.assignment():
        print("assigned", flush=True)
"""


def test_killed_member_is_fenced_after_session_timeout(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, "events", 4)
    a = new_consumer(bs, "cg")
    victim = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, bs, "cg", "events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert victim.stdout.readline().strip() == b"assigned"
        a.subscribe(["events"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(a.assignment()) != 2:
            a.poll(0.05)
        assert len(a.assignment()) == 2
        victim.kill()  # kill -9: no leave, the session timeout must notice
        victim.wait()
        start = time.monotonic()
        while time.monotonic() < start + 30 and len(a.assignment()) < 4:
            a.poll(0.1)
        assert len(a.assignment()) == 4
        assert time.monotonic() - start >= 4  # not before the 6 s session timeout
    finally:
        a.close()
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def test_static_member_restart_keeps_assignment(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, "events", 6)
    s1 = new_consumer(bs, "cg", **{"group.instance.id": "one"})
    s2 = new_consumer(bs, "cg", **{"group.instance.id": "two"})
    try:
        for c in (s1, s2):
            c.subscribe(["events"])
        wait_owned_once([s1, s2], 6)
        before = sorted(tp.partition for tp in s1.assignment())
        admin = AdminClient({"bootstrap.servers": bs})
        epoch = admin.describe_consumer_groups(["cg"])["cg"].result(10)
        s1.close()
        s1 = new_consumer(bs, "cg", **{"group.instance.id": "one"})
        s1.subscribe(["events"])
        wait_owned_once([s1, s2], 6)
        assert sorted(tp.partition for tp in s1.assignment()) == before
        after = admin.describe_consumer_groups(["cg"])["cg"].result(10)
        assert {m.group_instance_id for m in after.members} == {"one", "two"}
        assert epoch.state == after.state == ConsumerGroupState.STABLE
    finally:
        s1.close()
        s2.close()


def test_range_assignor_by_request(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, "left", 4)
    create_topic(bs, "right", 4)
    consumers = [new_consumer(bs, "cg", **{"group.remote.assignor": "range"}) for _ in range(2)]
    try:
        for c in consumers:
            c.subscribe(["left", "right"])
        wait_owned_once(consumers, 8)
        for c in consumers:
            parts = {tp.topic: sorted([]) for tp in c.assignment()}
            for tp in c.assignment():
                parts[tp.topic].append(tp.partition)
            assert sorted(parts["left"]) == sorted(parts["right"])  # co-partitioned
            assert sorted(parts["left"]) in ([0, 1], [2, 3])
        admin = AdminClient({"bootstrap.servers": bs})
        desc = admin.describe_consumer_groups(["cg"])
        assert desc["cg"].result(10).partition_assignor == "range"
    finally:
        for c in consumers:
            c.close()
