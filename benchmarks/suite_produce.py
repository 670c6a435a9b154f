"""The suite's produce and kafka-python sections: confluent-kafka and raw pipelined Produce
throughput over sizes, acks, codecs and partitions, with the broker's CPU and peak RSS."""

from __future__ import annotations

import os
import resource
import time
from collections import Counter
from pathlib import Path

from common import create_topic, delete_topic, progress
from confluent_kafka import Producer
from raw_produce import raw_produce
from suite import MB, MiB, Results, Settings, pinned_broker

from kafkapy.testing.usage import measured


def producer_config(bootstrap: str, acks: str, codec: str, linger_ms: float = 5) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "linger.ms": linger_ms,
        "batch.size": MiB,
        "message.max.bytes": 2 * MiB,
        "compression.type": codec,
        "queue.buffering.max.kbytes": 256 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": False,
        "delivery.report.only.error": True,
    }


def own_cpu_s() -> float:
    """CPU seconds of this process, every thread (librdkafka's included), user and system."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def confluent_produce(bootstrap: str, topic: str, size: int, seconds: float, acks: str = "1",
                      codec: str = "none", partitions: int = 1) -> tuple[int, float]:
    """Produce for `seconds` as fast as the broker takes it; return (records acked, elapsed)."""
    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    p = Producer({**producer_config(bootstrap, acks, codec), "on_delivery": on_delivery})
    # compressible payloads, as real data is (random bytes would make lz4 pointless)
    base = (b"kafkapy benchmark record " * (size // 25 + 1))[:size]
    payloads = [bytes([i]) + base[1:] for i in range(16)]
    p.produce(topic, payloads[0], partition=0)  # metadata and connection before the clock
    p.flush(30)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    produce = p.produce
    while True:
        for i in range(1000):
            payload = payloads[i & 15]
            while True:
                try:
                    if partitions > 1:
                        produce(topic, payload, partition=i % partitions)
                    else:
                        produce(topic, payload)
                    break
                except BufferError:
                    p.poll(0.001)
        n += 1000
        if time.perf_counter() >= deadline:
            break
    left = p.flush(120)
    elapsed = time.perf_counter() - start
    if left or errors:
        raise RuntimeError(f"produce: {left} undelivered, errors: {Counter(errors).most_common(3)}")
    return n, elapsed


def record_run(res: Results, key: str, section: str, label: str, m: dict, records: int,
               size: int, ceiling_mb: str | None = None, rec_ceiling: str | None = None) -> None:
    mb = records * size / MB
    res.add(f"{key}.rec_s", section, label, "records/s", records / m["elapsed"], rec_ceiling)
    res.add(f"{key}.mb_s", section, label, "MB/s", mb / m["elapsed"], ceiling_mb)
    res.add(f"{key}.cpu_mb", section, label, "broker CPU ms/MB", m["cpu_s"] / mb * 1000,
            higher_is_better=False)
    res.add(f"{key}.user_mb", section, label, "broker user CPU ms/MB (Python)",
            m["cpu_user_s"] / mb * 1000, higher_is_better=False,
            note="the rest is kernel time: socket receive, page-cache write")
    res.add(f"{key}.rss", section, label, "broker peak RSS MB", m["peak_rss_mb"],
            higher_is_better=False)


def produce_matrix(s: Settings) -> list[tuple[int, str, str, int]]:
    return [(size, acks, codec, parts) for size in (100, 1024) for acks in ("1", "all")
            for codec in ("none", "lz4") for parts in (1, 8)]


# Deleted topics free their files at once, as the write ceiling's unlinks do: on these VMs
# writing into page cache that was never touched (or was handed back to the host) costs about
# 4 ms/MB in the kernel, into recently freed pages about 0.3 ms/MB, so with Kafka's default
# 60 s delay every run would write into fresh memory while the ceiling reuses its own.
PRODUCE_BROKER = {"file.delete.delay.ms": "0"}


def run_produce(s: Settings, res: Results, root: Path, rep: int) -> None:
    with pinned_broker(root, f"produce-{rep}", PRODUCE_BROKER) as b:
        for size in (100, 1024):
            topic = f"raw{size}"
            create_topic(b, topic, 1)
            label = f"produce {size} B, acks=1, none, 1 partition, raw pipelined Produce loop"
            progress(f"{label} ({s.produce_s:g} s)")
            with measured(b.usage()) as m:
                n, elapsed = raw_produce(b.bootstrap, topic, size, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, f"produce.raw.{size}", "produce", label, m, n, size, "ceil.write")
            delete_topic(b, topic)
        for i, (size, acks, codec, parts) in enumerate(produce_matrix(s)):
            topic = f"p{i}"
            create_topic(b, topic, parts)
            label = f"produce {size} B, acks={acks}, {codec}, {parts} partition{'s' * (parts > 1)}"
            progress(f"{label} ({s.produce_s:g} s)")
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, topic, size, s.produce_s, acks, codec,
                                               parts)
            m["elapsed"] = elapsed  # producer side: first record to last acknowledgement
            record_run(res, f"produce.{size}.{acks}.{codec}.{parts}", "produce", label, m, n, size,
                       "ceil.write", f"ceil.client.{size}")
            delete_topic(b, topic)


def kafka_python_produce(
    bootstrap: str, topic: str, size: int, seconds: float
) -> tuple[int, float]:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5, batch_size=MiB,
                      max_request_size=2 * MiB)
    payload = os.urandom(size)
    p.send(topic, payload).get(30)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(500):
            p.send(topic, payload)
        n += 500
    p.flush(120)
    elapsed = time.perf_counter() - start
    p.close()
    return n, elapsed


def run_kafka_python(s: Settings, res: Results, root: Path, rep: int) -> None:
    with pinned_broker(root, f"kafka-python-{rep}") as b:
        for size in (100, 1024):
            topic = f"kp{size}"
            create_topic(b, topic, 1)
            label = f"kafka-python produce {size} B, acks=1, none, 1 partition (reference)"
            progress(label)
            with measured(b.usage()) as m:
                n, elapsed = kafka_python_produce(b.bootstrap, topic, size, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, f"kafka_python.{size}", "produce", label, m, n, size, "ceil.write")
