"""The log cleaner benchmark's in-process section: one full LogCleaner pass over a filled
PartitionLog in a fresh process on the broker's core, next to this machine's read and write
ceilings and a decode-only reference."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import time
import uuid
from pathlib import Path

from cleaner_common import (
    BROKER_CPU,
    CLIENT_CPU,
    MB,
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
from common import pin


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
