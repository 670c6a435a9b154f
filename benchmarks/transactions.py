"""kafkapy transactions benchmark (issue 14): transactional produce throughput against
idempotent produce in the same run, and end-to-end latency of read_committed against
read_uncommitted consumers.

    .venv/bin/python benchmarks/transactions.py --quick    # ~1 min, the README figures
    .venv/bin/python benchmarks/transactions.py            # ~3 min: 3 repeats, 6 s runs

Throughput: one confluent-kafka producer (librdkafka), 100 B and 1 KiB records, batch.size
1 MiB, linger.ms 5, acks=all, one partition, as fast as it goes for a fixed time (first
produce() to the last commit or flush): idempotent (enable.idempotence) and transactional,
committing every 1,000 records and every 100 ms. Per run: records/s, MB/s, commits/s, the
time each commit_transaction() call took (p50/p99: EndTxn, PrepareCommit written, the
producer's answer; the markers are written after the answer, as Kafka does), and the broker's
CPU seconds per second of the run. Each figure is the median of --repeat runs (min-max), a
fresh topic per run.

Latency: a transactional producer paced at --rate records/s (100 B, linger.ms 1) commits every
100 ms; two confluent-kafka consumers in other processes, read_committed and read_uncommitted,
read the same partition; each record carries its produce() time (benchmarks/latency.py), so
each consumer's latency is the time from produce() to its receipt. A read_uncommitted consumer
sees a record once the leader has it; a read_committed one only once its transaction's commit
marker is written (the last stable offset passes it), so it waits for the commit: about half
the commit interval on average, plus EndTxn, the PrepareCommit write and the marker write.
The first 5 % of records are dropped as warm-up.

Pinning (as benchmarks/run.py): the broker on core 1, this script, librdkafka's threads and the
consumers on core 0 (--no-pin to let them float). Progress goes to stderr, the markdown tables
to stdout, every sample to benchmarks/results/transactions.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import latency
from common import fmt_values, pin, progress
from confluent_kafka import Producer
from run import Broker

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 1024 * 1024
CLIENT_CPU = 0
MODES = ("idempotent", "txn-1000", "txn-100ms")


def producer_config(bootstrap: str, mode: str, linger_ms: int = 5) -> dict:
    conf = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "linger.ms": linger_ms,
        "batch.size": MiB,
        "queue.buffering.max.kbytes": 256 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": True,
        "delivery.report.only.error": True,
        "log_level": 0,
    }
    if mode != "idempotent":
        conf["transactional.id"] = f"bench-{mode}-{time.monotonic_ns()}"
    return conf


def throughput_run(broker: Broker, topic: str, mode: str, size: int, seconds: float) -> dict:
    p = Producer(producer_config(broker.bootstrap, mode))
    payload = b"\x00" * size
    txn = mode != "idempotent"
    if txn:
        p.init_transactions(30)
    commit_ms: list[float] = []
    sent = 0
    cpu0 = broker.cpu_seconds()
    start = time.monotonic()
    last_commit = start
    if txn:
        p.begin_transaction()
    while time.monotonic() - start < seconds:
        for _ in range(100):
            try:
                p.produce(topic, payload)
                sent += 1
            except BufferError:
                p.poll(0.0005)
            if mode == "txn-1000" and sent % 1000 == 0:
                break
        p.poll(0)
        now = time.monotonic()
        due = sent % 1000 == 0 if mode == "txn-1000" else now - last_commit >= 0.1
        if txn and due:
            t = time.monotonic()
            p.commit_transaction(30)
            commit_ms.append((time.monotonic() - t) * 1000)
            last_commit = time.monotonic()
            p.begin_transaction()
    if txn:
        t = time.monotonic()
        p.commit_transaction(30)
        commit_ms.append((time.monotonic() - t) * 1000)
    else:
        p.flush(60)
    took = time.monotonic() - start
    cpu = broker.cpu_seconds() - cpu0
    commit_ms.sort()
    return {
        "records_per_s": sent / took,
        "mb_per_s": sent * size / took / 1e6,
        "commits_per_s": len(commit_ms) / took,
        "commit_p50_ms": latency.percentile(commit_ms, 50) if commit_ms else None,
        "commit_p99_ms": latency.percentile(commit_ms, 99) if commit_ms else None,
        "broker_cpu_per_s": cpu / took,
    }


def paced_transactions(bootstrap: str, topic: str, rate: float, seconds: float) -> int:
    """Produce ``rate`` records/s with the send time in each, committing every 100 ms."""
    p = Producer({**producer_config(bootstrap, "txn-100ms", linger_ms=1), "batch.size": 64 * 1024})
    p.init_transactions(30)
    pad = b"\x00" * (100 - latency.STAMP.size)
    pack = latency.STAMP.pack
    p.begin_transaction()
    p.produce(topic, pack(time.monotonic_ns(), time.time_ns()) + pad)  # warm-up record
    p.commit_transaction(30)
    total = int(rate * seconds)
    sent = 0
    start = last_commit = time.monotonic()
    p.begin_transaction()
    while sent < total:
        now = time.monotonic()
        due = min(total, int((now - start) * rate) + 1)
        while sent < due:
            p.produce(topic, pack(time.monotonic_ns(), time.time_ns()) + pad)
            sent += 1
        p.poll(0)
        if now - last_commit >= 0.1:
            p.commit_transaction(30)
            last_commit = time.monotonic()
            p.begin_transaction()
        time.sleep(0.0005)
    p.commit_transaction(30)
    return sent


def latency_run(broker: Broker, topic: str, rate: float, seconds: float, cpu: int) -> dict:
    ctx = mp.get_context("spawn")
    procs, queues = {}, {}
    expected = ctx.Value("q", int(rate * seconds) + 1)
    ready = {}
    for iso in ("read_uncommitted", "read_committed"):
        ready[iso], queues[iso] = ctx.Event(), ctx.Queue()
        procs[iso] = ctx.Process(
            target=latency.consumer_proc,
            args=(broker.bootstrap, topic, expected, seconds + 60, cpu, ready[iso], queues[iso]),
            kwargs={"isolation": iso},
        )
        procs[iso].start()
    try:
        for iso, ev in ready.items():
            if not ev.wait(60):
                raise RuntimeError(f"{iso} consumer did not start")
        sent = paced_transactions(broker.bootstrap, topic, rate, seconds)
        expected.value = sent + 1
        out = {}
        for iso, q in queues.items():
            e2e, _to, _from, _first, _last = q.get(timeout=seconds + 90)
            s = sorted(e2e[len(e2e) // 20 :])
            out[iso] = {
                "received": len(e2e),
                "p50_ms": latency.percentile(s, 50),
                "p99_ms": latency.percentile(s, 99),
                "mean_ms": statistics.fmean(s) if s else float("nan"),
            }
        out["sent"] = sent
        return out
    finally:
        for proc in procs.values():
            proc.join(30)
            if proc.is_alive():
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 repeats, 3 s runs")
    ap.add_argument("--repeat", type=int, default=None, help="repeats (default 3; --quick 2)")
    ap.add_argument("--rate", type=float, default=2000, help="latency: records/s (2000)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the broker and client")
    ap.add_argument("--only", choices=("throughput", "latency"), default=None)
    args = ap.parse_args()
    repeat = args.repeat or (2 if args.quick else 3)
    seconds = 3.0 if args.quick else 6.0
    lat_seconds = 8.0 if args.quick else 20.0
    if args.no_pin:
        import run

        run.BROKER_CPU = None
    else:
        pin(CLIENT_CPU)
    doc: dict = {
        "mode": "quick" if args.quick else "full",
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "loadavg_start": os.getloadavg()[0],
        "throughput": {},
        "latency": {},
    }
    overrides = {
        "transaction.state.log.num.partitions": "1",
        "offsets.topic.num.partitions": "1",
        "file.delete.delay.ms": "0",
    }
    with tempfile.TemporaryDirectory(prefix="kafkapy-txn-bench-") as tmp:
        if args.only in (None, "throughput"):
            with Broker(Path(tmp), "throughput", overrides) as broker:
                n = 0
                for size in (100, 1024):
                    for mode in MODES:
                        for r in range(repeat):
                            n += 1
                            topic = f"t{n}"
                            broker.create_topic(topic)
                            got = throughput_run(broker, topic, mode, size, seconds)
                            doc["throughput"].setdefault(f"{mode} {size}", []).append(got)
                            progress(
                                f"{mode} {size} B #{r + 1}: {got['records_per_s']:,.0f}/s", "txn"
                            )
                            broker.admin.delete_topics([topic])
        if args.only in (None, "latency"):
            with Broker(Path(tmp), "latency", overrides) as broker:
                for r in range(max(1, repeat - 1)):
                    topic = f"lat{r}"
                    broker.create_topic(topic, config={"message.timestamp.type": "LogAppendTime"})
                    got = latency_run(broker, topic, args.rate, lat_seconds, CLIENT_CPU)
                    doc["latency"].setdefault("runs", []).append(got)
                    rc, ru = got["read_committed"], got["read_uncommitted"]
                    progress(
                        f"latency #{r + 1}: p99 committed {rc['p99_ms']:.1f} ms, "
                        f"uncommitted {ru['p99_ms']:.1f} ms",
                        "txn",
                    )
    doc["loadavg_end"] = os.getloadavg()[0]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "transactions.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(report(doc))


def report(doc: dict) -> str:
    lines = [
        f"{doc['mode']} run {doc['started']}, load average {doc['loadavg_start']:.1f} at start "
        f"and {doc['loadavg_end']:.1f} at end",
        "",
    ]
    if doc["throughput"]:
        lines += [
            "| produce, acks=all, 1 partition | records/s | MB/s | vs idempotent | commits/s "
            "| commit p50 / p99 ms | broker CPU s/s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for size in (100, 1024):
            base = doc["throughput"].get(f"idempotent {size}", [])
            base_med = statistics.median(r["records_per_s"] for r in base) if base else None
            for mode in MODES:
                runs = doc["throughput"].get(f"{mode} {size}", [])
                if not runs:
                    continue

                def col(key: str, runs=runs) -> str:
                    return fmt_values([r[key] for r in runs if r[key] is not None])

                rate = statistics.median(r["records_per_s"] for r in runs)
                ratio = f"{100 * rate / base_med:.0f}%" if base_med else "–"
                commit = (
                    f"{col('commit_p50_ms')} / {col('commit_p99_ms')}"
                    if mode != "idempotent"
                    else "–"
                )
                commits = col("commits_per_s") if mode != "idempotent" else "–"
                lines.append(
                    f"| {size} B, {mode} | {col('records_per_s')} | {col('mb_per_s')} | {ratio} "
                    f"| {commits} | {commit} | {col('broker_cpu_per_s')} |"
                )
        lines.append("")
    runs = doc["latency"].get("runs", [])
    if runs:
        lines += [
            "| end-to-end latency, transactions committed every 100 ms | p50 ms | p99 ms "
            "| mean ms |",
            "| --- | ---: | ---: | ---: |",
        ]
        for iso in ("read_uncommitted", "read_committed"):
            vals = [r[iso] for r in runs]
            lines.append(
                f"| {iso} | {fmt_values([v['p50_ms'] for v in vals])} "
                f"| {fmt_values([v['p99_ms'] for v in vals])} "
                f"| {fmt_values([v['mean_ms'] for v in vals])} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
