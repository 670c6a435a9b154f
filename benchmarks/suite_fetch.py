"""The suite's fetch section: a page-cached partition read from offset 0 by a raw Fetch loop and
by kcat."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from common import create_topic, progress
from confluent_kafka import Producer
from raw_client import Raw, fetch_v11, parse_fetch_v11
from suite import MB, MiB, Results, Settings, pinned_broker
from suite_produce import producer_config
from suite_profiles import profile_broker

from kafkapy.testing.usage import measured


def fill_topic(bootstrap: str, topic: str, size: int, total_bytes: int) -> int:
    p = Producer(producer_config(bootstrap, "1", "none"))
    payload = os.urandom(size)
    n = total_bytes // size
    for _ in range(n):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.001)
    if p.flush(300):
        raise RuntimeError("fill: records left undelivered")
    return n


def warm_page_cache(log_dir: Path, topic: str) -> None:
    for seg in sorted((log_dir / f"{topic}-0").glob("*.log")):
        with open(seg, "rb") as f:
            while f.read(8 * MiB):
                pass


def raw_fetch_all(bootstrap: str, topic: str, end_offset: int) -> tuple[int, int, float]:
    """Read partition 0 from offset 0 to end_offset with Fetch v11 requests of up to 50 MiB,
    counting bytes only; return (record bytes, requests, elapsed)."""
    c = Raw(bootstrap)
    c.buf = bytearray(64 * MiB)
    offset = 0
    total = 0
    requests = 0
    start = time.perf_counter()
    try:
        while offset < end_offset:
            c.send(1, 11, fetch_v11(topic, {0: offset}, 50 * MiB, 50 * MiB))
            err, nxt, nbytes = parse_fetch_v11(c.recv())[0]
            requests += 1
            if err or nxt < 0:
                raise RuntimeError(f"fetch at {offset}: error {err}, next {nxt}")
            offset = nxt
            total += nbytes
    finally:
        c.close()
    return total, requests, time.perf_counter() - start


def kcat_fetch(bootstrap: str, topic: str, records: int) -> float:
    start = time.perf_counter()
    out = subprocess.run(
        ["kcat", "-b", bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
         "-X", "fetch.max.bytes=52428800", "-X", "max.partition.fetch.bytes=52428800",
         "-f", "\n"],
        capture_output=True, check=True, timeout=900,
    )
    got = out.stdout.count(b"\n")
    if got != records:
        raise RuntimeError(f"kcat fetched {got} records, expected {records}")
    return time.perf_counter() - start


def run_fetch(s: Settings, res: Results, root: Path, rep: int) -> None:
    size = 1024
    with pinned_broker(root, f"fetch-{rep}") as b:
        create_topic(b, "f", 1)
        progress(f"fetch: filling a partition with {s.fetch_bytes // MiB} MiB of {size} B records")
        records = fill_topic(b.bootstrap, "f", size, s.fetch_bytes)
        log_bytes = sum(p.stat().st_size for p in (b.log_dirs[0] / "f-0").glob("*.log"))
        warm_page_cache(b.log_dirs[0], "f")
        raw_fetch_all(b.bootstrap, "f", records)  # warm the broker (indexes, first requests)
        progress("fetch: raw Fetch v11 loop, page cache warm")
        with measured(b.usage()) as m:
            nbytes, requests, elapsed = raw_fetch_all(b.bootstrap, "f", records)
        m["elapsed"] = elapsed
        res.add("fetch.raw.mb_s", "fetch",
                f"fetch {log_bytes / MiB:,.0f} MiB from the start, raw Fetch loop (bytes counted)",
                "MB/s", nbytes / elapsed / MB, "ceil.sendfile")
        res.add("fetch.raw.rec_s", "fetch", "fetch, raw Fetch loop", "records/s",
                records / elapsed)
        res.add("fetch.raw.cpu_mb", "fetch", "fetch, raw Fetch loop", "broker CPU ms/MB",
                m["cpu_s"] / (nbytes / MB) * 1000, higher_is_better=False)
        res.add("fetch.raw.rss", "fetch", "fetch, raw Fetch loop", "broker peak RSS MB",
                m["peak_rss_mb"], higher_is_better=False)
        res.add("fetch.raw.req_ms", "fetch", "fetch, raw Fetch loop", "ms per 50 MiB request",
                elapsed / requests * 1000, higher_is_better=False)
        res.extra["fetch_log_bytes"] = log_bytes
        progress("fetch: kcat (librdkafka) from the start, for reference")
        warm_page_cache(b.log_dirs[0], "f")
        with measured(b.usage()) as m:
            elapsed = kcat_fetch(b.bootstrap, "f", records)
        res.add("fetch.kcat.mb_s", "fetch", "fetch from the start, kcat (client-bound reference)",
                "MB/s", log_bytes / elapsed / MB, "ceil.sendfile")
        res.add("fetch.kcat.rec_s", "fetch", "fetch, kcat", "records/s", records / elapsed)
        res.add("fetch.kcat.rss", "fetch", "fetch, kcat", "broker peak RSS MB", m["peak_rss_mb"],
                higher_is_better=False)
        if s.profile:
            profile_broker(b, "fetch", lambda: raw_fetch_all(b.bootstrap, "f", records), res)
