#!/usr/bin/env python
"""Throughput of the Spark pieces against a fresh local kafkapy broker, printed as a table.

    .venv/bin/python benchmarks/spark.py [--records 1000000] [--lines 50000]
        [--partitions 4] [--master local[*]]

1. batch read: `--records` 100-byte records produced with confluent-kafka, then
   spark.read.format("kafkapy") ... .count() (warm: the second of two reads is timed);
2. pipeline: `--lines` generated access-log lines through access_log_job with
   Trigger.AvailableNow (both queries: windows + dead letters), timed from start to finish.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--lines", type=int, default=50_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--master", default="local[*]")
    a = ap.parse_args()

    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafkapy.pipelines.access_log_generator import AccessLogGenerator
    from kafkapy.pipelines.access_log_job import JobConfig, session, start
    from kafkapy.spark import register
    from kafkapy.testing import BrokerProcess

    tmp = Path(tempfile.mkdtemp(prefix="kafkapy-spark-bench-"))
    broker = BrokerProcess(tmp / "broker")
    broker.start()
    rows = []
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic("bench", a.partitions, 1),
                                      NewTopic("access-logs", a.partitions, 1)]).values():
            f.result(10)
        p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True,
                      "linger.ms": 20, "batch.size": 1_000_000, "compression.type": "lz4"})
        value = b"x" * 100
        t = time.perf_counter()
        for i in range(a.records):
            while True:
                try:
                    p.produce("bench", value=value, key=str(i).encode())
                    break
                except BufferError:
                    p.poll(0.05)
        p.flush(120)
        rows.append(("produce (confluent-kafka)", a.records, time.perf_counter() - t))

        os.environ.setdefault("SPARK_SHUFFLE_PARTITIONS", str(a.partitions))
        spark = session(a.master, app="kafkapy-bench", extra={"spark.ui.enabled": "false"})
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)

        def count() -> int:
            return (spark.read.format("kafkapy")
                    .option("kafka.bootstrap.servers", broker.bootstrap)
                    .option("subscribe", "bench").load().count())

        t = time.perf_counter()
        n = count()
        rows.append(("batch read, cold (kafkapy source)", n, time.perf_counter() - t))
        t = time.perf_counter()
        n = count()
        rows.append(("batch read, warm (kafkapy source)", n, time.perf_counter() - t))

        gen = AccessLogGenerator(seed=1, malformed_fraction=0.02)
        lines = gen.lines(a.lines, datetime.now(UTC) - timedelta(minutes=30),
                          timedelta(minutes=20))
        for ln in lines:
            while True:
                try:
                    p.produce("access-logs", value=ln.raw)
                    break
                except BufferError:
                    p.poll(0.05)
        p.flush(120)
        cfg = JobConfig(bootstrap=broker.bootstrap, parquet=str(tmp / "pq"),
                        checkpoint=str(tmp / "ckpt"))
        t = time.perf_counter()
        queries = start(spark, cfg, available_now=True)
        for q in queries:
            q.awaitTermination()
        rows.append(("access-log pipeline (both queries)", a.lines, time.perf_counter() - t))
        spark.stop()
    finally:
        broker.stop()

    print(f"\n| {'measurement':<38} | {'records':>9} | {'seconds':>8} | {'records/s':>10} |")
    print(f"| {'-' * 38} | {'-' * 9}:| {'-' * 8}:| {'-' * 10}:|")
    for name, n, secs in rows:
        print(f"| {name:<38} | {n:>9} | {secs:>8.2f} | {n / secs:>10.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
