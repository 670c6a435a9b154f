"""Log cleaner benchmark (issue 6): cleaner throughput, and what cleaning costs produce.

    .venv/bin/python benchmarks/cleaner.py --quick      # ~2 minutes
    .venv/bin/python benchmarks/cleaner.py              # full: 3 repeats, 200 MB logs
    .venv/bin/python benchmarks/cleaner.py --only inprocess --mb 500

Sections (--only):

* ``inprocess``: a PartitionLog (LogManager + LogCleaner, as tests/test_cleaner.py drives them)
  filled with --mb MB of 1 KiB keyed records, 10 % distinct keys (so ~90 % of the records are
  obsolete), in batches of --batch-records, segments rolled at 16 MiB; one full cleaning pass
  (``LogCleaner.clean_all``) is timed in a fresh process on the broker's core, uncompressed and
  lz4. Reported: log MB/s read, MB/s written, records/s, that process's peak RSS (VmHWM) and
  its growth during the pass, next to this machine's page-cached sequential read and
  sequential write (buffered, incl. fsync) ceilings measured in the same run on the same core,
  and a reference: reading and decoding every record once with no cleaning at all. The result
  is checked: one record per key, each at the key's latest offset.
* ``broker``: a real broker (BrokerProcess on core 1, this script and its confluent-kafka
  clients on core 0). A compacted topic is filled with dirty data while
  ``min.compaction.lag.ms`` holds the cleaner off; then 1 KiB records are produced to a plain
  topic for --seconds with the cleaner idle, the compacted topic's ``min.compaction.lag.ms``
  is set to 0 (IncrementalAlterConfigs) and the same produce run is repeated while the broker
  cleans it, and once more after the cleaner has finished; the impact is the run while
  cleaning over the mean of the two idle runs. The broker runs with
  ``log.cleaner.backoff.ms=100``, ``log.cleaner.min.cleanable.ratio=0.01`` and a 16 MiB
  ``segment.bytes`` on the compacted topic. The cleaner's own passes (from the broker's
  "cleaned" log lines) give how much of the produce window the cleaner was busy and its
  throughput inside the broker.

Each figure is the median of --repeat runs with min-max. Progress goes to stderr, the table to
stdout, every sample to benchmarks/results/cleaner.json.
"""

from __future__ import annotations

import argparse
import calendar
import contextlib
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import alter_topic, create_topic, fmt_values, parse_sections, pin
from common import progress as common_progress

MiB = 1024 * 1024
MB = 1e6
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
RESULTS = Path(__file__).resolve().parent / "results"
SECTIONS = ("inprocess", "broker")
VALUE_SIZE = 1024
UNIQUE_FRACTION = 0.10
SEGMENT_BYTES = 16 * MiB
NEVER_MS = 2**62  # min.compaction.lag.ms that keeps every segment uncleanable


# ---- settings and results -------------------------------------------------------------------


@dataclass
class Settings:
    quick: bool
    repeat: int
    inprocess_mb: int  # value bytes written to the in-process log, per codec
    batch_records: int
    codecs: tuple[str, ...]
    ceiling_bytes: int
    broker_dirty_mb: int  # value bytes of dirty data in the compacted topic
    dirty_partitions: int
    produce_s: float
    data_dir: Path | None
    output: Path
    sections: tuple[str, ...]

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Settings:
        only = parse_sections(a.only, SECTIONS)
        if a.quick:
            d = dict(repeat=3, mb=96, ceiling=256 * MiB, dirty=640, parts=2, seconds=4.0)
        else:
            d = dict(repeat=3, mb=200, ceiling=512 * MiB, dirty=1280, parts=4, seconds=8.0)
        return cls(
            quick=a.quick,
            repeat=a.repeat or d["repeat"],
            inprocess_mb=a.mb or d["mb"],
            batch_records=a.batch_records,
            codecs=tuple(a.codecs.split(",")),
            ceiling_bytes=d["ceiling"],
            broker_dirty_mb=a.dirty_mb or d["dirty"],
            dirty_partitions=d["parts"],
            produce_s=a.seconds or d["seconds"],
            data_dir=a.data_dir,
            output=a.output,
            sections=only,
        )


