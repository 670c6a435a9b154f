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

Modules: cleaner_common.py (settings, results, the records), cleaner_inprocess.py and
cleaner_broker.py (the two sections); this one renders the table and holds the options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from cleaner_broker import run_broker
from cleaner_common import (
    BROKER_CPU,
    CLIENT_CPU,
    RESULTS,
    SECTIONS,
    SEGMENT_BYTES,
    UNIQUE_FRACTION,
    MiB,
    Results,
    Settings,
    progress,
)
from cleaner_inprocess import CODECS, run_inprocess
from common import fmt_values, pin


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
