"""Sampling a broker's Python stacks with py-spy while a load runs (``TestBroker.profile()``), for
benchmarks that show where the broker's time goes.

py-spy (``pip install py-spy``) attaches to a running process and samples it without stopping
it (``--nonblocking``); the stacks are written in the "raw" collapsed format that speedscope and
flamegraph.pl load. Kafka's counterpart is a JFR or async-profiler recording of the broker's JVM.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def py_spy_binary() -> Path | None:
    """py-spy installed beside this interpreter (in its virtualenv), or None."""
    spy = Path(sys.executable).with_name("py-spy")
    return spy if spy.exists() else None


def start_py_spy(
    pid: int, out: Path, seconds: float, rate: int = 250
) -> subprocess.Popen[bytes] | None:
    """Start py-spy recording process ``pid`` for ``seconds`` at ``rate`` samples a second into
    ``out`` (collapsed stacks); None when py-spy is not installed. Wait for the returned process
    (``communicate()``: its stderr says why when ``out`` was not written)."""
    spy = py_spy_binary()
    if spy is None:
        return None
    return subprocess.Popen(
        [str(spy), "record", "-p", str(pid), "-r", str(rate), "-d", str(int(seconds)),
         "-f", "raw", "--nonblocking", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
