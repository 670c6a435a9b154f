"""The suite's sections measured by the other benchmark scripts: per-request CPU
(per_request.py), fetch sessions (fetch_sessions.py), the log cleaner (cleaner.py) and the
three-broker cluster (cluster.py)."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import fetch_sessions
import per_request
import suite
from common import create_topic, progress
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from suite import BROKER_CPU, Results, Settings, pinned_broker


def run_requests(s: Settings, res: Results, root: Path, rep: int) -> None:
    """Broker CPU per small Produce and per empty long-poll Fetch next to the minimal framed trio
    server's, same frames at the same rate (benchmarks/per_request.py)."""
    seconds = 2.0 if s.quick else 5.0
    with pinned_broker(root, f"requests-{rep}") as b, per_request.MinimalServer(BROKER_CPU) as m:
        progress(f"per-request CPU: broker and minimal server, produce and fetch ({seconds:g} s "
                 "each)")
        create_topic(b, "req-produce", 1)
        create_topic(b, "req-fetch", 1)
        got = per_request.run_section([per_request.Server("minimal", m.pid, m.bootstrap, False),
                                       per_request.Server("broker", b.pid, b.bootstrap)],
                                      seconds)
    for key, v in got.items():
        load, shape, server = key.split(".")
        what = ("Produce v9, 16 x 1,000 B, acks=1" if load == "produce"
                else f"empty long-poll Fetch v12 ({per_request.FETCH_WAIT_MS} ms)")
        who = "broker" if server == "broker" else "minimal framed trio server"
        label = f"{what}, {shape}, {who}"
        res.add(f"requests.{key}.cpu_us", "requests", label, "CPU µs per request", v["cpu_us"],
                higher_is_better=False)
        res.add(f"requests.{key}.user_us", "requests", label, "user CPU µs per request",
                v["user_us"], higher_is_better=False)
        res.add(f"requests.{key}.rate", "requests", label, "requests/s", v["rate"])


def run_sessions(s: Settings, res: Results, root: Path, rep: int) -> None:
    """A consumer of 1,000 partitions with nothing new: incremental fetch (KIP-227 session)
    against full fetch, broker CPU per request (benchmarks/fetch_sessions.py)."""
    parts = 1000
    seconds = 2.0 if s.quick else 5.0
    with pinned_broker(root, f"sessions-{rep}") as b:
        progress(f"sessions: {parts} partitions, one record each")
        fetch_sessions.prepare(b.bootstrap, parts, AdminClient, NewTopic, Producer)
        for mode, wait, conns, key in (
            ("long poll", fetch_sessions.LONG_POLL_MS, fetch_sessions.LONG_POLL_CONNS, "sessions"),
            ("immediate", 0, 1, "sessions.immediate"),
        ):
            progress(f"sessions: full and incremental fetches, {mode} ({seconds:g} s each)")
            got = fetch_sessions.measure(b.bootstrap, b.pid, "wide", parts, seconds, wait, conns)
            for kind, v in got.items():
                res.add(f"{key}.{kind}.cpu_us", "sessions",
                        f"fetch of {parts} partitions with nothing new, {kind}, {mode}"
                        + (f" ({conns} connections, max_wait {wait} ms)" if wait else
                           " (max_wait 0)"),
                        "broker CPU µs per request", v["cpu_us"], higher_is_better=False,
                        note=f"{v['bytes']:,.0f} B response")


