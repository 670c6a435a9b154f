"""Crash loops, short: kill -9 and restart a single broker, then each broker of a 3-broker RF=3
cluster in turn, under idempotent acks=all producers and a committing consumer group; nothing
acknowledged is lost, moved or duplicated and committed offsets stay intact (the long run is
benchmarks/soak.py; the workload and checks are kafkapy/testing/soak.py)."""

from __future__ import annotations

import pytest

from kafkapy.testing.crash_loop import soak_cluster, soak_single
from kafkapy.testing.soak import SoakResult, committed_problems, tally


def assert_clean(result: SoakResult, cycles: int) -> None:
    detail = result.examples + result.offset_violations + result.client_errors
    assert result.cycles == cycles
    assert result.acked > 1000, "the producers made no progress"
    assert result.commits > 10 and result.offsets_checked == 3 * (cycles + 1)
    assert (result.lost, result.misplaced, result.duplicated) == (0, 0, 0), detail
    assert result.offset_violations == [] and result.client_errors == [], detail


@pytest.mark.timeout(120)
def test_single_broker_crash_loop(tmp_path):
    assert_clean(soak_single(tmp_path, cycles=3, load_s=2.0, progress=lambda m: None), 3)


@pytest.mark.timeout(180)
def test_cluster_crash_loop_kills_each_broker(tmp_path):
    assert_clean(soak_cluster(tmp_path, cycles=3, load_s=2.0, progress=lambda m: None), 3)


def test_the_checks_catch_loss_moves_duplicates_and_offsets_going_back():
    acked = {b"a": (0, 0), b"b": (0, 1), b"c": (1, 0), b"d": (1, 1)}
    records = {0: [(0, b"a"), (1, b"x")], 1: [(0, b"c"), (1, b"d"), (2, b"c")]}
    result = SoakResult("synthetic")
    tally(result, acked, records)
    assert (result.lost, result.misplaced, result.duplicated) == (1, 0, 1)  # b lost, c twice
    result = SoakResult("synthetic")
    tally(result, {b"a": (0, 1)}, {0: [(0, b"a")]})
    assert result.misplaced == 1
    marks = {0: (0, 100), 1: (0, 50)}
    assert committed_problems({0: 80, 1: 50}, {0: 80, 1: 40}, marks) == []
    assert committed_problems({0: 79, 1: 50}, {0: 80}, marks) == [
        "partition 0: committed offset 79 went back below 80"
    ]
    assert committed_problems({1: 51}, {}, marks) == [
        "partition 1: committed offset 51 outside [0, 50]"
    ]
