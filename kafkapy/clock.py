"""The broker's clocks, in one place (Kafka's ``Time``/``SystemTime``).

``now_ms`` is wall-clock time in milliseconds: timestamps written to logs, znodes and the
coordinators' records, and every deadline compared with them. ``monotonic_ms`` never jumps with
the wall clock: use it for durations and timeouts measured inside one process (long-poll waits,
quota windows). Tests that need another time pass ``now_ms=`` explicitly where an API takes it.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the epoch, as Kafka's ``Time.milliseconds()``."""
    return time.time_ns() // 1_000_000


def monotonic_ms() -> int:
    """Milliseconds of a clock that never goes back, as Kafka's ``Time.hiResClockMs()``."""
    return time.monotonic_ns() // 1_000_000


def monotonic_ms_float() -> float:
    """``monotonic_ms`` with sub-millisecond precision (quota windows and throttle times)."""
    return time.monotonic() * 1000.0
