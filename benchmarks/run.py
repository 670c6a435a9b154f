"""kafkapy benchmark suite (issue 8): every figure next to this machine's own ceiling, measured
in the same run.

    .venv/bin/python benchmarks/run.py --quick          # 3-4 minutes, the README figures
    .venv/bin/python benchmarks/run.py                  # full: 3 repeats, longer runs, 2 GiB fetch
    .venv/bin/python benchmarks/run.py --quick --repeat 1 --only fetch --profile

Sections (--only): ceilings, requests, produce, kafka-python, fetch, latency, scale,
cluster.
Progress goes to stderr; the table to stdout; JSON (every sample), the markdown table and the
latency plot to benchmarks/results/<mode>.{json,md} and latency-<mode>.png. With --profile,
py-spy (.venv/bin/pip install py-spy) samples the broker under produce load (100 B, 1 KiB; the
confluent-kafka and the raw Produce loop), under Metadata of 1,000 partitions and, when the
fetch section runs, under fetch load; the top functions (self and inclusive) and the collapsed
stacks (loadable in speedscope or flamegraph.pl) go to benchmarks/results/profiles/, which is
not committed.

Method: the broker runs on core 1, every client (and this script) on core 0, the same in every
compared run; ceilings put the receiving side on core 0 and the sending/writing side on core 1,
the broker's. Fetch data is read once before it is measured (page cache warm). Each figure is
the median of --repeat runs with min-max. Broker peak RSS is VmHWM from /proc, reset before
each run (clear_refs 5); CPU is the broker's utime+stime over the run, utime (Python) also
separately. Produce brokers free deleted topics at once (file.delete.delay.ms=0) so that they
write into recycled page cache as the write ceiling does (benchmarks/README.md, Method). The
latency section (latency.py) offers fractions of its own end-to-end maximum.

Modules: suite.py (settings, the results table, the pinned broker), one suite_<section>.py per
section (ceilings, produce, fetch, latency, scale, from_scripts: requests, sessions, cleaner and
cluster), suite_profiles.py (--profile), suite_report.py (tables, summary, plot, --report),
raw_client.py (the raw Produce/Fetch/Metadata client the sections share).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import suite
from common import pin, progress
from suite import BROKER_CPU, CLIENT_CPU, SECTIONS, Results, Settings, guarded
from suite_ceilings import run_ceilings
from suite_fetch import run_fetch
from suite_from_scripts import run_cleaner, run_cluster, run_requests, run_sessions
from suite_latency import run_latency
from suite_produce import run_kafka_python, run_produce
from suite_profiles import run_profiles
from suite_report import load_results, targets, write_reports
from suite_scale import run_scale


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ~3 minute README run")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (full: 3, quick: 2)")
    ap.add_argument("--only", help=f"comma-separated sections of: {','.join(SECTIONS)}")
    ap.add_argument("--profile", action="store_true", help="py-spy the broker under load")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="parent of the brokers' log dirs (default: a temporary directory)")
    ap.add_argument("--results", type=Path, default=suite.RESULTS,
                    help="directory for the JSON, tables and plot (default: benchmarks/results)")
    ap.add_argument("--report", type=Path, default=None,
                    help="only re-render the tables and plot from a results JSON file")
    args = ap.parse_args()
    suite.RESULTS = args.results
    suite.RESULTS.mkdir(parents=True, exist_ok=True)
    if args.report:
        res, s = load_results(args.report)
        write_reports(res, s)
        return 0
    s = Settings.from_args(args)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    pin(CLIENT_CPU)
    res = Results()
    res.extra["loadavg_start"] = os.getloadavg()
    started = time.monotonic()
    if s.data_dir:
        s.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=s.data_dir, prefix="kafkapy-bench-") as tmp:
        root = Path(tmp)
        for rep in range(s.repeat):
            runs = [("ceilings", run_ceilings), ("requests", run_requests),
                    ("produce", run_produce),
                    ("kafka-python", run_kafka_python), ("fetch", run_fetch),
                    ("latency", run_latency), ("scale", run_scale),
                    ("sessions", run_sessions), ("cleaner", run_cleaner)]
            for name, fn in runs:
                if name in s.sections:
                    progress(f"[{rep + 1}/{s.repeat}] {name}")
                    guarded(res, name, functools.partial(fn, s, res, root, rep))
        if s.profile:
            guarded(res, "profile", functools.partial(run_profiles, s, res, root))
        if "cluster" in s.sections:
            progress("cluster")
            guarded(res, "cluster", functools.partial(run_cluster, s, res, root))
    mode = "quick" if s.quick else "full"
    res.extra["duration_s"] = time.monotonic() - started
    res.extra["loadavg_end"] = os.getloadavg()
    payload = {
        "mode": mode, "repeat": s.repeat, "cpu_count": os.cpu_count(),
        "broker_cpu": BROKER_CPU, "client_cpu": CLIENT_CPU,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(s).items()},
        "rows": {k: vars(r) for k, r in res.rows.items()},
        "targets": [dict(zip(("target", "measured", "required", "met"), t, strict=True))
                    for t in targets(res)],
        "extra": res.extra,
    }
    (suite.RESULTS / f"{mode}.json").write_text(json.dumps(payload, indent=2, default=str))
    write_reports(res, s)
    progress(f"done in {res.extra['duration_s']:.0f} s; results in {suite.RESULTS}/{mode}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
