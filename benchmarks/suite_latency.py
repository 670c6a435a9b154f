"""The suite's latency section: end-to-end latency at fractions of the setup's own maximum
(latency.py), and one run split on the wire (wire_split.py)."""

from __future__ import annotations

from pathlib import Path

import issue17
import latency
import relay
from common import create_topic, delete_topic, progress
from suite import BROKER_CPU, CLIENT_CPU, LOG_APPEND_TIME, Results, Settings, pinned_broker

from kafkapy.testing import BrokerProcess
from kafkapy.testing.usage import measured


def run_latency(s: Settings, res: Results, root: Path, rep: int) -> None:
    """Latency at 10/50/90 % of the maximum the latency setup itself sustains (benchmarks/
    latency.py says why and what each figure means)."""
    size = 1024
    with pinned_broker(root, f"latency-{rep}") as b:
        create_topic(b, "lmax", 1, LOG_APPEND_TIME)
        progress(f"latency: maximum end-to-end rate of producer + consumer ({s.produce_s:g} s)")
        top = latency.run_level(b.bootstrap, b.pid, "lmax", size, None, s.produce_s, CLIENT_CPU)
        max_rate = top["e2e_rate"]
        delete_topic(b, "lmax")
        res.add("latency.max", "latency", "latency setup, maximum end to end (producer and "
                "consumer on the client core)", "records/s", max_rate,
                note="offered loads are fractions of this")
        # the first repeat runs 10 % and 50 % issue17.TAIL_RUNS times in a row (issue 17's
        # tail target holds for each of them), then 90 %; later repeats run each level once
        levels = [0.1, 0.5] * (issue17.TAIL_RUNS if rep == 0 else 1) + [0.9]
        for i, frac in enumerate(levels):
            topic = f"lat{i}"
            create_topic(b, topic, 1, LOG_APPEND_TIME)
            rate = max_rate * frac
            tail_run = rep == 0 and frac < 0.9
            if tail_run:
                progress("latency: the minimal relay's tail first (benchmarks/relay.py)")
                relayed = relay.run_relay(BROKER_CPU, CLIENT_CPU, s.latency_s)
            progress(f"latency at {frac:.0%} of max = {rate:,.0f} records/s of {size} B")
            with measured(b.usage()) as m:
                f = latency.run_level(b.bootstrap, b.pid, topic, size, rate, s.latency_s,
                                      CLIENT_CPU)
            label = f"end-to-end latency at {frac:.0%} of max"
            key = f"latency.{int(frac * 100)}"
            if tail_run:
                res.add(f"tail.{int(frac * 100)}.ratio", "latency", label, "p99 / p50",
                        f["p99"] / f["p50"], higher_is_better=False,
                        note=f"each of {issue17.TAIL_RUNS} consecutive runs")
                # waits of the broker and the clients for their cores in that run: the tail's
                # scheduling share (other processes on the cores)
                res.add(f"tail.{int(frac * 100)}.wait", "latency", label,
                        "broker / client run-queue wait %",
                        max(f["broker_wait"], f["producer_wait"] + f["consumer_wait"]),
                        higher_is_better=False, note="the larger of the two")
                # the least p99 / p50 this p50 allows with the relay's scheduling jitter
                res.add(f"tail.{int(frac * 100)}.bound", "latency", label,
                        "1 + relay (p99 - p50) / p50", 1 + relayed["jitter"] / f["p50"],
                        higher_is_better=False, note="minimal trio relay, just before the run")
                res.add(f"tail.{int(frac * 100)}.relay_jitter", "latency", label,
                        "relay p99 - p50 ms", relayed["jitter"], higher_is_better=False)

            def add(name: str, unit: str, value: float, note: str = "",
                    higher: bool = False, k: str = key, lb: str = label) -> None:
                res.add(f"{k}.{name}", "latency", lb, unit, value, note=note,
                        higher_is_better=higher)

            for q in ("p50", "p99", "p99.9"):
                add(q, f"{q} ms", f[q])
            add("to_append.p99", "p99 ms send → broker append", f["to_append.p99"],
                "LogAppendTime, 1 ms resolution")
            add("from_append.p99", "p99 ms broker append → consumed", f["from_append.p99"])
            add("rate", "offered records/s", rate, higher=True)
            add("achieved", "records/s the paced producer achieved", f["achieved"], higher=True)
            add("received", "records received", f["received"], higher=True)
            add("rss", "broker peak RSS MB", m["peak_rss_mb"])
            add("client_busy", "client core busy %", f.get(f"core{CLIENT_CPU}_busy", 0.0),
                "all processes on the core, over the produce window")
            add("broker_busy", "broker core busy %", f.get(f"core{BROKER_CPU}_busy", 0.0),
                "all processes on the core, over the produce window")
            add("broker_wait", "broker run-queue wait %", f["broker_wait"],
                "runnable but not running (other processes had its core)")
            add("client_wait", "producer + consumer run-queue wait %",
                f["producer_wait"] + f["consumer_wait"])
            delete_topic(b, topic)
        if rep == 0:
            run_latency_split(b, res, max_rate * 0.1, s.latency_s, size)


def run_latency_split(b: BrokerProcess, res: Results, rate: float, seconds: float,
                      size: int) -> None:
    """One more run at 10 % load with a packet tap on the loopback interface
    (benchmarks/wire_split.py): where each record's latency went, and the p99 / p50 that a
    broker whose residence never varied would give with these clients on this machine."""
    create_topic(b, "lsplit", 1, LOG_APPEND_TIME)
    progress("latency: one more run at 10 % of max, split on the wire")
    f = latency.run_level(b.bootstrap, b.pid, "lsplit", size, rate, seconds, CLIENT_CPU,
                          tap_cpu=CLIENT_CPU)
    delete_topic(b, "lsplit")
    if "split_error" in f or not f.get("split.matched"):
        progress(f"latency split skipped: {f.get('split_error', 'no record found on the wire')}")
        return
    label = "latency at 10% of max, split on the wire (one more run)"
    for part, what in (("client", "produce() → request sent"),
                       ("broker", "request in → fetch response out"),
                       ("consumer", "fetch response out → consumer has it")):
        for q in ("p50", "p99"):
            res.add(f"split.10.{part}.{q}", "latency", label, f"{q} ms {what}",
                    f[f"split.{part}.{q}"], higher_is_better=False)
    res.add("split.10.ratio", "latency", label, "p99 / p50 end to end (this run)",
            f["split.ratio"], higher_is_better=False)
    res.add("split.10.steady", "latency", label, "p99 / p50, broker part at its median",
            f["split.ratio_steady_broker"], higher_is_better=False,
            note="the least a broker of constant residence leaves")
    res.add("split.10.matched", "latency", label, "records found on the wire",
            f["split.matched"], note=f"of {f['received']:,.0f} received")
    res.add("split.10.neighbours_ms", "latency", label,
            "ms of CPU other threads took on the broker's core", f["split.neighbours_ms"],
            higher_is_better=False, note=f"largest: {f['split.neighbours'] or 'none'}")
