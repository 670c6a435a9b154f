"""Fixtures: a real kafkapy broker process on a free loopback port, stopped after each test."""

from __future__ import annotations

import pytest

from compat_tests.suites.jvm import configure_spark_kafka_connector
from kafkapy.testing import BrokerProcess

# Spark's kafka connector from ../shared/jvm/spark-kafka when it is there (see suites/jvm.py)
configure_spark_kafka_connector()


def pytest_addoption(parser):
    group = parser.getgroup("kafkapy wire fuzzer (compat_tests/test_fuzz_wire.py)")
    group.addoption(
        "--fuzz-minutes",
        type=float,
        default=0.0,
        help="fuzz the broker's wire protocol for this many minutes (default: a short run); "
        "failing inputs are saved to compat_tests/fuzz/cases/",
    )
    group.addoption(
        "--fuzz-seed",
        default=None,
        help="seed of the wire fuzzer (default: fixed for the short run, random for long runs)",
    )


def pytest_collection_modifyitems(config, items):
    """A long fuzz run outlasts the suite's per-test timeout: give it its own."""
    minutes = config.getoption("--fuzz-minutes")
    if minutes:
        for item in items:
            if item.name == "test_fuzz_the_wire":
                item.add_marker(pytest.mark.timeout(minutes * 60 + 300))


@pytest.fixture
def broker(tmp_path):
    proc = BrokerProcess(tmp_path / "broker")
    proc.start()
    yield proc
    code = proc.stop()
    assert code == 0, f"broker did not shut down cleanly (exit {code}):\n{proc.log_text()[-3000:]}"


@pytest.fixture
def broker_factory(tmp_path):
    """Start brokers with config overrides; each is stopped at the end of the test."""
    started: list[BrokerProcess] = []

    def start(overrides=None, name="broker"):
        proc = BrokerProcess(tmp_path / name, overrides)
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()


# ZooKeeper fixtures (zookeeper, zk_ensemble) live in the repository's root conftest.py


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A three-broker cluster on its own ZooKeeper, shared by a module's tests."""
    from kafkapy.testing_cluster import Cluster
    from kafkapy.testing_zk import ZooKeeperServer

    base = tmp_path_factory.mktemp("cluster")
    server = ZooKeeperServer(base / "zookeeper")
    server.start()
    c = Cluster(base, server.connect_string)
    try:
        yield c.start()
    finally:
        c.stop()
        server.stop()
