"""Kafka's Throttler: the cleaner's I/O kept at log.cleaner.io.max.bytes.per.second."""

from __future__ import annotations

from kafkapy.storage.io_throttle import Throttler


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_io_over_the_rate_sleeps_it_back_down():
    t = FakeTime()
    th = Throttler(1000.0, clock=t.clock, sleep=t.sleep)
    for _ in range(100):  # 100 x 100 bytes, each read taking 10 ms: 10,000 B/s wanted
        t.now += 0.01
        th.maybe_throttle(100)
    # 10,000 bytes at 1,000 B/s take about 10 s however fast the I/O itself is
    assert 9.0 <= t.now <= 10.5


def test_io_under_the_rate_and_unlimited_never_sleep():
    t = FakeTime()
    slow = Throttler(1e6, clock=t.clock, sleep=t.sleep)
    free = Throttler(1.7976931348623157e308, clock=t.clock, sleep=t.sleep)
    for _ in range(100):
        t.now += 0.01
        slow.maybe_throttle(100)
        free.maybe_throttle(10**9)
    assert slow.slept_s == free.slept_s == 0 and abs(t.now - 1.0) < 1e-9
