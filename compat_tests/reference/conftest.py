"""Fixtures of the differential suite: one Apache Kafka 4.4 broker (``kafka_reference``) and one
kafkapy broker (``kafkapy_peer``) per test session, configured alike, and ``differential``, which
runs a scripted client session against both and compares what the client observed. The run
ends with a summary of the sessions, observations and differences compared.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.kafka_broker import NODE_ID, ReferenceKafka, java_missing

# the settings both brokers share besides their own defaults: one node, internal topics of one
# replica, groups that form at once, auto-created topics of one partition
SHARED_CONFIG = {
    "num.partitions": "1",
    "auto.create.topics.enable": "true",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}
_differentials: list[Differential] = []
_start_times: dict[str, float] = {}


@pytest.fixture(scope="session")
def kafka_reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceKafka]:
    """Apache Kafka 4.4, one KRaft broker+controller node, stopped at the end of the session."""
    reason = java_missing()
    if reason:
        pytest.skip(f"the reference Apache Kafka broker cannot run: {reason}")
    broker = ReferenceKafka(tmp_path_factory.mktemp("kafka-4.4"), SHARED_CONFIG)
    try:
        broker.start()
        assert broker.started_in is not None
        _start_times["Apache Kafka 4.4"] = broker.started_in
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafkapy_peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A kafkapy broker process with the same settings, stopped at the end of the session."""
    from kafkapy.testing import BrokerProcess

    broker = BrokerProcess(tmp_path_factory.mktemp("kafkapy"),
                           {**SHARED_CONFIG, "broker.id": str(NODE_ID)})
    started = time.perf_counter()
    try:
        broker.start()
        _start_times["kafkapy"] = time.perf_counter() - started
        yield broker
    finally:
        code = broker.stop()
        assert code in (0, None), f"kafkapy exited with {code}: {broker.log_text()[-3000:]}"


@pytest.fixture(scope="session")
def differential(kafka_reference: ReferenceKafka, kafkapy_peer: object) -> Differential:
    diff = Differential(
        Target("kafka", kafka_reference.bootstrap, kafka_reference.cluster_id, NODE_ID),
        Target("kafkapy", kafkapy_peer.bootstrap, None, NODE_ID),  # type: ignore[attr-defined]
    )
    _differentials.append(diff)
    return diff


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _differentials and not _start_times:
        return
    terminalreporter.section("differential suite: Apache Kafka 4.4 vs kafkapy")
    for name, seconds in _start_times.items():
        terminalreporter.write_line(f"{name} broker started (ready for clients) in "
                                    f"{seconds:.1f} s")
    for diff in _differentials:
        for line in diff.summary():
            terminalreporter.write_line(line)
