"""Helpers shared by the benchmark scripts: progress lines, core pinning, figure formatting.

The scripts run as `python benchmarks/<name>.py`, so this module is imported as `common`.
"""

from __future__ import annotations

import os
import statistics
import sys
import time


def parse_sections(only: str | None, known: tuple[str, ...]) -> tuple[str, ...]:
    """The sections named by --only (comma-separated), all of ``known`` without it."""
    chosen = tuple(only.split(",")) if only else known
    unknown = set(chosen) - set(known)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; known: {', '.join(known)}")
    return chosen


def progress(msg: str, tag: str = "bench") -> None:
    """One timestamped progress line on stderr."""
    print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pin(cpu: int) -> None:
    """Pin the calling thread (pid 0 = this thread on Linux) to one core."""
    os.sched_setaffinity(0, {cpu})


def fmt(v: float) -> str:
    """A figure with as many digits as its size deserves."""
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.3f}"


def fmt_values(vals: list[float]) -> str:
    """Median with (min–max) of repeated runs; the value alone for one run; – for none."""
    if not vals:
        return "–"
    med = fmt(statistics.median(vals))
    return med if len(vals) == 1 else f"{med} ({fmt(min(vals))}–{fmt(max(vals))})"
