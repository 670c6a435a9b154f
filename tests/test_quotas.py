"""Client quotas without I/O (kafkapy.quotas): Kafka's sampled-rate arithmetic and throttle
times, the quota entity resolution order and shared usage of ClientQuotaManager, connection
creation rates per IP and broker-wide."""

from __future__ import annotations

import math

import pytest

from kafkapy.quotas.client_quota_manager import DEFAULT, ClientQuotaManager, QuotaEntity
from kafkapy.quotas.connection_rate import ConnectionRates
from kafkapy.quotas.rate import QuotaRate


def test_first_burst_is_averaged_over_the_full_window() -> None:
    rate = QuotaRate(samples=11, window_ms=1000, bound=40.0)
    # one record at t=0: the span is (samples - 1) windows = 10 s, so 500 -> 50/s
    assert rate.record(500, 0) == 2500  # (50 - 40) / 40 * 10000 ms
    assert rate.measure(0) == pytest.approx(50.0)
    assert rate.window_size(4500) == 10500  # 4.5 s elapsed, padded to 10 whole windows
    assert rate.window_size(10_500) == 10_500  # then the real elapsed span


def test_steady_rate_under_the_bound_is_not_throttled_and_above_it_is() -> None:
    under, above = QuotaRate(11, 1000, 1000.0), QuotaRate(11, 1000, 1000.0)
    throttles_under, throttles_above = [], []
    for t in range(0, 30_000, 100):  # 90 and 150 per 100 ms for 30 s
        throttles_under.append(under.record(90, t))
        throttles_above.append(above.record(150, t))
    assert max(throttles_under) == 0
    assert under.measure(29_900) == pytest.approx(900.0, rel=0.1)
    assert above.measure(29_900) == pytest.approx(1500.0, rel=0.1)
    # the delay that brings 1500/s back to 1000/s over an ~11 s span: ~5.5 s
    assert 4500 <= throttles_above[-1] <= 6000


def test_idle_samples_expire_and_throttles_can_be_capped() -> None:
    rate = QuotaRate(11, 1000, 10.0)
    assert rate.record(1000, 0, max_throttle_ms=1000) == 1000
    assert rate.measure(5000) > 10
    assert rate.measure(11_000) == 0  # every sample older than 11 windows is reset
    rate.add(-1000, 11_000)  # un-recording is just a negative value
    assert rate.record(0, 11_000) == 0


def test_quota_resolution_order_is_kafkas() -> None:
    m = ClientQuotaManager()
    assert not m.enabled and m.record("u", "c", 10**9, 0) == 0  # nothing recorded when disabled
    m.set_quota(QuotaEntity(None, DEFAULT), 1)
    m.set_quota(QuotaEntity(None, "c1"), 2)
    m.set_quota(QuotaEntity(DEFAULT, None), 3)
    m.set_quota(QuotaEntity(DEFAULT, DEFAULT), 4)
    m.set_quota(QuotaEntity(DEFAULT, "c1"), 5)
    m.set_quota(QuotaEntity("u1", None), 6)
    m.set_quota(QuotaEntity("u1", DEFAULT), 7)
    m.set_quota(QuotaEntity("u1", "c1"), 8)
    assert m.quota_for("u1", "c1") == 8  # /users/u1/clients/c1
    assert m.quota_for("u1", "c2") == 7  # /users/u1/clients/<default>
    assert m.quota_for("u2", "c1") == 5  # /users/<default>/clients/c1
    assert m.quota_for("u2", "c2") == 4  # /users/<default>/clients/<default>
    m.set_quota(QuotaEntity("u1", DEFAULT), None)
    m.set_quota(QuotaEntity("u1", "c1"), None)
    assert m.quota_for("u1", "c2") == 6  # /users/u1
    assert m.quota_for("u1", "c1") == 6
    m.set_quota(QuotaEntity(DEFAULT, DEFAULT), None)
    m.set_quota(QuotaEntity(DEFAULT, "c1"), None)
    assert m.quota_for("u2", "c2") == 3  # /users/<default>
    m.set_quota(QuotaEntity(DEFAULT, None), None)
    m.set_quota(QuotaEntity("u1", None), None)
    assert m.quota_for("u2", "c1") == 2  # /clients/c1
    assert m.quota_for("u2", "c9") == 1  # /clients/<default>


def test_usage_is_shared_by_everyone_under_the_same_entity() -> None:
    m = ClientQuotaManager(samples=11, window_s=1)
    m.set_quota(QuotaEntity(None, "shared"), 100.0)
    # two users with the same client id share one rate: 600 + 600 over 10 s = 120/s > 100
    assert m.record("alice", "shared", 600, 0) == 0
    assert m.record("bob", "shared", 600, 0) == 2000
    assert m.record("bob", "other", 10**6, 0) == 0  # no quota for that client id
    assert m.max_value_in_window("x", "shared") == 100.0 * 10  # quota * (samples-1) * window
    assert m.max_value_in_window("x", "other") == math.inf
    # a user quota makes usage per user
    m.set_quota(QuotaEntity("alice", None), 50.0)
    assert m.record("alice", "shared", 400, 0) == 0
    assert m.record("alice", "other", 200, 0) == 2000  # (60 - 50) / 50 * 10000
    m.record_only("alice", "other", -200, 0)
    assert m.record("alice", "x", 0, 0) == 0


def test_request_time_throttles_are_capped_at_one_window() -> None:
    m = ClientQuotaManager(samples=11, window_s=1, max_throttle_ms=1000)
    m.set_quota(QuotaEntity("u", None), 10.0)  # 10 % of a handler
    assert m.record("u", "c", 500.0, 0) == 1000  # 5000 % would be a 49 s delay


def test_connection_creation_rates() -> None:
    rates = ConnectionRates(samples=11, window_s=1)
    assert not rates.active
    rates.set_ip_rate("10.0.0.1", 2)
    assert rates.active and rates.ip_rate("10.0.0.2") == 2**31 - 1
    got = [rates.on_new_connection("10.0.0.1", 0) for _ in range(25)]
    admitted = [a for a in got if not a.refused]
    assert len(admitted) == 20  # 20 over the 10 s minimum span = 2/s
    assert all(0 < a.delay_ms <= 1000 for a in got if a.refused)
    assert not any(rates.on_new_connection("10.0.0.2", 0).refused for _ in range(50))
    rates.set_ip_rate(None, 1)  # the default for every other address
    assert sum(rates.on_new_connection("10.0.0.3", 0).refused for _ in range(15)) == 5
    rates.set_ip_rate("10.0.0.1", None)
    rates.set_ip_rate(None, None)
    assert not rates.active
    # broker-wide: connections are served after a delay, never refused
    rates = ConnectionRates(samples=11, window_s=1, broker_max=5)
    delays = [rates.on_new_connection(f"10.1.0.{i}", 0) for i in range(60)]
    assert not any(a.refused for a in delays)
    assert delays[0].delay_ms == 0 and 0 < delays[-1].delay_ms <= 1000
