"""Crash-loop soak: N kill -9/restart cycles of a single broker, and of each broker in turn of a
three-broker cluster (replication factor 3, min.insync.replicas=2), under idempotent acks=all
producers and a committing consumer group. It is a proof run, not a timing: it fails (exit 1)
if one acknowledged record is lost, moved or duplicated, or a committed offset goes backwards or
points past the log.

    .venv/bin/python benchmarks/soak.py                      # 20 cycles each, ~6 minutes
    .venv/bin/python benchmarks/soak.py --cycles 60 --only cluster
    .venv/bin/python benchmarks/soak.py --cycles 5 --load-seconds 2   # a quick look

Workload and checks: kafkapy/testing/soak.py; the crash loops: kafkapy/testing/crash_loop.py
(two producers at --rate records/s each, two consumers committing every 50 records, a
three-partition topic with 256 KiB segments; a kill at a random point of each --load-seconds
period; the single broker uses the embedded metadata store, the cluster a real ZooKeeper with a
6 s session timeout). Progress goes to stderr, the markdown table to stdout and every figure to
benchmarks/results/soak.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from common import fmt, parse_sections, progress

from kafkapy.testing.crash_loop import soak_cluster, soak_single
from kafkapy.testing.soak import SoakResult

RESULTS = Path(__file__).resolve().parent / "results"
SECTIONS = ("single", "cluster")


def table(results: list[SoakResult]) -> str:
    head = (
        "| scenario | cycles | records acked | lost | duplicated | committed offsets checked "
        "| recovery p50 (s) | recovery max (s) | peak RSS per broker (MiB) |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    rows = []
    for r in results:
        p50, worst = r.recovery()
        lost = r.lost + r.misplaced
        rows.append(
            f"| {r.scenario} | {r.cycles} | {r.acked:,} | {lost} | {r.duplicated} "
            f"| {r.offsets_checked} ({r.commits:,} commits) | {fmt(p50)} | {fmt(worst)} "
            f"| {r.peak_rss_kib / 1024:.0f} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=20, help="kill/restart cycles per scenario")
    parser.add_argument("--load-seconds", type=float, default=4.0, help="load between kills")
    parser.add_argument("--rate", type=int, default=300, help="records/s per producer (2 of them)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help=f"comma-separated sections: {', '.join(SECTIONS)}")
    args = parser.parse_args()
    chosen = parse_sections(args.only, SECTIONS)

    def report(msg: str) -> None:
        progress(msg, "soak")

    results = []
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="kafkapy-soak-") as tmp:
        for section in chosen:
            run = soak_single if section == "single" else soak_cluster
            report(f"{section}: {args.cycles} cycles, {args.load_seconds} s of load between kills")
            results.append(
                run(
                    Path(tmp) / section,
                    cycles=args.cycles,
                    load_s=args.load_seconds,
                    seed=args.seed,
                    rate=args.rate,
                    progress=report,
                )
            )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "soak.json").write_text(
        json.dumps(
            {
                "started": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)),
                "args": vars(args),
                "results": [asdict(r) for r in results],
            },
            indent=2,
        )
    )
    print(table(results))
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"FAILED {r.scenario}:", file=sys.stderr)
        for line in r.examples + r.offset_violations + r.client_errors:
            print(f"  {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
