"""confluent-kafka clients for the tests on a kafkapy cluster: a background acks=all idempotent
producer that records what was acknowledged, reading every partition of a topic to its high
watermark, and the check that every acknowledged record is there exactly once."""

from __future__ import annotations

import itertools
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from kafkapy.testing.cluster import Cluster, wait_for

_producer_ids = itertools.count()


class ProducerThread:
    """An acks=all idempotent confluent-kafka producer writing continuously to ``topic``."""

    def __init__(self, cluster: Cluster, topic: str) -> None:
        self.cluster = cluster
        self.topic = topic
        self.acked: list[tuple[int, int, bytes]] = []
        self.errors: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.prefix = f"{topic}-{next(_producer_ids)}"

    def _run(self) -> None:
        p = Producer(
            {
                "bootstrap.servers": self.cluster.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 60000,
                "retry.backoff.ms": 100,
            }
        )

        def cb(err, msg):
            if err is None:
                self.acked.append((msg.partition(), msg.offset(), msg.value()))
            else:
                self.errors.append(err)

        i = 0
        while not self._stop.is_set():
            try:
                p.produce(self.topic, value=f"{self.prefix}-{i}".encode(), callback=cb)
            except BufferError:
                p.poll(0.1)
                continue
            p.poll(0)
            i += 1
            time.sleep(0.002)
        p.flush(60)

    def __enter__(self) -> ProducerThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(90)

    def wait_more(self, n: int, what: str, timeout: float = 30.0) -> None:
        before = len(self.acked)
        wait_for(lambda: len(self.acked) >= before + n, timeout=timeout, what=what)


def consume_all(cluster: Cluster, topic: str, partitions: int) -> list[tuple[int, int, bytes]]:
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": f"check-{time.time()}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    ends = {
        p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
        for p in range(partitions)
    }
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[tuple[int, int, bytes]] = []
    positions = dict.fromkeys(ends, 0)
    deadline = time.monotonic() + 60
    while any(positions[p] < ends[p] for p in ends) and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        got.append((m.partition(), m.offset(), m.value()))
        positions[m.partition()] = m.offset() + 1
    c.close()
    return got


def assert_nothing_lost(cluster: Cluster, topic: str, partitions: int, acked) -> None:
    got = consume_all(cluster, topic, partitions)
    seen: dict[tuple[int, int], bytes] = {}
    for p, off, v in got:
        assert (p, off) not in seen
        seen[(p, off)] = v
    values = [v for _, _, v in got]
    assert len(values) == len(set(values)), "a record was written twice"
    for p, off, v in acked:
        assert seen.get((p, off)) == v, f"acknowledged record {p}/{off} lost"
