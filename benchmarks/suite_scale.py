"""The suite's scale section: 1,000 partitions (CreateTopics, Metadata, Fetch, produce over
them), 1,000 idle connections, and consumer groups committing at once."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import latency
from common import create_topic, progress
from confluent_kafka import Consumer, KafkaException, TopicPartition
from raw_client import Raw, fetch_v11, metadata_v12_all, timed_roundtrips
from suite import CLIENT_CPU, MiB, Results, Settings, pinned_broker
from suite_produce import confluent_produce, own_cpu_s, record_run

from kafkapy.testing import BrokerProcess
from kafkapy.testing.usage import measured


def run_scale(s: Settings, res: Results, root: Path, rep: int) -> None:
    parts = 1000
    with pinned_broker(root, f"scale-{rep}", {"group.initial.rebalance.delay.ms": "0"}) as b:
        progress(f"scale: creating a topic of {parts} partitions")
        t = time.perf_counter()
        create_topic(b, "wide", parts)
        res.add("scale.create_ms", "scale", f"CreateTopics, {parts} partitions", "ms",
                (time.perf_counter() - t) * 1000, higher_is_better=False)
        c = Raw(b.bootstrap)
        ms, nbytes = timed_roundtrips(c, 3, 12, metadata_v12_all(), 30, flexible=True)
        res.add("scale.metadata_ms", "scale", f"Metadata v12, all topics ({parts} partitions)",
                "ms per request", ms, higher_is_better=False,
                note=f"{nbytes / 1024:.0f} KiB response")
        empty = fetch_v11("wide", dict.fromkeys(range(parts), 0), 50 * MiB, MiB, 0, 0)
        ms, _ = timed_roundtrips(c, 1, 11, empty, 30)
        res.add("scale.fetch_empty_ms", "scale", f"Fetch v11 of {parts} empty partitions",
                "ms per request", ms, higher_is_better=False)
        # one producer over 1, 8 and 1,000 partitions on this broker (issue 17's ratios)
        create_topic(b, "narrow", 1)
        create_topic(b, "eight", 8)
        for key, topic, n_parts in (("scale.produce_1", "narrow", 1),
                                    ("scale.produce_8", "eight", 8),
                                    ("scale.produce_wide", "wide", parts)):
            progress(f"scale: produce 100 B records over {n_parts} partition(s)")
            client0 = own_cpu_s()
            window = latency.Window({"client": os.getpid()})
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, topic, 100, s.produce_s,
                                               partitions=n_parts)
            client = own_cpu_s() - client0
            cores = window.close()
            m["elapsed"] = elapsed
            label = f"produce 100 B, acks=1, none, over {n_parts} partition(s)"
            record_run(res, key, "scale", label, m, n, 100)
            # which side bounds the rate: the producer's process (Python loop and librdkafka's
            # threads, all on the client core) against the broker's core
            res.add(f"{key}.client_us", "scale", label, "client CPU µs per record",
                    client / n * 1e6, higher_is_better=False,
                    note="producer process: Python loop and librdkafka threads")
            res.add(f"{key}.client_busy", "scale", label, "client process CPU s/s",
                    client / elapsed, higher_is_better=False)
            res.add(f"{key}.broker_busy", "scale", label, "broker CPU s/s",
                    m["cpu_s"] / elapsed, higher_is_better=False)
            res.add(f"{key}.client_core", "scale", label, "client core busy %",
                    cores.get(f"core{CLIENT_CPU}_busy", 0.0), higher_is_better=False,
                    note="all processes on the core")
            res.add(f"{key}.client_wait", "scale", label, "producer run-queue wait %",
                    cores["client_wait"], higher_is_better=False,
                    note="runnable but not running: other processes had its core")
        ms, nbytes = timed_roundtrips(c, 1, 11, empty, 10)
        res.add("scale.fetch_full_ms", "scale",
                f"Fetch v11 of {parts} partitions with data (1 MiB max each)", "ms per request",
                ms, higher_is_better=False, note=f"{nbytes / MiB:.1f} MiB response")
        c.close()

        progress("scale: 1,000 idle connections plus one busy producer")
        idle = []
        with measured(b.usage()) as m_conn:
            for _ in range(1000):
                r = Raw(b.bootstrap)
                r.roundtrip(18, 0, b"")  # ApiVersions v0: a real, served connection
                idle.append(r)
        res.add("scale.idle_rss", "scale", "1,000 idle connections open", "broker peak RSS MB",
                m_conn["peak_rss_mb"], higher_is_better=False,
                note=f"{m_conn['elapsed'] * 1000:.0f} ms to open and serve them")
        try:
            create_topic(b, "busy", 1)
            with measured(b.usage()) as m:
                n, elapsed = confluent_produce(b.bootstrap, "busy", 1024, s.produce_s)
            m["elapsed"] = elapsed
            record_run(res, "scale.idle_conns", "scale",
                       "produce 1024 B, acks=1, none, 1 partition, 1,000 idle connections open",
                       m, n, 1024, "ceil.write")
        finally:
            for r in idle:
                r.close()

        progress("scale: 10 consumer groups committing at once")
        create_topic(b, "groups", 10)
        run_commits(b, res, s.commit_s)


def run_commits(b: BrokerProcess, res: Results, seconds: float) -> None:
    groups = 10
    consumers = []
    for g in range(groups):
        cons = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"bench-group-{g}",
                         "enable.auto.commit": False, "session.timeout.ms": 30000,
                         "log_level": 0})
        cons.subscribe(["groups"])
        consumers.append(cons)
    deadline = time.monotonic() + 60
    assigned = [False] * groups
    while not all(assigned) and time.monotonic() < deadline:
        for i, cons in enumerate(consumers):
            cons.poll(0.05)
            assigned[i] = assigned[i] or bool(cons.assignment())
    if not all(assigned):
        raise RuntimeError("consumer groups did not get their assignments within 60 s")
    latencies: list[list[float]] = [[] for _ in range(groups)]
    barrier = threading.Barrier(groups)

    def commit_loop(i: int) -> None:
        cons = consumers[i]
        barrier.wait()
        end = time.monotonic() + seconds
        off = 0
        while time.monotonic() < end:
            off += 1
            tps = [TopicPartition("groups", p, off) for p in range(10)]
            t = time.perf_counter()
            with contextlib.suppress(KafkaException):
                cons.commit(offsets=tps, asynchronous=False)
                latencies[i].append((time.perf_counter() - t) * 1000)

    client0 = own_cpu_s()
    with measured(b.usage()) as m:
        threads = [threading.Thread(target=commit_loop, args=(i,)) for i in range(groups)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    client = own_cpu_s() - client0
    for cons in consumers:
        cons.close()
    flat = sorted(x for lst in latencies for x in lst)
    label = "10 consumer groups committing at once (10 partitions each, sync commits)"
    res.add("scale.commits_s", "scale", label, "commits/s", len(flat) / m["elapsed"])
    res.add("scale.commit_p50", "scale", label, "p50 ms per commit", latency.percentile(flat, 50),
            higher_is_better=False)
    res.add("scale.commit_p99", "scale", label, "p99 ms per commit", latency.percentile(flat, 99),
            higher_is_better=False)
    # both sides' core use: a closed loop of 10 committers keeps one of them saturated
    res.add("scale.commit_client_busy", "scale", label,
            "client process CPU s/s (10 consumers' threads and the loops)",
            client / m["elapsed"], higher_is_better=False)
    res.add("scale.commit_broker_busy", "scale", label, "broker CPU s/s",
            m["cpu_s"] / m["elapsed"], higher_is_better=False)
    res.add("scale.commit_cpu", "scale", label, "broker CPU ms per commit",
            m["cpu_s"] * 1000 / max(len(flat), 1), higher_is_better=False)
    res.add("scale.commit_rss", "scale", label, "broker peak RSS MB", m["peak_rss_mb"],
            higher_is_better=False)
