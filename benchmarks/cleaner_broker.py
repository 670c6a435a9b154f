"""The log cleaner benchmark's broker section: produce to a plain topic on a real broker with
its cleaner idle, while it cleans a compacted topic, and after; the cleaner's passes read from
the broker's log."""

from __future__ import annotations

import calendar
import contextlib
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cleaner_common import (
    BROKER_CPU,
    MB,
    NEVER_MS,
    SEGMENT_BYTES,
    VALUE_SIZE,
    MiB,
    Results,
    Settings,
    key_bytes,
    key_sequence,
    make_values,
    progress,
)
from common import admin_of, alter_topic, create_topic, release_admin


def producer_config(bootstrap: str) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "acks": "1",
        "linger.ms": 5,
        "batch.size": MiB,
        "message.max.bytes": 2 * MiB,
        "compression.type": "none",
        "queue.buffering.max.kbytes": 32 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": False,
        "delivery.report.only.error": True,
        "log_level": 0,
    }


def produce_for(bootstrap: str, topic: str, seconds: float) -> tuple[int, float, float, float]:
    """1 KiB records as fast as the broker takes them for ``seconds``:
    (records acked, elapsed, wall-clock start, wall-clock end)."""
    from confluent_kafka import Producer

    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    p = Producer({**producer_config(bootstrap), "on_delivery": on_delivery})
    base = (b"kafkapy benchmark record " * (VALUE_SIZE // 25 + 1))[:VALUE_SIZE]
    payloads = [bytes([i]) + base[1:] for i in range(16)]
    p.produce(topic, payloads[0])  # metadata and connection before the clock
    p.flush(30)
    n = 0
    wall0 = time.time()
    start = time.perf_counter()
    deadline = start + seconds
    produce = p.produce
    while True:
        for i in range(1000):
            while True:
                try:
                    produce(topic, payloads[i & 15])
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
    return n, elapsed, wall0, wall0 + elapsed


def fill_dirty(bootstrap: str, topic: str, partitions: int, mb: int) -> tuple[int, float]:
    """Keyed 1 KiB records, 10 % distinct keys, spread over the partitions by key."""
    from confluent_kafka import Producer

    records = int(mb * MB // VALUE_SIZE)
    keys, _ = key_sequence(records, seed=2)
    values = make_values()
    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    p = Producer({**producer_config(bootstrap), "on_delivery": on_delivery})
    t0 = time.perf_counter()
    for i, k in enumerate(keys):
        while True:
            try:
                p.produce(topic, values[i & 63], key_bytes(k), partition=k % partitions)
                break
            except BufferError:
                p.poll(0.001)
    left = p.flush(300)
    if left or errors:
        raise RuntimeError(f"fill: {left} undelivered, errors: {Counter(errors).most_common(3)}")
    return records, time.perf_counter() - t0


CLEANED_RE = re.compile(
    r'ts=(\S+?)\.(\d{3})Z .*msg="cleaned tp=(\S+)-(\d+) offsets=\d+\.\.\d+ read=(\d+)B '
    r'written=(\d+)B records=(\d+)/(\d+) in ([\d.]+)s"'
)


@dataclass
class Pass:
    topic: str
    partition: int
    start: float  # wall clock, s
    end: float
    read: int
    written: int
    kept: int
    records: int


def cleaner_passes(log_text: str, topic: str) -> list[Pass]:
    out = []
    for m in CLEANED_RE.finditer(log_text):
        if m.group(3) != topic:
            continue
        end = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
        end += int(m.group(2)) / 1000
        out.append(
            Pass(
                topic,
                int(m.group(4)),
                end - float(m.group(9)),
                end,
                int(m.group(5)),
                int(m.group(6)),
                int(m.group(7)),
                int(m.group(8)),
            )
        )
    return out


def overlap(passes: list[Pass], a: float, b: float) -> float:
    return sum(max(0.0, min(p.end, b) - max(p.start, a)) for p in passes)


@contextlib.contextmanager
def pinned_broker(root: Path, name: str, overrides: dict[str, str]) -> Iterator[Any]:
    """A running BrokerProcess on the broker core, stopped (up to 60 s) when the block ends."""
    from kafkapy.testing import BrokerProcess

    b = BrokerProcess(root / name, overrides, cpu=BROKER_CPU).start()
    admin_of(b)  # made before any timing starts, as a client's would be
    try:
        yield b
    finally:
        release_admin(b)
        b.stop(60)


def measured_produce(b: Any, topic: str, seconds: float) -> dict:
    """Produce to ``topic`` for ``seconds``: records, time, and the broker's CPU and peak RSS."""
    usage = b.usage()
    usage.reset_peak()
    cpu0 = usage.cpu_seconds()
    n, elapsed, w0, w1 = produce_for(b.bootstrap, topic, seconds)
    return {
        "records": n,
        "elapsed": elapsed,
        "wall_start": w0,
        "wall_end": w1,
        "cpu_s": usage.cpu_seconds() - cpu0,
        "peak_rss_mb": usage.peak_rss_mb(),
    }


def run_broker(s: Settings, res: Results, root: Path, rep: int) -> None:
    overrides = {
        "num.partitions": "1",
        "log.segment.bytes": str(1024 * MiB),
        "log.cleaner.backoff.ms": "100",
        "log.cleaner.min.cleanable.ratio": "0.01",
    }
    dirty = "dirty"
    parts = s.dirty_partitions
    with pinned_broker(root, f"broker-{rep}", overrides) as b:
        create_topic(
            b,
            dirty,
            parts,
            {
                "cleanup.policy": "compact",
                "segment.bytes": str(SEGMENT_BYTES),
                "min.cleanable.dirty.ratio": "0.01",
                "min.compaction.lag.ms": str(NEVER_MS),
            },
        )
        progress(
            f"broker [{rep + 1}/{s.repeat}]: filling '{dirty}' ({parts} partitions) with "
            f"{s.broker_dirty_mb} MB of keyed records, cleaner held off"
        )
        nrec, fill_s = fill_dirty(b.bootstrap, dirty, parts, s.broker_dirty_mb)
        progress(f"  filled {nrec:,} records in {fill_s:.1f} s")
        os.sync()
        time.sleep(1.0)
        create_topic(b, "plain-idle", 1)
        progress(f"  produce 1 KiB to a plain topic, cleaner idle ({s.produce_s:.0f} s)")
        idle = measured_produce(b, "plain-idle", s.produce_s)
        os.sync()
        time.sleep(1.0)
        create_topic(b, "plain-cleaning", 1)
        alter_topic(b, dirty, {"min.compaction.lag.ms": "0"})
        time.sleep(0.2)  # log.cleaner.backoff.ms: the cleaner has picked the topic up
        progress(
            f"  produce 1 KiB to a plain topic while '{dirty}' is cleaned ({s.produce_s:.0f} s)"
        )
        busy = measured_produce(b, "plain-cleaning", s.produce_s)
        progress("  waiting for the cleaner to finish")
        deadline = time.monotonic() + 600
        passes: list[Pass] = []
        while time.monotonic() < deadline:
            passes = cleaner_passes(b.log_text(), dirty)
            if len({p.partition for p in passes}) >= parts:
                break
            time.sleep(0.25)
        else:
            res.notes.append(f"broker run {rep + 1}: the cleaner did not finish in 600 s")
        os.sync()
        time.sleep(1.0)
        create_topic(b, "plain-after", 1)
        progress(f"  produce 1 KiB to a plain topic, cleaning done ({s.produce_s:.0f} s)")
        after = measured_produce(b, "plain-after", s.produce_s)
        uncleanable = [ln for ln in b.log_text().splitlines() if "uncleanable" in ln]
        for ln in uncleanable:
            res.notes.append(f"broker run {rep + 1}: {ln}")
            progress(f"CLEANER FAILED: {ln}")
    shutil.rmtree(root / f"broker-{rep}", ignore_errors=True)
    window = busy["wall_end"] - busy["wall_start"]
    busy_s = overlap(passes, busy["wall_start"], busy["wall_end"])
    clean_read = sum(p.read for p in passes)
    clean_s = sum(p.end - p.start for p in passes)
    sec = "broker: produce 1 KiB, acks=1, 1 partition (confluent-kafka)"
    for key, m, label in (
        ("idle", idle, "cleaner idle (before)"),
        ("busy", busy, "while the cleaner runs"),
        ("after", after, "cleaner idle (after it finished)"),
    ):
        mb = m["records"] * VALUE_SIZE / MB
        res.add(f"br.{key}.mb", sec, f"produce, {label}", "MB/s", mb / m["elapsed"])
        res.add(f"br.{key}.rec", sec, f"produce, {label}", "records/s", m["records"] / m["elapsed"])
        res.add(
            f"br.{key}.cpu",
            sec,
            f"produce, {label}",
            "broker CPU %",
            100 * m["cpu_s"] / m["elapsed"],
        )
        res.add(f"br.{key}.rss", sec, f"produce, {label}", "broker peak RSS MB", m["peak_rss_mb"])

    def rate(m: dict) -> float:
        return m["records"] * VALUE_SIZE / MB / m["elapsed"]

    i_mb = (rate(idle) + rate(after)) / 2
    b_mb = rate(busy)
    res.add(
        "br.ratio",
        sec,
        "produce while cleaning / cleaner idle (mean of before, after)",
        "%",
        100 * b_mb / i_mb,
    )
    sec2 = "broker: the cleaner during that run"
    res.add(
        "br.busy",
        sec2,
        "produce window with a cleaning pass in progress",
        "%",
        100 * busy_s / window if window else None,
    )
    res.add(
        "br.clean_mb",
        sec2,
        "cleaner log read inside the broker (all passes)",
        "MB/s",
        clean_read / clean_s / MB if clean_s else None,
    )
    res.add("br.clean_total", sec2, "compacted topic cleaned", "MB", clean_read / MB)
    res.add("br.clean_time", sec2, "cleaning passes, total", "s", clean_s)
    if window and busy_s < 0.9 * window:
        note = (
            f"broker run {rep + 1}: the cleaner was busy for only {busy_s:.1f} s of the "
            f"{window:.1f} s produce window; use a larger --dirty-mb"
        )
        res.notes.append(note)
        progress(note)
    res.samples.append(
        {
            "section": "broker",
            "rep": rep,
            "idle": idle,
            "cleaning": busy,
            "idle_after": after,
            "dirty_records": nrec,
            "dirty_fill_s": fill_s,
            "passes": [p.__dict__ for p in passes],
        }
    )
    progress(
        f"  idle {rate(idle):.1f} / {rate(after):.1f} MB/s (before / after), "
        f"while cleaning {b_mb:.1f} MB/s "
        f"({100 * b_mb / i_mb:.0f} %), cleaner busy {busy_s:.1f}/{window:.1f} s, "
        f"{len(passes)} passes, {clean_read / MB:.0f} MB in {clean_s:.1f} s"
    )
