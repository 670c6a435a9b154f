"""Kafka's Throttler, sans-io apart from the sleep: keeps a stream of I/O (the log cleaner's
reads and writes) at or below a byte rate (``log.cleaner.io.max.bytes.per.second``).

``maybe_throttle(n)`` records ``n`` bytes; once per check interval (300 ms, as Kafka) the rate
observed since the last check is compared with the desired one, and when it is higher the caller
sleeps as long as it takes to bring it back down. A rate of infinity (Kafka's default,
Double.MaxValue) never sleeps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

CHECK_INTERVAL_S = 0.3


class Throttler:
    def __init__(
        self,
        bytes_per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        check_interval_s: float = CHECK_INTERVAL_S,
    ) -> None:
        self.rate = bytes_per_second
        self._clock = clock
        self._sleep = sleep
        self._interval = check_interval_s
        self._start = clock()
        self._observed = 0.0
        self.slept_s = 0.0

    @property
    def unlimited(self) -> bool:
        return not (0 < self.rate < math.inf) or self.rate >= 1.7e308

    def maybe_throttle(self, n: int) -> None:
        if self.unlimited:
            return
        self._observed += n
        now = self._clock()
        elapsed = now - self._start
        if elapsed < self._interval:
            return
        if self._observed / elapsed > self.rate:
            wait = self._observed / self.rate - elapsed
            if wait > 0:
                self._sleep(wait)
                self.slept_s += wait
                now = self._clock()
        self._start = now
        self._observed = 0.0
