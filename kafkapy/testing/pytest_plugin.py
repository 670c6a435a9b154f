"""kafkapy's pytest plugin: a real Kafka broker as a fixture, no Docker, no JVM.

Registered as the ``pytest11`` entry point ``kafkapy``, so installing kafkapy is enough (disable
with ``-p no:kafkapy``). Importing this module imports nothing but pytest and the standard
library; brokers, clients and ZooKeeper are imported by the fixtures that use them, so unrelated
test runs neither slow down nor change.

Fixtures (docs/testing.md has the full guide):

* ``kafka_broker`` (session): one broker for the whole run; ``.bootstrap_servers``.
* ``kafka_broker_factory`` (function): ``make(mode=None, storage=None, *, data_dir=None,
  overrides=None, **config)`` starts another broker with ``server.properties`` overrides;
  every broker it made is stopped after the test. ``kafka_module_broker_factory`` is the same for
  brokers a module's tests share (stopped after the module).
* ``kafka_topic`` (function): a fresh topic on ``kafka_broker``, deleted after the test; its
  partitions and configs come from ``@pytest.mark.kafka_topic(partitions=3, config={...})`` or
  ``indirect`` parametrization. ``kafka_topic_factory`` makes more than one.
* ``kafka_cluster`` (module; ``kafka_cluster_factory`` per test, ``kafka_module_cluster_factory``
  per module): N brokers on a real ZooKeeper, skipped with the Debian packages to install when
  Java or ZooKeeper is missing; a module's ``pytestmark = pytest.mark.kafka_cluster(size=3,
  overrides={...})`` shapes its ``kafka_cluster``.

Brokers run in this process (``--kafka-broker-mode=thread``, the default) or as subprocesses
(``process``), with their logs on tmpfs (kafkapy/testing/storage.py). ``--kafka-bootstrap``
points ``kafka_broker`` and ``kafka_topic`` at a running cluster instead; ``--kafka-keep-data``
keeps every broker's data on disk after the run and says where.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kafkapy.testing.cluster import Cluster
    from kafkapy.testing.handle import TestBroker
    from kafkapy.testing.topics import KafkaTopic, Topics

#: Single-broker-friendly settings for the brokers the fixtures start (as testcontainers sets
#: them): internal topics of one partition and one replica, consumer groups that form at once.
TEST_DEFAULTS = {
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}
DEBIAN_PACKAGES = "default-jre-headless zookeeper"
CLUSTER_SIZE = 3


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkapy", "Kafka brokers for tests (kafkapy)")
    group.addoption(
        "--kafka-bootstrap",
        metavar="HOST:PORT[,HOST:PORT...]",
        default=None,
        help="run kafka_broker and kafka_topic against this running Kafka cluster instead of "
        "starting a broker (fault injection on kafka_broker then skips)",
    )
    group.addoption(
        "--kafka-keep-data",
        action="store_true",
        default=False,
        help="keep the data of every broker the fixtures start, on disk, after the run "
        "(the directories are listed at the end)",
    )
    group.addoption(
        "--kafka-broker-mode",
        choices=("thread", "process"),
        default=None,
        help="run the fixtures' brokers in this process (thread, the default) or as "
        "subprocesses (process)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka_topic(partitions=1, config=None, replication_factor=1, name=None): "
        "the topic the kafka_topic fixture creates for this test",
    )
    config.addinivalue_line(
        "markers",
        "kafka_cluster(size=3, overrides=None, storage='disk'): "
        "the cluster the kafka_cluster fixture starts for this module (in its pytestmark)",
    )


class KafkaSession:
    """The run's brokers and topic admin, and what they cost (for the summary line)."""

    def __init__(self, config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> None:
        # (defaults for a plugin registered after the options were parsed, as a conftest may)
        self.external: str | None = config.getoption("kafka_bootstrap", None)
        self.keep_data: bool = config.getoption("kafka_keep_data", False)
        self.mode: str = config.getoption("kafka_broker_mode", None) or "thread"
        self.tmp = tmp_path_factory
        self.brokers: list[TestBroker] = []
        self.kept: list[Path] = []
        self.start_seconds = 0.0
        self.topics: Topics | None = None

    def storage(self, storage: str | None) -> str:
        return "disk" if self.keep_data else storage or "memory"

    def new_broker(
        self,
        name: str,
        *,
        mode: str | None = None,
        storage: str | None = None,
        data_dir: Path | None = None,
        port: int | None = None,
        overrides: dict[str, str] | None = None,
        kafka_defaults: bool = True,
    ) -> TestBroker:
        from kafkapy.testing.embedded import make_broker

        props = {**(TEST_DEFAULTS if kafka_defaults else {}), **(overrides or {})}
        broker = make_broker(
            mode or self.mode,
            storage=self.storage(storage),
            data_dir=data_dir or self.tmp.mktemp(name),
            port=port,
            overrides=props,
        )
        started = time.perf_counter()
        broker.start()
        self.start_seconds += time.perf_counter() - started
        self.brokers.append(broker)
        if self.keep_data:
            self.kept += broker.log_dirs
        return broker

    def topic_admin(self, bootstrap: str) -> Topics:
        from kafkapy.testing.topics import Topics

        if self.topics is None or self.topics.bootstrap != bootstrap:
            self.topics = Topics(bootstrap)
        return self.topics

    def summary(self) -> list[str]:
        lines = []
        if self.brokers:
            kinds = sorted({f"{b.mode}, {b.storage}" for b in self.brokers})
            lines.append(
                f"kafkapy: {len(self.brokers)} broker(s) ({'; '.join(kinds)}) started in "
                f"{self.start_seconds:.3f} s"
            )
        if self.topics is not None and self.topics.created:
            t = self.topics
            lines.append(
                f"kafkapy: {t.created} topic(s) created and {t.deleted} deleted in "
                f"{t.seconds:.2f} s ({1000 * t.seconds / t.created:.1f} ms per topic)"
            )
        lines += [f"kafkapy: kept broker data in {d}" for d in self.kept]
        return lines


_SESSION_KEY = pytest.StashKey[KafkaSession]()


@pytest.fixture(scope="session")
def _kafka_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaSession]:
    session = KafkaSession(request.config, tmp_path_factory)
    request.config.stash[_SESSION_KEY] = session
    yield session
    if session.topics is not None:
        session.topics.close()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = config.stash.get(_SESSION_KEY, None)
    for line in session.summary() if session is not None else []:
        terminalreporter.write_line(line)


