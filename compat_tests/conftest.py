"""Fixtures: a real kafkapy broker process on a free loopback port, stopped after each test.

These are the compat tests' names for the pytest plugin's machinery (kafkapy/testing/
pytest_plugin.py): ``broker`` and ``broker_factory`` are ``kafka_broker_factory`` brokers run as
subprocesses on disk with Kafka's own defaults, checked for a clean shutdown;
``module_broker_factory`` starts the same for a module's tests to share (a module's own
``broker`` fixture calls it with that module's settings); ``cluster`` is ``kafka_cluster`` (a
module's ``pytestmark = pytest.mark.kafka_cluster(overrides={...})`` sets its brokers' settings);
``spark`` is the local Spark session with kafkapy's source registered. One way to start brokers
and clusters for the project's tests and for users' alike. (``pki``, the test certificates, is in
the repository's root conftest.py, shared with tests/.)
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
    return kafka_broker_factory(
        "process", "disk", data_dir=tmp_path / "broker", kafka_defaults=False, clean_stop=True
    )


@pytest.fixture
def broker_factory(kafka_broker_factory, tmp_path):
    """Start brokers with config overrides; each is stopped at the end of the test (with
    ``clean_stop``, which must then shut it down cleanly)."""

    def start(overrides=None, name="broker", clean_stop=False):
        return kafka_broker_factory(
            "process",
            "disk",
            data_dir=tmp_path / name,
            overrides=overrides,
            kafka_defaults=False,
            clean_stop=clean_stop,
        )

    return start


@pytest.fixture(scope="module")
def module_broker_factory(kafka_module_broker_factory):
    """Start brokers a module's tests share, as ``broker`` is started (a subprocess on disk, Kafka's
    own defaults, a clean shutdown checked), with config overrides; ``port``: the listener to
    bootstrap from when ``listeners`` names several. Each is stopped at the end of the module."""

    def start(overrides=None, name="broker", port=None):
        return kafka_module_broker_factory(
            "process",
            "disk",
            name=name,
            port=port,
            overrides=overrides,
            kafka_defaults=False,
            clean_stop=True,
        )

    return start


# ZooKeeper fixtures (zookeeper, zk_ensemble) live in the repository's root conftest.py


@pytest.fixture(scope="module")
def cluster(kafka_cluster):
    """A three-broker cluster on its own ZooKeeper, shared by a module's tests."""
    return kafka_cluster


@pytest.fixture(scope="session")
def spark():
    """The local Spark session (one per process: kafkapy.spark.testing.local_session) with
    kafkapy's ``format("kafkapy")`` registered."""
    from kafkapy.spark import register
    from kafkapy.spark.testing import local_session

    session = local_session()
    register(session)
    return session
