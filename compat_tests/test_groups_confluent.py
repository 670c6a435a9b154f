"""Consumer groups with confluent-kafka (librdkafka) against a real kafkapy broker: subscribe with
each assignment strategy, commits, and committed offsets across a restart and a kill -9."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

FAST = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "10",
}


def create_topic(bootstrap, name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(10)


def produce(bootstrap, topic, n, partitions):
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        p.produce(topic, value=str(i).encode(), partition=i % partitions)
    p.flush(10)


def consumer(bootstrap, group, **extra):
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 300,
        "topic.metadata.refresh.interval.ms": 1000,
    }
    conf.update(extra)
    return Consumer(conf)


def poll_all(consumers, until, timeout=30.0):
    """Poll every consumer in turn (librdkafka rebalances in the background) until ``until()``."""
    records = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            m = c.poll(0.05)
            if m is not None and m.error() is None:
                records.append(m)
        if until(records):
            return records
    raise AssertionError("timed out")


def owned_once(consumers, total):
    owned = [(tp.topic, tp.partition) for c in consumers for tp in c.assignment()]
    return len(owned) == total and len(set(owned)) == total


def balanced_and_caught_up(consumers, total, end):
    """Each consumer owns its share of the ``total`` partitions (no move still to come) and has
    consumed each of them to ``end``. A partition that moved has no position at its new owner
    until that owner fetched it (from the committed offset, else earliest), and commit() without
    offsets commits positions only: before this, a commit may leave a partition out."""
    if not owned_once(consumers, total):
        return False
    for c in consumers:
        owned = c.assignment()
        if len(owned) != total // len(consumers):
            return False
        if any(tp.offset != end for tp in c.position(owned)):
            return False
    return True


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
def test_group_rebalance_with_strategy(broker_factory, strategy):
    broker = broker_factory(FAST)
    bootstrap = broker.bootstrap
    create_topic(bootstrap, "events", 6)
    produce(bootstrap, "events", 60, 6)
    consumers = [
        consumer(bootstrap, "cg", **{"partition.assignment.strategy": strategy}) for _ in range(3)
    ]
    try:
        for c in consumers:
            c.subscribe(["events"])
        records = poll_all(
            consumers,
            lambda recs: (
                len({(m.partition(), m.offset()) for m in recs}) >= 60
                and balanced_and_caught_up(consumers, 6, 10)
            ),
        )
        assert len({(m.partition(), m.offset()) for m in records}) == 60
        for c in consumers:
            c.commit(asynchronous=False)  # each one's positions: 10 on each of its partitions
        leaver = consumers.pop()
        leaver.close()
        poll_all(consumers, lambda _: owned_once(consumers, 6))
        committed = consumers[0].committed([TopicPartition("events", p) for p in range(6)], 10)
        assert sum(tp.offset for tp in committed) == 60
    finally:
        for c in consumers:
            c.close()


def test_commit_offsets_with_metadata_and_resume(broker_factory):
    broker = broker_factory(FAST)
    bootstrap = broker.bootstrap
    create_topic(bootstrap, "t", 2)
    produce(bootstrap, "t", 20, 2)
    c = consumer(bootstrap, "resume")
    c.subscribe(["t"])
    got = poll_all([c], lambda recs: len(recs) >= 10)
    c.commit(asynchronous=False)  # positions of everything consumed
    c.close()
    c2 = consumer(bootstrap, "resume")
    c2.subscribe(["t"])
    rest = poll_all([c2], lambda recs: len(got) + len(recs) >= 20)
    c2.close()
    assert len(got) + len(rest) == 20
    assert not {(m.partition(), m.offset()) for m in got} & {
        (m.partition(), m.offset()) for m in rest
    }


def test_commit_metadata_and_leader_epoch_round_trip(broker_factory):
    broker = broker_factory(FAST)
    create_topic(broker.bootstrap, "m", 1)
    c = consumer(broker.bootstrap, "meta")
    tp = TopicPartition("m", 0, 3, metadata="checkpoint-A", leader_epoch=0)
    c.commit(offsets=[tp], asynchronous=False)
    [back] = c.committed([TopicPartition("m", 0)], 10)
    c.close()
    assert (back.offset, back.metadata, back.leader_epoch) == (3, "checkpoint-A", 0)


def _commit_and_check(broker, bootstrap, crash):
    create_topic(bootstrap, "dur", 3)
    c = consumer(bootstrap, "durable")
    offsets = [TopicPartition("dur", p, 10 + p) for p in range(3)]
    c.commit(offsets=offsets, asynchronous=False)
    c.close()
    if crash:
        broker.kill()
        broker.start()
    else:
        broker.restart()
    c = consumer(bootstrap, "durable")
    deadline = time.monotonic() + 20
    while True:
        try:
            back = c.committed([TopicPartition("dur", p) for p in range(3)], 5)
            break
        except Exception:  # coordinator loading after the restart: retry
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    c.close()
    assert [tp.offset for tp in back] == [10, 11, 12]


def test_offsets_survive_broker_restart(broker_factory):
    broker = broker_factory(FAST)
    _commit_and_check(broker, broker.bootstrap, crash=False)


def test_acknowledged_commits_survive_kill_9(broker_factory):
    broker = broker_factory(FAST)
    _commit_and_check(broker, broker.bootstrap, crash=True)