class ExternalKafka:
    """``kafka_broker`` under ``--kafka-bootstrap``: a cluster this run did not start."""

    mode = "external"

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = self.bootstrap_servers = bootstrap

    @property
    def running(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        if name in {"kill", "restart", "stop", "start", "pause", "resume", "drop_connections",
                    "fail_log_dir", "repair_log_dir"}:

            def refuse(*args: Any, **kwargs: Any) -> Any:
                pytest.skip(f"kafka_broker.{name}() needs a broker started by kafkapy, not "
                            f"the --kafka-bootstrap cluster")

            return refuse
        raise AttributeError(name)


@pytest.fixture(scope="session")
def kafka_broker(_kafka_session: KafkaSession) -> Iterator[Any]:
    """The session's broker (or the --kafka-bootstrap cluster): ``.bootstrap_servers``."""
    if _kafka_session.external:
        yield ExternalKafka(_kafka_session.external)
        return
    broker = _kafka_session.new_broker("kafka-broker")
    try:
        yield broker
    finally:
        broker.close()


def _heal(broker: Any) -> None:
    """The session broker after a test that broke it: running again, as the next test expects."""
    if isinstance(broker, ExternalKafka):
        return
    broker.resume()
    if broker.failed_log_dirs:
        broker.repair_log_dir()
        broker.stop()
    if not broker.running:
        broker.start()


class BrokerFactory:
    """``make(mode=None, storage=None, *, data_dir=None, port=None, overrides=None,
    kafka_defaults=True, clean_stop=False, name="kafka-broker", **config)``: starts brokers for
    one fixture scope; ``close()`` stops them all when the scope ends.

    ``num_partitions=3`` means ``num.partitions=3``; ``kafka_defaults=False`` leaves out
    TEST_DEFAULTS (Kafka's own defaults, as a real server.properties); ``port`` is the listener
    the broker is reached on (for ``listeners`` overrides naming more than one); with
    ``clean_stop`` the scope fails unless the broker is running at its end and shuts down
    cleanly (exit status 0)."""

    def __init__(self, session: KafkaSession) -> None:
        self.session = session
        self.made: list[tuple[TestBroker, bool]] = []

    def __call__(
        self,
        mode: str | None = None,
        storage: str | None = None,
        *,
        data_dir: Path | None = None,
        port: int | None = None,
        overrides: dict[str, Any] | None = None,
        kafka_defaults: bool = True,
        clean_stop: bool = False,
        name: str = "kafka-broker",
        **config: Any,
    ) -> TestBroker:
        from kafkapy.testing.handle import overrides_from_kwargs

        props = {k: str(v) for k, v in (overrides or {}).items()}
        props.update(overrides_from_kwargs(config))
        broker = self.session.new_broker(
            name,
            mode=mode,
            storage=storage,
            data_dir=data_dir,
            port=port,
            overrides=props,
            kafka_defaults=kafka_defaults,
        )
        self.made.append((broker, clean_stop))
        return broker

    def close(self) -> None:
        unclean = []
        for broker, clean_stop in self.made:
            code = broker.stop()
            broker.close()
            if clean_stop and code != 0:
                unclean.append(f"{broker!r} exited with {code}:\n{broker.log_text()[-3000:]}")
        self.made.clear()
        assert not unclean, "broker did not shut down cleanly: " + "\n".join(unclean)


@pytest.fixture
def kafka_broker_factory(_kafka_session: KafkaSession) -> Iterator[BrokerFactory]:
    """``make(mode=None, storage=None, *, data_dir=None, overrides=None, **config)``: start a
    broker of this test's own (``num_partitions=3`` means ``num.partitions=3``); BrokerFactory
    has every option."""
    factory = BrokerFactory(_kafka_session)
    yield factory
    factory.close()


@pytest.fixture(scope="module")
def kafka_module_broker_factory(_kafka_session: KafkaSession) -> Iterator[BrokerFactory]:
    """As ``kafka_broker_factory``, for brokers a module's tests share: stopped after the
    module."""
    factory = BrokerFactory(_kafka_session)
    yield factory
    factory.close()


@pytest.fixture
def kafka_topic_factory(
    request: pytest.FixtureRequest, kafka_broker: Any, _kafka_session: KafkaSession
) -> Iterator[Callable[..., KafkaTopic]]:
    """``make(partitions=1, config=None, *, replication_factor=1, name=None)``: a new topic on
    ``kafka_broker``, deleted after the test."""
    _heal(kafka_broker)
    admin = _kafka_session.topic_admin(kafka_broker.bootstrap_servers)
    made: list[str] = []

    def make(
        partitions: int = 1,
        config: dict[str, Any] | None = None,
        *,
        replication_factor: int = 1,
        name: str | None = None,
    ) -> KafkaTopic:
        from kafkapy.testing.topics import topic_name

        topic = admin.create(
            name or topic_name(request.node.name), partitions, replication_factor, config
        )
        made.append(topic)
        return topic

    yield make
    if kafka_broker.running:
        for topic in made:
            admin.delete(topic)


@pytest.fixture
def kafka_topic(
    request: pytest.FixtureRequest, kafka_topic_factory: Callable[..., KafkaTopic]
) -> KafkaTopic:
    """A fresh topic for this test (a ``str``, with ``.partitions`` and ``.config``)."""
    spec: dict[str, Any] = {}
    marker = request.node.get_closest_marker("kafka_topic")
    if marker is not None:
        if marker.args:
            spec["partitions"] = marker.args[0]
        spec.update(marker.kwargs)
    param = getattr(request, "param", None)
    if isinstance(param, int):
        spec["partitions"] = param
    elif isinstance(param, dict):
        spec.update(param)
    return kafka_topic_factory(**spec)


def _start_cluster(
    base: Path, size: int, overrides: dict[str, str] | None, storage: str
) -> Cluster:
    from kafkapy.testing.cluster import Cluster
    from kafkapy.testing.zookeeper import (
        ZooKeeperServer,
        ZooKeeperUnavailable,
        classpath,
        java_binary,
    )

    try:
        java_binary()
        classpath()
    except ZooKeeperUnavailable as e:
        pytest.skip(
            f"kafka_cluster needs Java and ZooKeeper: {e} "
            f"(Debian/Ubuntu: apt-get install {DEBIAN_PACKAGES})"
        )
    server = ZooKeeperServer(base / "zookeeper").start()
    cluster = Cluster(
        base, server.connect_string, size=size, extra_overrides=overrides, storage=storage
    )
    cluster.zookeeper = server  # type: ignore[attr-defined]
    try:
        return cluster.start()
    except BaseException:
        _stop_cluster(cluster)
        raise


def _stop_cluster(cluster: Cluster) -> None:
    try:
        cluster.stop()
    finally:
        cluster.zookeeper.stop()  # type: ignore[attr-defined]


def _cluster_spec(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``kafka_cluster``'s shape: the module's ``kafka_cluster`` marker, then an ``indirect``
    parameter (an int: the size)."""
    spec: dict[str, Any] = {}
    marker = request.node.get_closest_marker("kafka_cluster")
    if marker is not None:
        if marker.args:
            spec["size"] = marker.args[0]
        spec.update(marker.kwargs)
    if hasattr(request, "param"):
        spec["size"] = request.param
    return spec


@pytest.fixture(scope="module")
def kafka_cluster(
    request: pytest.FixtureRequest, _kafka_session: KafkaSession
) -> Iterator[Cluster]:
    """N brokers (3; ``indirect`` parametrization with an int for another N) on their own
    ZooKeeper, shared by the module's tests; ``.bootstrap``, ``.brokers[id]``, faults. A module's
    ``pytestmark = pytest.mark.kafka_cluster(size=3, overrides={...}, storage="disk")`` sets its
    size and broker settings."""
    factory = ClusterFactory(_kafka_session)  # its own: one parameter's cluster at a time
    try:
        yield factory(**_cluster_spec(request))
    finally:
        factory.close()


class ClusterFactory:
    """``make(size=3, overrides=None, storage="disk")``: starts clusters for one fixture scope;
    ``close()`` stops them (and their ZooKeeper servers) when the scope ends."""

    def __init__(self, session: KafkaSession) -> None:
        self.session = session
        self.made: list[Cluster] = []

    def __call__(
        self,
        size: int = CLUSTER_SIZE,
        overrides: dict[str, Any] | None = None,
        storage: str = "disk",
    ) -> Cluster:
        props = {k: str(v) for k, v in (overrides or {}).items()}
        cluster = _start_cluster(self.session.tmp.mktemp("cluster"), size, props, storage)
        self.made.append(cluster)
        return cluster

    def close(self) -> None:
        made, self.made = self.made, []
        for cluster in made:
            _stop_cluster(cluster)


@pytest.fixture
def kafka_cluster_factory(_kafka_session: KafkaSession) -> Iterator[ClusterFactory]:
    """``make(size=3, overrides=None, storage="disk")``: a cluster of this test's own."""
    factory = ClusterFactory(_kafka_session)
    yield factory
    factory.close()


@pytest.fixture(scope="module")
def kafka_module_cluster_factory(_kafka_session: KafkaSession) -> Iterator[ClusterFactory]:
    """As ``kafka_cluster_factory``, for clusters a module's tests share."""
    factory = ClusterFactory(_kafka_session)
    yield factory
    factory.close()
