"""Helpers for the transaction tests with real clients: reading a topic to its end with either
isolation level, producing input, and one consume-transform-produce step that recovers from
errors as an exactly-once application must (abort and rewind to the committed offsets)."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

# small internal topics keep broker start and topic creation fast
BROKER = {
    "transaction.state.log.num.partitions": "3",
    "offsets.topic.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "300",
}


def create_topics(bootstrap: str, *names: str, partitions: int = 1, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, partitions, 1, config=config) for n in names])
    for f in futures.values():
        f.result(timeout=30)


def read_all(
    bootstrap: str, topic: str, isolation: str, partitions: int = 1, timeout: float = 20.0
) -> list[bytes]:
    """Every value of ``topic`` up to the end (the last stable offset for read_committed), in
    partition then offset order."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4()}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        got: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        done: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(done) < partitions and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    done.add(m.partition())
                continue
            got[m.partition()].append(m.value())
        assert len(done) == partitions, f"{topic}: end not reached in {timeout}s"
        return [v for p in range(partitions) for v in got[p]]
    finally:
        c.close()


def produce_input(bootstrap: str, topic: str, n: int, partitions: int = 1) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for i in range(n):
        p.produce(topic, value=b"%d" % i, partition=i % partitions)
    assert p.flush(30) == 0


def rewind(consumer: Consumer) -> None:
    """Back to the committed offsets (what the last committed transaction consumed)."""
    assignment = consumer.assignment()
    if not assignment:
        return
    for tp in consumer.committed(assignment, timeout=20):
        consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, OFFSET_BEGINNING)))


def transform_batch(
    consumer: Consumer,
    producer: Producer,
    out_topic: str,
    *,
    before_commit=None,
    batch: int = 20,
) -> int:
    """Consume up to ``batch`` records and, in one transaction, produce their transformation
    and commit the consumed offsets. Returns how many records the committed transaction
    covered (0 when the transaction was aborted and the consumer rewound)."""
    msgs = [m for m in consumer.consume(batch, 1.0) if not m.error()]
    if not msgs:
        return 0
    producer.begin_transaction()
    try:
        for m in msgs:
            producer.produce(out_topic, value=b"x" + m.value(), partition=m.partition())
        producer.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30
        )
        if before_commit is not None:
            before_commit()
        while True:
            try:
                producer.commit_transaction(30)
                return len(msgs)
            except KafkaException as e:
                if not e.args[0].retriable() or e.args[0].txn_requires_abort():
                    raise
    except KafkaException as e:
        if not e.args[0].txn_requires_abort():
            raise
        producer.abort_transaction(30)
        rewind(consumer)
        return 0
