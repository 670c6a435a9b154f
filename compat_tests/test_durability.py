"""Acknowledged data is never lost: kill -9 the broker under an acks=all idempotent producer,
restart it, and every acknowledged record is there exactly once, with no corrupt tail."""

from __future__ import annotations

import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def test_kill_9_under_load_loses_nothing_acknowledged(broker):
    topic = "durable"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    acked: list[bytes] = []
    failed: list[bytes] = []
    stop = threading.Event()

    def on_delivery(err, msg):
        (failed if err is not None else acked).append(msg.value())

    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 2,
            "message.timeout.ms": 60000,
            "reconnect.backoff.max.ms": 200,
        }
    )

    def run():
        i = 0
        while not stop.is_set():
            try:
                producer.produce(topic, value=f"rec-{i:08d}".encode(), on_delivery=on_delivery)
                i += 1
            except BufferError:
                producer.poll(0.05)
            producer.poll(0)
            if i % 200 == 0:
                time.sleep(0.005)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while len(acked) < 3000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acked) >= 3000, "producer made no progress"
    broker.kill()
    acked_before_kill = len(acked)
    time.sleep(0.5)
    broker.start()
    deadline = time.monotonic() + 30
    while len(acked) < acked_before_kill + 2000 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    t.join()
    assert producer.flush(60) == 0
    assert len(acked) >= acked_before_kill + 2000, "producer did not resume after restart"

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "verify", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    seen: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(seen) < high and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None:
            assert msg.error() is None, msg.error()
            seen.append(msg.value())
    consumer.close()
    assert len(seen) == high
    counts: dict[bytes, int] = {}
    for v in seen:
        counts[v] = counts.get(v, 0) + 1
    missing = [v for v in acked if v not in counts]
    dupes = [v for v, n in counts.items() if n > 1]
    assert missing == [], f"{len(missing)} acknowledged records lost, e.g. {missing[:3]}"
    assert dupes == [], f"{len(dupes)} records duplicated, e.g. {dupes[:3]}"


def test_torn_tail_is_truncated_on_restart(broker):
    topic = "torn"
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
    for i in range(100):
        p.produce(topic, value=f"r{i}".encode())
    assert p.flush(20) == 0
    broker.kill()
    log_file = broker.data_dir / "logs" / f"{topic}-0" / ("0" * 20 + ".log")
    with open(log_file, "ab") as f:  # a batch header cut short, as a crash mid-write leaves
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"\xde\xad")
    (broker.data_dir / "logs" / f"{topic}-0" / ("0" * 20 + ".index")).unlink()
    broker.start()
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
    offsets = []
    p.produce(topic, value=b"next", on_delivery=lambda err, msg: offsets.append(msg.offset()))
    assert p.flush(20) == 0
    assert offsets == [100]
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "torn",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.monotonic() + 20
    while len(got) < 101 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None:
            assert m.error() is None
            got.append(m.value())
    c.close()
    assert got == [f"r{i}".encode() for i in range(100)] + [b"next"]