def run_cleaner(s: Settings, res: Results, root: Path, rep: int) -> None:
    """One cleaning pass against the decode-only reference, and produce while the broker cleans
    a compacted topic against produce with the cleaner idle (benchmarks/cleaner.py)."""
    import cleaner

    cs = cleaner.Settings.from_args(argparse.Namespace(
        quick=s.quick, repeat=1, only="inprocess,broker", mb=None, dirty_mb=None, seconds=None,
        batch_records=32, codecs="none", data_dir=None, output=suite.RESULTS / "cleaner.json"))
    cr = cleaner.Results()
    cleaner.run_inprocess(cs, cr, root, rep)
    cleaner.run_broker(cs, cr, root, rep)
    for key, src, label, unit in (
        ("cleaner.pass_mb_s", "ip.none.read", "one cleaning pass, uncompressed, log read",
         "MB/s"),
        ("cleaner.decode_mb_s", "ip.none.decode", "reference: read and decode every record once",
         "MB/s"),
        ("cleaner.scan_mb_s", "ip.none.scan",
         "reference: read and scan every record once (the cleaner's scanner)", "MB/s"),
        ("cleaner.produce_idle", None, "produce 1 KiB, cleaner idle (mean of before and after)",
         "MB/s"),
        ("cleaner.produce_cleaning", "br.busy.mb", "produce 1 KiB while the broker cleans",
         "MB/s"),
        ("cleaner.busy", "br.busy", "produce window with a cleaning pass in progress", "%"),
    ):
        if src is None:
            a, b_ = cr.median("br.idle.mb"), cr.median("br.after.mb")
            value = None if a is None or b_ is None else (a + b_) / 2
        else:
            value = cr.median(src)
        res.add(key, "cleaner", label, unit, value)
    for note in cr.notes:
        res.extra.setdefault("notes", []).append(f"cleaner: {note}")  # type: ignore[union-attr]


def run_cluster(s: Settings, res: Results, root: Path) -> None:
    """acks=all on a replication factor 3 topic against acks=1, on one ZooKeeper and three
    brokers (benchmarks/cluster.py's throughput runs: 1 KiB records, one partition)."""
    import cluster
    import cluster_setup

    seconds = 2.0 if s.quick else 6.0
    # The earlier sections leave gigabytes in the page cache. Free them first, so that the three
    # brokers write into recycled pages as the write ceiling and the single-broker runs do (on
    # this VM first-touch page-cache writes cost several times more kernel time; RF=3 writes every
    # byte three times on the brokers' shared core).
    progress("cluster: freeing the earlier sections' data")
    for child in root.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
    os.sync()
    zk, c = cluster_setup.start_cluster(root / "cluster", session_ms=6000, pin=True)
    samples: dict[str, list] = {}
    try:
        cluster.run_throughput(c, seconds, s.repeat, samples)
        for _ in range(s.repeat):
            lat = cluster.follower_latency(c)
            for q in ("p50", "p99"):
                res.add(f"cluster.follower.{q}", "cluster", "follower fetch latency: acks=all "
                        "minus acks=1 round trip of one 1 KiB record (RF=3, 200 requests/s)",
                        f"{q} ms", lat[q], higher_is_better=False,
                        note=f"acks=1 {lat['acks1.' + q]:.2f} ms, "
                             f"acks=all {lat['acksall.' + q]:.2f} ms")
    finally:
        cluster_setup.stop_cluster(zk, c)
    for key, _rf, _acks, label in cluster.THROUGHPUT_CASES:
        for sample in samples.get(key, []):
            res.add(f"cluster.{key}.records_s", "cluster", f"1024 B, {label}", "records/s",
                    sample["records_s"])
            res.add(f"cluster.{key}.mb_s", "cluster", f"1024 B, {label}", "MB/s", sample["mb_s"])
            res.add(f"cluster.{key}.replicated_mb_s", "cluster", f"1024 B, {label}",
                    "MB/s until every replica had every record", sample["replicated_mb_s"])
            res.add(f"cluster.{key}.cpu_ms_mb", "cluster", f"1024 B, {label}",
                    "three brokers' CPU ms/MB (until replicated)", sample["brokers_cpu_ms_mb"],
                    higher_is_better=False)
            res.add(f"cluster.{key}.core_busy", "cluster", f"1024 B, {label}",
                    "broker core busy % (all processes, produce window)",
                    sample["broker_core_busy"], higher_is_better=False)
