"""A sampled rate with a bound, as Kafka's Sensor with a Rate stat and a quota computes it.

Kafka keeps ``quota.window.num`` samples of ``quota.window.size.seconds`` each (plus one that may
overlap the monitored window). A value recorded at time t goes to the current sample, or starts a
new one when the current sample is as old as a window. The rate is the sum of the samples over
the elapsed span, where the span is at least ``samples - 1`` whole windows (so a first burst is
averaged over ~10 s by default rather than measured as a spike); samples whose last event is
older than ``samples * window`` are reset.

:meth:`QuotaRate.record` records and returns the throttle time Kafka's QuotaUtils computes when
the rate is above the bound: the delay X that brings the observed rate O back to the bound T
over the window W, O * W / (W + X) = T, i.e. X = (O - T) / T * W, in milliseconds (rounded).
"""

from __future__ import annotations

import math


class _Sample:
    __slots__ = ("value", "events", "start_ms", "last_ms")

    def __init__(self, now_ms: float) -> None:
        self.reset(now_ms)

    def reset(self, now_ms: float) -> None:
        self.value = 0.0
        self.events = 0
        self.start_ms = now_ms
        self.last_ms = now_ms


class QuotaRate:
    """A rate per second over sampled windows, with an upper bound (see the module doc)."""

    def __init__(self, samples: int = 11, window_ms: int = 1000, bound: float = math.inf) -> None:
        self.num = max(samples, 1)
        self.window_ms = window_ms
        self.bound = bound
        self._samples: list[_Sample] = []
        self._current = 0
        self.last_record_ms = 0.0

    # -- recording -------------------------------------------------------------------------------
    def add(self, value: float, now_ms: float) -> None:
        """Record ``value`` without checking the bound (Kafka's record(..., checkQuotas=false))."""
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.events += 1
        sample.last_ms = now_ms
        self.last_record_ms = now_ms

    def record(self, value: float, now_ms: float, max_throttle_ms: float | None = None) -> int:
        """Record ``value``; the throttle time in ms when the rate is now above the bound (capped
        at ``max_throttle_ms`` when given), else 0."""
        self.add(value, now_ms)
        if self.bound == math.inf:
            return 0
        rate = self.measure(now_ms)
        if rate <= self.bound:
            return 0
        if self.bound <= 0:
            throttle = self.window_size(now_ms)
        else:
            throttle = (rate - self.bound) / self.bound * self.window_size(now_ms)
        if max_throttle_ms is not None:
            throttle = min(throttle, max_throttle_ms)
        return int(math.floor(throttle + 0.5))  # Java's Math.round

    # -- measuring -------------------------------------------------------------------------------
    def measure(self, now_ms: float) -> float:
        """The rate per second at ``now_ms``."""
        self._purge(now_ms)
        total = sum(s.value for s in self._samples)
        return total / (self.window_size(now_ms) / 1000.0)

    def window_size(self, now_ms: float) -> float:
        """The span in ms the rate is computed over (Kafka's Rate.windowSize)."""
        self._purge(now_ms)
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        oldest = min(s.start_ms for s in self._samples)
        elapsed = now_ms - oldest
        full = int(elapsed // self.window_ms)
        if full < self.num - 1:
            elapsed += (self.num - 1 - full) * self.window_ms
        return max(elapsed, 1.0)

    # -- samples ---------------------------------------------------------------------------------
    def _current_sample(self, now_ms: float) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: float) -> _Sample:
        self._current = (self._current + 1) % (self.num + 1)
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _purge(self, now_ms: float) -> None:
        expire = self.num * self.window_ms
        for s in self._samples:
            if now_ms - s.last_ms >= expire:
                s.reset(now_ms)
