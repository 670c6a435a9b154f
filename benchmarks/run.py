"""kafkapy benchmark: produce and fetch throughput and broker peak RSS, next to this machine's
raw loopback TCP ceiling measured in the same run.

    .venv/bin/python benchmarks/run.py [--records 200000] [--size 1024] [--repeat 3]

Load clients: confluent-kafka (librdkafka) to produce and kcat (librdkafka) to fetch, so the
client is not the bottleneck. The broker runs
pinned to core 1 and the client to core 0 (where there are two cores), the same in every run.
Each figure is the median of --repeat runs with min-max. Prints a table and writes
benchmarks/results/latest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.testing import BrokerProcess

MiB = 1024 * 1024
TWO_CORES = (os.cpu_count() or 1) >= 2


def progress(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def pin_client() -> None:
    if TWO_CORES:
        os.sched_setaffinity(0, {0})


def loopback_ceiling(total: int = 1024 * MiB) -> float:
    """MB/s of blocking-socket loopback TCP with 1 MiB writes (the raw network ceiling)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    received = 0

    def sink() -> None:
        nonlocal received
        if TWO_CORES:
            os.sched_setaffinity(0, {1})
        conn, _ = srv.accept()
        buf = bytearray(MiB)
        while True:
            n = conn.recv_into(buf)
            if not n:
                break
            received += n
        conn.close()

    t = threading.Thread(target=sink)
    t.start()
    c = socket.create_connection(("127.0.0.1", port))
    chunk = b"\x00" * MiB
    start = time.perf_counter()
    sent = 0
    while sent < total:
        c.sendall(chunk)
        sent += len(chunk)
    c.close()
    t.join()
    elapsed = time.perf_counter() - start
    srv.close()
    return received / elapsed / 1e6


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def produce_run(
    bootstrap: str, topic: str, records: int, size: int, acks: str
) -> tuple[float, float]:
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "batch.size": MiB,
            "queue.buffering.max.kbytes": 256 * 1024,
            "enable.idempotence": False,
        }
    )
    payload = os.urandom(size)
    start = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.001)
    p.flush(120)
    elapsed = time.perf_counter() - start
    return records / elapsed, records * size / elapsed / 1e6


def fetch_run(bootstrap: str, topic: str, records: int, size: int) -> tuple[float, float]:
    """Read the whole partition from the beginning with kcat (librdkafka, in C), so the client's
    per-message cost does not hide the broker's fetch path."""
    start = time.perf_counter()
    out = subprocess.run(
        ["kcat", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
         "-X", "fetch.max.bytes=52428800", "-X", "max.partition.fetch.bytes=10485760",
         "-f", "%o\n"],
        capture_output=True, check=True, timeout=600,
    )
    elapsed = time.perf_counter() - start
    got = out.stdout.count(b"\n")
    if got != records:
        raise RuntimeError(f"fetched {got} records, expected {records}")
    return got / elapsed, got * size / elapsed / 1e6


def median_range(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    pin_client()
    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "loopback_mb_s",
            "produce_rec_s",
            "produce_mb_s",
            "fetch_rec_s",
            "fetch_mb_s",
            "broker_peak_rss_mb",
        )
    }
    for i in range(args.repeat):
        progress(f"run {i + 1}/{args.repeat}: loopback ceiling")
        rows["loopback_mb_s"].append(loopback_ceiling())
        with tempfile.TemporaryDirectory() as tmp:
            broker = BrokerProcess(Path(tmp), cpu=1 if TWO_CORES else None).start()
            try:
                admin = AdminClient({"bootstrap.servers": broker.bootstrap})
                admin.create_topics([NewTopic("bench", 1, 1)])["bench"].result(30)
                progress(f"run {i + 1}: produce {args.records} x {args.size} B")
                rec_s, mb_s = produce_run(broker.bootstrap, "bench", args.records, args.size, "1")
                rows["produce_rec_s"].append(rec_s)
                rows["produce_mb_s"].append(mb_s)
                progress(f"run {i + 1}: fetch")
                fetch_run(broker.bootstrap, "bench", args.records, args.size)  # warm page cache
                rec_s, mb_s = fetch_run(broker.bootstrap, "bench", args.records, args.size)
                rows["fetch_rec_s"].append(rec_s)
                rows["fetch_mb_s"].append(mb_s)
                rows["broker_peak_rss_mb"].append(vm_hwm_kib(broker.pid) / 1024)
            finally:
                broker.stop()
    table = [
        ("loopback TCP ceiling (1 MiB writes)", "MB/s", rows["loopback_mb_s"]),
        (f"produce {args.size} B, acks=1, 1 partition", "records/s", rows["produce_rec_s"]),
        (f"produce {args.size} B, acks=1, 1 partition", "MB/s", rows["produce_mb_s"]),
        (f"fetch {args.size} B, page-cached, from start", "records/s", rows["fetch_rec_s"]),
        (f"fetch {args.size} B, page-cached, from start", "MB/s", rows["fetch_mb_s"]),
        ("broker peak RSS", "MB", rows["broker_peak_rss_mb"]),
    ]
    print(f"\n| measurement | unit | median (min-max) of {args.repeat} |")
    print("| --- | --- | --- |")
    for name, unit, vals in table:
        print(f"| {name} | {unit} | {median_range(vals)} |")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps({"args": vars(args), "runs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
