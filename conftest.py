"""Fixtures shared by tests/ and compat_tests/: real ZooKeeper servers (Debian's zookeeper
package) on free loopback ports in temp dirs, stopped after use; test certificates (``pki``);
and kafkapy's pytest plugin (kafka_broker, kafka_broker_factory, kafka_cluster, ...) even in a
checkout whose editable install predates its ``pytest11`` entry point (until
``scripts/bootstrap.sh --tests`` reinstalls it).

Skips are counted: the run ends with a line "skips: N", and with ``--no-skips`` (the README's
test command passes it) a run that skipped anything fails, naming each skipped test and its
reason: everything the tests need is installed by scripts/bootstrap.sh --tests, so a skip there
hides a test that did not run."""

from __future__ import annotations

import pytest

from kafkapy.testing.zookeeper import ZooKeeperEnsemble, ZooKeeperServer


def pytest_addoption(parser):
    parser.addoption("--no-skips", action="store_true", default=False,
                     help="fail the run when any test is skipped (the README's test command)")


_skipped: list[tuple[str, str]] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, reason))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.write_line(f"skips: {len(_skipped)}")
    if _skipped and config.getoption("--no-skips"):
        terminalreporter.write_line("--no-skips: these tests were skipped, which fails the run:",
                                    red=True)
        for nodeid, reason in _skipped:
            terminalreporter.write_line(f"  {nodeid}: {reason}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and session.config.getoption("--no-skips") and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("kafkapy") and not config.pluginmanager.is_blocked(
        "kafkapy"
    ):
        from kafkapy.testing import pytest_plugin

        config.pluginmanager.register(pytest_plugin, "kafkapy")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Test certificates (kafkapy.testing.tls.make_pki: a CA, the broker's keystores, clients'
    certificates), one set per module."""
    from kafkapy.testing.tls import make_pki

    return make_pki(tmp_path_factory.mktemp("pki"))


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
