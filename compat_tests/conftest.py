"""Fixtures: a real kafkapy broker process on a free loopback port, stopped after each test.

These are the compat tests' names for the pytest plugin's machinery (kafkapy/testing/
pytest_plugin.py): ``broker`` and ``broker_factory`` are ``kafka_broker_factory`` brokers run as
subprocesses on disk with Kafka's own defaults, ``cluster`` is ``kafka_cluster``. One way to start
brokers and clusters for the project's tests and for users' alike.
"""

from __future__ import annotations

import pytest

from compat_tests.suites.jvm import configure_spark_kafka_connector

# Spark's kafka connector from Maven Central (see suites/artifacts.py) on Spark's class path
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
def broker(kafka_broker_factory, tmp_path):
    proc = kafka_broker_factory(
        "process", "disk", data_dir=tmp_path / "broker", kafka_defaults=False
    )
    yield proc
    code = proc.stop()
    assert code == 0, f"broker did not shut down cleanly (exit {code}):\n{proc.log_text()[-3000:]}"


@pytest.fixture
def broker_factory(kafka_broker_factory, tmp_path):
    """Start brokers with config overrides; each is stopped at the end of the test."""

    def start(overrides=None, name="broker"):
        return kafka_broker_factory(
            "process", "disk", data_dir=tmp_path / name, overrides=overrides, kafka_defaults=False
        )

    return start


# ZooKeeper fixtures (zookeeper, zk_ensemble) live in the repository's root conftest.py


@pytest.fixture(scope="module")
def cluster(kafka_cluster):
    """A three-broker cluster on its own ZooKeeper, shared by a module's tests."""
    return kafka_cluster
