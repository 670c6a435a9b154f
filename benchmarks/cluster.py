"""kafkapy cluster benchmark (issue 4): produce throughput on three brokers with replication, and
failover time after kill -9 of a partition leader.

    .venv/bin/python benchmarks/cluster.py --quick      # ~30 s, the README figures
    .venv/bin/python benchmarks/cluster.py              # ~2.5 min: 3 repeats, 6 s runs
    .venv/bin/python benchmarks/cluster.py --repeat 5 --session-timeout-ms 18000

Setup: one real ZooKeeper server (kafkapy.testing.zookeeper, Debian's zookeeper package) and three
kafkapy brokers (kafkapy.testing.cluster.Cluster, as the tests' clusters) with
zookeeper.connect=<zk>/kafkapy, broker.id 0-2, offsets.topic.replication.factor=3, the tests'
other cluster settings, and bench_overrides (session timeout, min.insync.replicas=2, 2 MiB
messages).

Throughput: confluent-kafka, 1 KiB records, batch.size 1 MiB, linger.ms 5, no compression, one
partition, as fast as the cluster takes them for a fixed time (first record to last
acknowledgement), on a fresh topic per run: acks=all on a replication factor 3 topic with
min.insync.replicas=2, acks=1 on the same kind of topic, and acks=1 / acks=all on a replication
factor 1 topic. Each figure is the median of --repeat runs with min-max.

Failover: a producer (acks=all, idempotent) writes a record every 2 ms to partition 0 of an RF=3
topic (min.insync.replicas=2); the leader of partition 0 is killed with SIGKILL; measured from
the kill to (a) ZooKeeper's partition state naming a new leader, (b) a Metadata request (an
AdminClient on the surviving brokers, polled every 20 ms) returning a new leader, (c) the next
acknowledged record: the first record produced after the kill acknowledged to the producer
(acks=all, so written by the new leader and one more in-sync replica). The killed broker is then
restarted and rejoins the ISR before the next round. A kill -9 leaves the broker's ZooKeeper
session open until it expires, so (a)-(c) are bounded below by zookeeper.session.timeout.ms
(--session-timeout-ms, default 6000 as in the tests; Kafka's default is 18000).

Pinning (as benchmarks/run.py): this script and librdkafka's threads on core 0, the three
brokers on core 1 (--no-pin to let them float); ZooKeeper's JVM is not pinned. Progress goes to
stderr, the markdown table to stdout, every sample to benchmarks/results/cluster.json. The
cluster itself (start, topics, replication caught up): cluster_setup.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from cluster_setup import (
    BROKER_CPU,
    CLIENT_CPU,
    MB,
    RESULTS,
    SIZE,
    MiB,
    create_topic,
    delete_topic,
    progress,
    start_cluster,
    stop_cluster,
    wait_for,
    wait_replicated,
)
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from latency import Window

from kafkapy.testing.cluster import Cluster


def producer_config(bootstrap: str, acks: str) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "linger.ms": 5,
        "batch.size": MiB,
        "message.max.bytes": 2 * MiB,
        "compression.type": "none",
        "queue.buffering.max.kbytes": 256 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": False,
        "delivery.report.only.error": True,
        "message.timeout.ms": 120000,
    }


def produce(bootstrap: str, topic: str, seconds: float, acks: str) -> tuple[int, float]:
    """Produce 1 KiB records for `seconds`; return (records acknowledged, elapsed)."""
    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    p = Producer({**producer_config(bootstrap, acks), "on_delivery": on_delivery})
    base = (b"kafkapy cluster benchmark " * (SIZE // 26 + 1))[:SIZE]
    payloads = [bytes([i]) + base[1:] for i in range(16)]
    p.produce(topic, payloads[0], partition=0)  # metadata and connections before the clock
    p.flush(30)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for i in range(1000):
            while True:
                try:
                    p.produce(topic, payloads[i & 15], partition=0)
                    break
                except BufferError:
                    p.poll(0.001)
        n += 1000
        if time.perf_counter() >= deadline:
            break
    left = p.flush(180)
    elapsed = time.perf_counter() - start
    if left or errors:
        raise RuntimeError(f"produce: {left} undelivered, errors: {Counter(errors).most_common(3)}")
    return n, elapsed


THROUGHPUT_CASES = (
    ("rf3.all", 3, "all", "RF=3, acks=all (min.insync.replicas=2)"),
    ("rf3.1", 3, "1", "RF=3, acks=1"),
    ("rf1.1", 1, "1", "RF=1, acks=1"),
    ("rf1.all", 1, "all", "RF=1, acks=all"),
)


def run_throughput(c: Cluster, seconds: float, repeat: int, samples: dict) -> None:
    for rep in range(repeat):
        for key, rf, acks, label in THROUGHPUT_CASES:
            topic = f"tp-{key.replace('.', '-')}-{rep}"
            create_topic(c, topic, rf)
            leader = c.state(topic, 0)["leader"]
            progress(f"[{rep + 1}/{repeat}] {label}, leader broker {leader} ({seconds:g} s)")
            cpu0 = c.cpu_seconds()
            window = Window({})
            start = time.perf_counter()
            n, elapsed = produce(c.bootstrap, topic, seconds, acks)
            cores = window.close()
            # every replica holds every record: with acks=1 the followers may still be copying
            # when the last acknowledgement came
            replicated = wait_replicated(c, topic, rf) - start
            cpu = c.cpu_seconds() - cpu0
            rec_s = n / elapsed
            samples.setdefault(key, []).append(
                {
                    "records": n,
                    "elapsed_s": elapsed,
                    "records_s": rec_s,
                    "mb_s": rec_s * SIZE / MB,
                    "leader": leader,
                    # until every replica has every record, and the three brokers' CPU till then
                    "replicated_mb_s": n * SIZE / MB / replicated,
                    "brokers_cpu_ms_mb": cpu * 1000 / (n * SIZE / MB),
                    "broker_core_busy": cores.get(f"core{BROKER_CPU}_busy", 0.0),
                }
            )
            progress(f"  {rec_s:,.0f} records/s, {rec_s * SIZE / MB:.1f} MB/s; replicated at "
                     f"{n * SIZE / MB / replicated:.1f} MB/s, brokers' CPU "
                     f"{cpu * 1000 / (n * SIZE / MB):.2f} ms/MB, broker core "
                     f"{cores.get(f'core{BROKER_CPU}_busy', 0.0):.0f} % busy")
            delete_topic(c, topic)


def follower_latency(c: Cluster, records: int = 300) -> dict[str, float]:
    """What replication adds to one acknowledged record: single-record (1 KiB) Produce requests
    on one connection to the leader of an RF=3 topic, one in flight, alternating acks=1 and
    acks=all; the follower fetch latency is the difference of their percentiles (the leader's
    append is in both, the followers' fetch round trip and the high watermark only in acks=all).
    Paced at 200 requests/s so each record waits for a follower fetch of its own."""
    import socket
    import struct

    from raw_produce import produce_batch, produce_request

    topic = "follower-latency"
    create_topic(c, topic, 3)
    leader = c.brokers[c.state(topic, 0)["leader"]]
    batch, _count = produce_batch(SIZE, SIZE + 100)
    frames = {acks: produce_request(topic, 0, batch, acks, 0) for acks in (1, -1)}
    host, port = leader.bootstrap.rsplit(":", 1)
    times: dict[int, list[float]] = {1: [], -1: []}
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(records * 2 + 20):
            acks = 1 if i % 2 else -1
            t = time.perf_counter()
            sock.sendall(frames[acks])
            head = sock.recv(4, socket.MSG_WAITALL)
            (n,) = struct.unpack(">i", head)
            sock.recv(n, socket.MSG_WAITALL)
            if i >= 20:  # the first ones warm up connections and fetchers
                times[acks].append((time.perf_counter() - t) * 1000)
            time.sleep(max(0.0, 0.005 - (time.perf_counter() - t)))
    delete_topic(c, topic)
    out = {}
    for q in (50, 99):
        a1, aall = (statistics.quantiles(times[k], n=100)[q - 1] for k in (1, -1))
        out[f"acks1.p{q}"], out[f"acksall.p{q}"], out[f"p{q}"] = a1, aall, aall - a1
    return out


def run_failover(c: Cluster, repeat: int, samples: list) -> None:
    topic = "failover"
    create_topic(c, topic, 3)
    # (monotonic time of the delivery report, sequence number of the record)
    acked: list[tuple[float, int]] = []
    errors: list[str] = []

    def on_delivery(err, msg) -> None:
        if err is None:
            acked.append((time.monotonic(), int(msg.value()[1:])))
        else:
            errors.append(str(err))

    p = Producer(
        {
            "bootstrap.servers": c.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 1,
            "message.timeout.ms": 120000,
            "retry.backoff.ms": 100,
            "on_delivery": on_delivery,
        }
    )
    i = 0

    def produce_for(seconds: float, until=None) -> None:
        nonlocal i
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            p.produce(topic, f"m{i}".encode(), partition=0)
            i += 1
            p.poll(0.002)
            if until is not None and until():
                return

    produce_for(2.0)
    for rep in range(repeat):
        old = c.state(topic, 0)["leader"]
        survivors = [b.bootstrap for bid, b in c.brokers.items() if bid != old]
        admin = AdminClient({"bootstrap.servers": ",".join(survivors)})
        admin.list_topics(topic, timeout=10)  # connections up before the clock
        seen: dict[str, float] = {}
        stop = threading.Event()

        def watch_zk(old=old, seen=seen, stop=stop) -> None:
            while not stop.is_set():
                try:
                    leader = c.state(topic, 0)["leader"]
                except Exception:
                    leader = -1
                if leader not in (-1, old):
                    seen["zk"] = time.monotonic()
                    return
                time.sleep(0.01)

        def watch_metadata(old=old, seen=seen, stop=stop, admin=admin) -> None:
            while not stop.is_set():
                try:
                    md = admin.list_topics(topic, timeout=2)
                    leader = md.topics[topic].partitions[0].leader
                except Exception:
                    leader = -1
                if leader not in (-1, old):
                    seen["metadata"] = time.monotonic()
                    seen["new_leader"] = leader
                    return
                time.sleep(0.02)

        produce_for(1.0)
        p.poll(0)  # drain delivery reports received before the kill
        before = len(acked)
        first_after = i  # records from this sequence number on are produced after the kill
        watchers = [threading.Thread(target=f, daemon=True) for f in (watch_zk, watch_metadata)]
        progress(
            f"[{rep + 1}/{repeat}] kill -9 broker {old} (leader of {topic}-0), "
            f"{before} records acknowledged so far"
        )
        t_kill = time.monotonic()
        c.brokers[old].kill()
        for w in watchers:
            w.start()

        # the next acknowledged record: the first one produced after the kill (a response in
        # flight at the kill may still report a record the old leader took)
        def acked_after(before=before, first_after=first_after) -> float | None:
            return next((t for t, seq in acked[before:] if seq >= first_after), None)

        produce_for(120.0, until=lambda: acked_after() is not None)
        t_ack = acked_after()
        if t_ack is None:
            raise RuntimeError(f"no acknowledgement within 120 s after the kill: {errors[-3:]}")
        wait_for(
            lambda seen=seen: "zk" in seen and "metadata" in seen,
            timeout=60,
            what="new leader in ZooKeeper and Metadata",
        )
        stop.set()
        sample = {
            "killed": old,
            "new_leader": seen.get("new_leader"),
            "zk_state_s": seen["zk"] - t_kill,
            "metadata_s": seen["metadata"] - t_kill,
            "next_ack_s": t_ack - t_kill,
        }
        samples.append(sample)
        progress(
            f"  new leader {sample['new_leader']}: ZooKeeper state after "
            f"{sample['zk_state_s']:.2f} s, Metadata after {sample['metadata_s']:.2f} s, "
            f"next acknowledged record after {sample['next_ack_s']:.2f} s"
        )
        # restart the killed broker (same port and data) and let it rejoin the ISR
        progress(f"  restarting broker {old}")
        c.brokers[old].start()
        wait_for(
            lambda: len(c.state(topic, 0)["isr"]) == 3,
            timeout=120,
            what=f"broker {old} back in the ISR",
        )
        produce_for(1.0)
    left = p.flush(120)
    if left:
        raise RuntimeError(f"failover producer: {left} records undelivered")
    if errors:
        progress(
            f"failover producer errors (retried by librdkafka or not): "
            f"{Counter(errors).most_common(3)}"
        )


def fmt(v: float, digits: int = 0) -> str:
    return f"{v:,.{digits}f}"


def med_range(vals: list[float], digits: int = 0) -> str:
    if not vals:
        return "–"
    med = fmt(statistics.median(vals), digits)
    if len(vals) == 1:
        return med
    return f"{med} ({fmt(min(vals), digits)}–{fmt(max(vals), digits)})"


def table(throughput: dict, failover: list, session_ms: int) -> str:
    lines = [
        "| produce, 1 KiB records, 1 partition, 3 brokers | records/s | MB/s | vs RF=3 acks=1 |",
        "| --- | ---: | ---: | ---: |",
    ]
    base = throughput.get("rf3.1")
    base_med = statistics.median(s["records_s"] for s in base) if base else None
    for key, _rf, _acks, label in THROUGHPUT_CASES:
        ss = throughput.get(key, [])
        rec = [s["records_s"] for s in ss]
        mb = [s["mb_s"] for s in ss]
        ratio = f"{statistics.median(rec) / base_med:.0%}" if rec and base_med else "–"
        lines.append(f"| {label} | {med_range(rec)} | {med_range(mb, 1)} | {ratio} |")
    lines += [
        "",
        f"| failover: kill -9 of partition 0's leader, acks=all producer "
        f"(zookeeper.session.timeout.ms={session_ms}) | seconds after the kill |",
        "| --- | ---: |",
    ]
    for key, label in (
        ("zk_state_s", "ZooKeeper partition state names a new leader"),
        ("metadata_s", "Metadata (surviving brokers) returns the new leader"),
        ("next_ack_s", "next record acknowledged (first one produced after the kill)"),
    ):
        lines.append(f"| {label} | {med_range([s[key] for s in failover], 2)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 repeat, 2 s produce runs")
    ap.add_argument("--repeat", type=int, default=None, help="repeats (default 3; --quick 1)")
    ap.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="duration of one produce run (default 6; --quick 2)",
    )
    ap.add_argument(
        "--session-timeout-ms",
        type=int,
        default=6000,
        help="brokers' zookeeper.session.timeout.ms (default 6000)",
    )
    ap.add_argument("--no-pin", action="store_true", help="do not pin brokers and client")
    ap.add_argument("--only", choices=("throughput", "failover"), default=None)
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where ZooKeeper and the brokers keep data (default: a temp dir)",
    )
    a = ap.parse_args()
    repeat = a.repeat or (1 if a.quick else 3)
    seconds = a.seconds or (2.0 if a.quick else 6.0)
    pin = not a.no_pin
    if pin:
        os.sched_setaffinity(0, {CLIENT_CPU})  # threads started later (librdkafka's) inherit it
    load_start = os.getloadavg()
    throughput: dict[str, list] = {}
    failover: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kafkapy-cluster-", dir=a.data_dir) as tmp:
        zk, c = start_cluster(Path(tmp), a.session_timeout_ms, pin)
        try:
            if a.only in (None, "throughput"):
                run_throughput(c, seconds, repeat, throughput)
            if a.only in (None, "failover"):
                run_failover(c, repeat, failover)
        finally:
            progress("stopping the cluster")
            stop_cluster(zk, c)
    out = table(throughput, failover, a.session_timeout_ms)
    print(out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc = {
        "mode": "quick" if a.quick else "full",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "repeat": repeat,
        "produce_seconds": seconds,
        "record_bytes": SIZE,
        "session_timeout_ms": a.session_timeout_ms,
        "pinning": ({"client_cpu": CLIENT_CPU, "broker_cpu": BROKER_CPU} if pin else None),
        "cpus": os.cpu_count(),
        "loadavg_start": load_start,
        "loadavg_end": os.getloadavg(),
        "throughput": throughput,
        "failover": failover,
        "table": out,
    }
    (RESULTS / "cluster.json").write_text(json.dumps(doc, indent=2) + "\n")
    progress(f"wrote {RESULTS / 'cluster.json'}")


if __name__ == "__main__":
    main()
