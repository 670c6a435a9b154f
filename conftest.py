"""Fixtures shared by tests/ and compat_tests/: real ZooKeeper servers (Debian's zookeeper
package) on free loopback ports in temp dirs, stopped after use; and kafkapy's pytest plugin
(kafka_broker, kafka_broker_factory, kafka_cluster, ...) even in a checkout whose editable install
predates its ``pytest11`` entry point (until ``scripts/bootstrap.sh --tests`` reinstalls it)."""

from __future__ import annotations

import pytest

from kafkapy.testing_zk import ZooKeeperEnsemble, ZooKeeperServer


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("kafkapy") and not config.pluginmanager.is_blocked(
        "kafkapy"
    ):
        from kafkapy.testing import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "kafkapy")


@pytest.fixture
def zookeeper(tmp_path):
    """A standalone ZooKeeper server of this test's own on a free loopback port."""
    server = ZooKeeperServer(tmp_path / "zookeeper")
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def zookeeper_shared(tmp_path_factory):
    """One ZooKeeper server for a whole test module (isolate tests with a chroot each)."""
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def zk_ensemble(tmp_path):
    """A three-server ZooKeeper ensemble on loopback ports; nodes can be stopped and started."""
    ensemble = ZooKeeperEnsemble(tmp_path / "ensemble", 3)
    try:
        yield ensemble.start()
    finally:
        ensemble.stop()
