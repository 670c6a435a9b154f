"""CPU time and memory of a process, read from Linux's /proc: what benchmarks and resource tests
measure of a broker (``TestBroker.usage()``), of a client process or of this one ("self").

Kafka has no counterpart in its broker; its benchmarks (ProducerPerformance and the system tests)
read the same figures from the operating system. CPU is split as /proc/<pid>/stat splits it: user
time (Python's own work in a broker) and system time (the kernel's socket and page-cache copies).
Peak RSS is VmHWM, which ``reset_peak()`` sets back to the current RSS (``clear_refs`` 5), so a
peak can be taken over one measured block instead of the process's life.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


class ProcessUsage:
    """CPU and memory figures of one process (``pid``, or "self" for this one)."""

    def __init__(self, pid: int | str = "self") -> None:
        self.pid = pid

    def cpu_user_sys(self) -> tuple[float, float]:
        """(user, system) CPU seconds used so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK

    def cpu_seconds(self) -> float:
        """User plus system CPU seconds used so far."""
        return sum(self.cpu_user_sys())

    def status_kib(self, key: str) -> int:
        """A KiB figure of /proc/<pid>/status (``VmRSS``, ``VmHWM``, ...); 0 when absent."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return 0

    def rss_mb(self) -> float:
        return self.status_kib("VmRSS") / 1024

    def peak_rss_mb(self) -> float:
        """The largest RSS since the process started or since ``reset_peak()``, in MiB."""
        return self.status_kib("VmHWM") / 1024

    def reset_peak(self) -> None:
        """Start a new peak RSS from the current RSS (silently nothing where not permitted)."""
        with contextlib.suppress(OSError):
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")


@contextlib.contextmanager
def measured(usage: ProcessUsage) -> Iterator[dict[str, float]]:
    """Yield a dict filled, when the block ends, with its wall time (``elapsed``), the process's
    CPU seconds in it (``cpu_s``, ``cpu_user_s``, ``cpu_sys_s``) and its peak RSS
    (``peak_rss_mb``)."""
    out: dict[str, float] = {}
    usage.reset_peak()
    user0, sys0 = usage.cpu_user_sys()
    t0 = time.perf_counter()
    yield out
    out["elapsed"] = time.perf_counter() - t0
    user1, sys1 = usage.cpu_user_sys()
    out["cpu_user_s"], out["cpu_sys_s"] = user1 - user0, sys1 - sys0
    out["cpu_s"] = out["cpu_user_s"] + out["cpu_sys_s"]
    out["peak_rss_mb"] = usage.peak_rss_mb()
