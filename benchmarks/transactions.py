"""kafkapy transactions benchmark (issue 14): transactional produce throughput against
idempotent produce in the same run, and end-to-end latency of read_committed against
read_uncommitted consumers.

    .venv/bin/python benchmarks/transactions.py --quick    # ~1 min, the README figures
    .venv/bin/python benchmarks/transactions.py            # ~3 min: 3 repeats, 6 s runs

Throughput: one confluent-kafka producer (librdkafka), 100 B and 1 KiB records, batch.size
1 MiB, linger.ms 5, acks=all, one partition, as fast as it goes for a fixed time (first
produce() to the last commit or flush): idempotent (enable.idempotence) with no batches, and
in batches of 1,000 records and of 100 ms, once transactional (commit_transaction() ends a
batch) and once idempotent with flush() ending it, so that the transactional figure can be
compared both with plain idempotent produce and with the same batching without transactions
(a producer that waits for its records every batch stops enqueueing meanwhile). Per run:
records/s, MB/s, batches/s, the time each batch end took (p50/p99: for a commit, the flush of
the batch's records, then EndTxn and the PrepareCommit write; the markers are written after
the answer, as Kafka does), and the broker's CPU seconds per second of the run. Each figure is
the median of --repeat runs (min-max), a fresh topic per run.

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
from common import admin_of, create_topic, fmt_values, pin, progress
from confluent_kafka import Producer
from suite import pinned_broker

from kafkapy.testing import BrokerProcess

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 1024 * 1024
CLIENT_CPU = 0
# (name, transactional, end a batch every N records, or every N ms)
MODES = {
    "idempotent": (False, None, None),
    "idempotent, flush every 1,000": (False, 1000, None),
    "transactional, commit every 1,000": (True, 1000, None),
    "idempotent, flush every 100 ms": (False, None, 100),
    "transactional, commit every 100 ms": (True, None, 100),
}
BASELINE = {  # what each transactional mode is compared with: the same batches, no transaction
    "transactional, commit every 1,000": "idempotent, flush every 1,000",
    "transactional, commit every 100 ms": "idempotent, flush every 100 ms",
}


def producer_config(bootstrap: str, transactional: bool, linger_ms: int = 5) -> dict:
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
    if transactional:
        conf["transactional.id"] = f"bench-{time.monotonic_ns()}"
    return conf


def throughput_run(broker: BrokerProcess, topic: str, mode: str, size: int, seconds: float) -> dict:
    """Produce as fast as the producer goes for ``seconds``; a batch ends (flush() for the
    idempotent producer, commit_transaction() for the transactional one: both wait for every
    record of the batch) every ``every_n`` records or ``every_ms`` ms."""
    txn, every_n, every_ms = MODES[mode]
    p = Producer(producer_config(broker.bootstrap, txn))
    payload = b"\x00" * size
    if txn:
        p.init_transactions(30)
        p.begin_transaction()
    end_ms: list[float] = []  # how long each batch end took
    sent = 0
    cpu0 = broker.usage().cpu_seconds()
    start = last_end = time.monotonic()
    in_batch = 0
    while time.monotonic() - start < seconds:
        for _ in range(100 if every_n is None else min(100, every_n - in_batch)):
            try:
                p.produce(topic, payload)
                sent += 1
                in_batch += 1
            except BufferError:
                p.poll(0.0005)
        p.poll(0)
        now = time.monotonic()
        due = (every_n is not None and in_batch >= every_n) or (
            every_ms is not None and (now - last_end) * 1000 >= every_ms
        )
        if due:
            if txn:
                p.commit_transaction(30)
                p.begin_transaction()
            else:
                p.flush(30)
            end_ms.append((time.monotonic() - now) * 1000)
            last_end = time.monotonic()
            in_batch = 0
    t = time.monotonic()
    if txn:
        p.commit_transaction(30)
    else:
        p.flush(60)
    if every_n or every_ms:
        end_ms.append((time.monotonic() - t) * 1000)
    took = time.monotonic() - start
    cpu = broker.usage().cpu_seconds() - cpu0
    end_ms.sort()
    return {
        "records_per_s": sent / took,
        "mb_per_s": sent * size / took / 1e6,
        "batches_per_s": len(end_ms) / took,
        "end_p50_ms": latency.percentile(end_ms, 50) if end_ms else None,
        "end_p99_ms": latency.percentile(end_ms, 99) if end_ms else None,
        "broker_cpu_per_s": cpu / took,
    }


def paced_transactions(bootstrap: str, topic: str, rate: float, seconds: float) -> int:
    """Produce ``rate`` records/s with the send time in each, committing every 100 ms."""
    p = Producer({**producer_config(bootstrap, True, linger_ms=1), "batch.size": 64 * 1024})
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


def latency_run(broker: BrokerProcess, topic: str, rate: float, seconds: float, cpu: int) -> dict:
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
            e2e, _to, _from, _first, _last, _stamps = q.get(timeout=seconds + 90)
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
        import suite

        suite.BROKER_CPU = None
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
            with pinned_broker(Path(tmp), "throughput", overrides) as broker:
                n = 0
                for size in (100, 1024):
                    for mode in MODES:
                        for r in range(repeat):
                            n += 1
                            topic = f"t{n}"
                            create_topic(broker, topic)
                            got = throughput_run(broker, topic, mode, size, seconds)
                            doc["throughput"].setdefault(f"{mode} {size}", []).append(got)
                            progress(
                                f"{mode} {size} B #{r + 1}: {got['records_per_s']:,.0f}/s", "txn"
                            )
                            admin_of(broker).delete_topics([topic])
        if args.only in (None, "latency"):
            with pinned_broker(Path(tmp), "latency", overrides) as broker:
                for r in range(max(1, repeat - 1)):
                    topic = f"lat{r}"
                    create_topic(broker, topic, config={"message.timestamp.type": "LogAppendTime"})
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
            "| produce, acks=all, 1 partition | records/s | MB/s | vs idempotent "
            "| vs same batches | batches/s | batch end p50 / p99 ms | broker CPU s/s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for size in (100, 1024):

            def median_rate(mode: str, size: int = size) -> float | None:
                runs = doc["throughput"].get(f"{mode} {size}", [])
                return statistics.median(r["records_per_s"] for r in runs) if runs else None

            base = median_rate("idempotent")
            for mode in MODES:
                runs = doc["throughput"].get(f"{mode} {size}", [])
                if not runs:
                    continue

                def col(key: str, runs=runs) -> str:
                    vals = [r[key] for r in runs if r[key] is not None]
                    return fmt_values(vals) if vals else "–"

                rate = median_rate(mode)
                ratio = f"{100 * rate / base:.0f}%" if base and rate else "–"
                same = median_rate(BASELINE[mode]) if mode in BASELINE else None
                vs_same = f"{100 * rate / same:.0f}%" if same and rate else "–"
                lines.append(
                    f"| {size} B, {mode} | {col('records_per_s')} | {col('mb_per_s')} | {ratio} "
                    f"| {vs_same} | {col('batches_per_s')} "
                    f"| {col('end_p50_ms')} / {col('end_p99_ms')} | {col('broker_cpu_per_s')} |"
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