@dataclass
class Row:
    section: str
    name: str
    unit: str
    values: list[float] = field(default_factory=list)
    note: str = ""


class Results:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.notes: list[str] = []
        self.samples: list[dict] = []

    def add(
        self, key: str, section: str, name: str, unit: str, value: float | None, note: str = ""
    ) -> None:
        row = self.rows.setdefault(key, Row(section, name, unit, [], note))
        if value is not None:
            row.values.append(float(value))

    def median(self, key: str) -> float | None:
        row = self.rows.get(key)
        return statistics.median(row.values) if row and row.values else None


def progress(msg: str) -> None:
    common_progress(msg, "cleaner-bench")


# ---- data -----------------------------------------------------------------------------------


def make_values(n: int = 64) -> list[bytes]:
    """1 KiB values, half random and half text: lz4 gets them to ~55 %, as real payloads."""
    rng = random.Random(7)
    text = b"kafkapy log cleaner benchmark, the latest value per key wins. " * 20
    return [rng.randbytes(VALUE_SIZE // 2) + text[: VALUE_SIZE - VALUE_SIZE // 2] for _ in range(n)]


def key_sequence(records: int, seed: int = 1) -> tuple[list[int], int]:
    """Key index of each record (uniform over records * UNIQUE_FRACTION keys), key count."""
    nkeys = max(1, int(records * UNIQUE_FRACTION))
    rng = random.Random(seed)
    return [rng.randrange(nkeys) for _ in range(records)], nkeys


def key_bytes(i: int) -> bytes:
    return b"key-%09d" % i


# ---- ceilings (same core as the cleaner) ----------------------------------------------------


def ceilings(directory: Path, total: int) -> dict[str, float]:
    """Sequential 1 MiB writes (buffered, then incl. fsync) and page-cached 1 MiB reads."""
    path = directory / "ceiling.bin"
    chunk = os.urandom(64) * (MiB // 64)
    n = total // MiB
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        start = time.perf_counter()
        for _ in range(n):
            os.write(fd, chunk)
        t1 = time.perf_counter()
        os.fsync(fd)
        t2 = time.perf_counter()
        best = 0.0
        for _ in range(2):  # second pass: certainly from the page cache
            t3 = time.perf_counter()
            for i in range(n):
                os.pread(fd, MiB, i * MiB)
            best = max(best, n * MiB / (time.perf_counter() - t3) / MB)
    finally:
        os.close(fd)
        path.unlink()
    size = n * MiB
    return {
        "write_buffered": size / (t1 - start) / MB,
        "write_fsync": size / (t2 - start) / MB,
        "read_cached": best,
    }


# ---- in-process cleaning pass ---------------------------------------------------------------


CODECS = {"none": 0, "lz4": 3}


def fill_log(plog, records: int, batch: int, codec: int) -> tuple[dict[bytes, int], float]:
    """Append ``records`` keyed records; returns the latest offset per key and the fill time."""
    from kafkapy.protocol.record_batch import Record, encode_batch

    keys, _ = key_sequence(records)
    values = make_values()
    latest: dict[bytes, int] = {}
    now = int(time.time() * 1000)
    t0 = time.perf_counter()
    offset = 0
    for start in range(0, records, batch):
        recs = []
        for i in range(start, min(start + batch, records)):
            k = key_bytes(keys[i])
            recs.append(Record(0, now, k, values[i & 63], []))
            latest[k] = offset
            offset += 1
        plog.append_as_leader(encode_batch(recs, codec=codec), leader_epoch=0, now_ms=now)
    plog.roll(now)  # everything in closed (cleanable) segments
    plog.flush()  # the pass starts with no writeback pending
    return latest, time.perf_counter() - t0


def check_cleaned(plog, latest: dict[bytes, int]) -> str | None:
    """None if the log holds exactly one record per key, at the key's latest offset."""
    from kafkapy.protocol.record_batch import decode_records, iter_batches

    seen: dict[bytes, int] = {}
    dupes = 0
    offset = plog.log_start_offset
    while offset < plog.log_end_offset:
        data = plog.read_bytes(offset, 64 * MiB)
        if not data:
            break
        for pos, h in iter_batches(data):
            for r in decode_records(bytes(data[pos : pos + h.size])):
                if r.key in seen:
                    dupes += 1
                seen[r.key] = r.offset
            offset = h.next_offset
    if dupes:
        return f"{dupes} keys appear more than once after the pass"
    if seen != latest:
        wrong = sum(1 for k, o in latest.items() if seen.get(k) != o)
        return f"{wrong} of {len(latest)} keys missing or not at their latest offset"
    return None


def bench_config():
    from kafkapy.storage.config import LogConfig

    return LogConfig(
        segment_bytes=SEGMENT_BYTES,
        cleanup_policy=("compact",),
        min_cleanable_dirty_ratio=0.01,
        file_delete_delay_ms=0,
    )


def open_manager(d: Path):
    from kafkapy.storage.log_manager import LogManager

    mgr = LogManager([d], bench_config())
    mgr.startup(0, "bench")
    return mgr


def _read_rate(plog, look) -> float:
    """MB/s of reading every closed segment and calling ``look(header, batch bytes)`` on each
    batch."""
    from kafkapy.protocol.record_batch import iter_batches

    total = 0
    t0 = time.perf_counter()
    for seg in plog.segments[:-1]:
        data = os.pread(seg.fd, seg.size, 0)
        view = memoryview(data)
        for pos, h in iter_batches(view):
            look(h, view[pos : pos + h.size])
        total += len(data)
    return total / (time.perf_counter() - t0) / MB


def decode_rate(plog) -> float:
    """MB/s of reading every closed segment and decoding every record once (no filtering,
    no writing): what the record decoding alone costs, in the cleaner's language."""
    from kafkapy.protocol.record_batch import decode_records

    return _read_rate(plog, lambda _h, batch: decode_records(batch))


def scan_rate(plog) -> float:
    """MB/s of reading every closed segment and scanning every record once with the cleaner's
    own record scanner (protocol/record_scan.py): the least a pass that looks at every record
    once in this code base costs."""
    from kafkapy.storage.cleaner_filter import scan_batch

    return _read_rate(plog, scan_batch)


def clean_child(d: str, out) -> None:
    """One full cleaning pass in a fresh process on the cleaner's core (spawned): its peak RSS
    is the cleaner's, not the filling's."""
    from kafkapy.storage.cleaner import LogCleaner
    from kafkapy.testing.usage import ProcessUsage

    pin(BROKER_CPU)
    mgr = open_manager(Path(d))
    cleaner = LogCleaner(mgr)
    usage = ProcessUsage("self")
    rss0 = usage.status_kib("VmRSS")
    usage.reset_peak()
    t0 = time.perf_counter()
    stats = cleaner.clean_all(int(time.time() * 1000))
    elapsed = time.perf_counter() - t0
    peak = usage.status_kib("VmHWM")
    mgr.shutdown()
    out.send(
        {
            "elapsed_s": elapsed,
            "rss_before_kib": rss0,
            "peak_rss_kib": peak,
            "passes": len(stats),
            "bytes_read": sum(x.bytes_read for x in stats),
            "bytes_written": sum(x.bytes_written for x in stats),
            "records_read": sum(x.records_read for x in stats),
            "records_kept": sum(x.records_kept for x in stats),
            "segments_cleaned": sum(x.segments_cleaned for x in stats),
            "uncleanable": {f"{t}-{p}": e for (t, p), e in cleaner.uncleanable.items()},
        }
    )


def clean_in_child(d: Path) -> dict:
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=clean_child, args=(str(d), send))
    proc.start()
    send.close()
    try:
        result = recv.recv()
    except EOFError:
        proc.join()
        raise RuntimeError(f"cleaning process died, exit code {proc.exitcode}") from None
    proc.join()
    return result


def run_inprocess(s: Settings, res: Results, root: Path, rep: int) -> None:
    pin(BROKER_CPU)
    try:
        progress(f"ceilings: {s.ceiling_bytes // MiB} MiB sequential write/fsync/read")
        c = ceilings(root, s.ceiling_bytes)
    finally:
        pin(CLIENT_CPU)
    sec = "machine ceilings (cleaner's core)"
    res.add(
        "ceil.read",
        sec,
        "sequential read, page-cached file, 1 MiB preads",
        "MB/s",
        c["read_cached"],
    )
    res.add(
        "ceil.write",
        sec,
        "sequential write, page cache only (no fsync)",
        "MB/s",
        c["write_buffered"],
    )
    res.add("ceil.fsync", sec, "sequential write incl. fsync", "MB/s", c["write_fsync"])
    records = int(s.inprocess_mb * MB // VALUE_SIZE)
    for codec_name in s.codecs:
        d = root / f"inproc-{codec_name}-{rep}"
        mgr = open_manager(d)
        plog = mgr.create_log("cleaner-bench", 0, uuid.uuid4(), bench_config())
        progress(
            f"in-process {codec_name}: filling {records:,} records "
            f"({s.inprocess_mb} MB of values, {s.batch_records}/batch)"
        )
        latest, fill_s = fill_log(plog, records, s.batch_records, CODECS[codec_name])
        size_before = plog.size_in_bytes()
        segs = len(plog.segments) - 1
        pin(BROKER_CPU)
        try:
            decode = decode_rate(plog)
            scan = scan_rate(plog)
        finally:
            pin(CLIENT_CPU)
        mgr.shutdown()
        progress(
            f"in-process {codec_name}: cleaning {size_before / MB:.0f} MB in {segs} "
            "segments (fresh process)"
        )
        r = clean_in_child(d)
        mgr = open_manager(d)
        error = check_cleaned(mgr.get_log("cleaner-bench", 0), latest)
        mgr.shutdown()
        if r["uncleanable"]:
            error = f"uncleanable: {r['uncleanable']}"
        if error:
            progress(f"CLEANER RESULT WRONG ({codec_name}): {error}")
            res.notes.append(f"in-process {codec_name}, run {rep + 1}: {error}")
        elapsed = r["elapsed_s"]
        sec = f"in-process cleaning pass, {codec_name}"
        label = f"{codec_name}: {size_before / MB:.0f} MB log, {len(latest):,} keys"
        res.add(
            f"ip.{codec_name}.read",
            sec,
            f"{label}: log read",
            "MB/s",
            r["bytes_read"] / elapsed / MB,
        )
        res.add(
            f"ip.{codec_name}.written",
            sec,
            f"{label}: cleaned log written",
            "MB/s",
            r["bytes_written"] / elapsed / MB,
        )
        res.add(
            f"ip.{codec_name}.rec",
            sec,
            f"{label}: records",
            "records/s",
            r["records_read"] / elapsed,
        )
        res.add(f"ip.{codec_name}.secs", sec, f"{label}: one full pass", "s", elapsed)
        res.add(
            f"ip.{codec_name}.scan",
            sec,
            f"{label}: reference, read + scan every record once with the cleaner's scanner",
            "MB/s",
            scan,
        )
        res.add(
            f"ip.{codec_name}.decode",
            sec,
            f"{label}: reference, read + decode every record once, no cleaning",
            "MB/s",
            decode,
        )
        res.add(
            f"ip.{codec_name}.peak",
            sec,
            f"{label}: cleaning process peak RSS",
            "MB",
            r["peak_rss_kib"] / 1024,
        )
        res.add(
            f"ip.{codec_name}.growth",
            sec,
            f"{label}: RSS growth during the pass",
            "MB",
            (r["peak_rss_kib"] - r["rss_before_kib"]) / 1024,
        )
        res.add(
            f"ip.{codec_name}.kept",
            sec,
            f"{label}: records kept",
            "%",
            100 * r["records_kept"] / max(r["records_read"], 1),
        )
        res.samples.append(
            {
                "section": "inprocess",
                "rep": rep,
                "codec": codec_name,
                "records": records,
                "keys": len(latest),
                "segments": segs,
                "log_bytes": size_before,
                "fill_s": fill_s,
                "decode_mb_s": decode,
                **r,
                "check": error or "ok",
                "ceilings": c,
            }
        )
        progress(
            f"in-process {codec_name}: {elapsed:.2f} s, "
            f"{r['bytes_read'] / elapsed / MB:.1f} MB/s read, {r['passes']} pass(es), "
            f"check {error or 'ok'}"
        )
        shutil.rmtree(d)


# ---- broker: produce with and without the cleaner running -----------------------------------


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
    try:
        yield b
    finally:
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


# ---- output ---------------------------------------------------------------------------------


def render(res: Results, s: Settings) -> str:
    lines = [
        f"Mode: {'quick' if s.quick else 'full'}, {s.repeat} repeat(s); median (min–max). "
        f"Cleaner and broker on core {BROKER_CPU}, clients on core {CLIENT_CPU}. "
        f"1 KiB values, {int(UNIQUE_FRACTION * 100)} % distinct keys, "
        f"{SEGMENT_BYTES // MiB} MiB segments.",
        "",
        "| measurement | unit | value |",
        "| --- | --- | --- |",
    ]
    section = None
    for row in res.rows.values():
        if row.section != section:
            section = row.section
            lines.append(f"| **{section}** | | |")
        lines.append(f"| {row.name} | {row.unit} | {fmt_values(row.values)} |")
    read = res.median("ceil.read")
    for codec in s.codecs:
        v = res.median(f"ip.{codec}.read")
        if read and v:
            lines.append(
                f"\nIn-process cleaning, {codec}: log read at {100 * v / read:.1f} % "
                "of the page-cached sequential read ceiling."
            )
    for note in res.notes:
        lines.append(f"\nNote: {note}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ~2 minute run")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (3)")
    ap.add_argument("--only", help=f"comma-separated sections of: {','.join(SECTIONS)}")
    ap.add_argument(
        "--mb",
        type=int,
        default=None,
        help="MB of values in the in-process log (full 200, quick 96)",
    )
    ap.add_argument(
        "--dirty-mb",
        type=int,
        default=None,
        help="MB of values in the broker's compacted topic (full 1280, quick 640)",
    )
    ap.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="duration of one broker produce run (full 8, quick 4)",
    )
    ap.add_argument(
        "--batch-records", type=int, default=32, help="records per batch in the in-process log"
    )
    ap.add_argument("--codecs", default="none,lz4", help="in-process codecs (none, lz4)")
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="parent of the logs (default: a temporary directory)",
    )
    ap.add_argument("--output", type=Path, default=RESULTS / "cleaner.json")
    s = Settings.from_args(ap.parse_args())
    bad = set(s.codecs) - set(CODECS)
    if bad:
        raise SystemExit(f"unknown codecs {sorted(bad)}; known: {', '.join(CODECS)}")
    pin(CLIENT_CPU)
    started = time.monotonic()
    load0 = os.getloadavg()
    res = Results()
    if s.data_dir:
        s.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=s.data_dir, prefix="kafkapy-cleaner-bench-") as tmp:
        root = Path(tmp)
        for rep in range(s.repeat):
            if "inprocess" in s.sections:
                progress(f"[{rep + 1}/{s.repeat}] in-process cleaner")
                run_inprocess(s, res, root, rep)
            if "broker" in s.sections:
                progress(f"[{rep + 1}/{s.repeat}] broker")
                run_broker(s, res, root, rep)
    table = render(res, s)
    print(table)
    duration = time.monotonic() - started
    progress(f"done in {duration:.0f} s")
    payload = {
        "mode": "quick" if s.quick else "full",
        "repeat": s.repeat,
        "cpu_count": os.cpu_count(),
        "duration_s": duration,
        "loadavg_at_start": load0,
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in s.__dict__.items()},
        "rows": {k: {**r.__dict__, "median": res.median(k)} for k, r in res.rows.items()},
        "notes": res.notes,
        "samples": res.samples,
    }
    out = s.output
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n")
    progress(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
