"""AlterReplicaLogDirs against a kafkapy broker with two log directories: partitions moved by the
raw API and by Kafka 4.4's kafka-reassign-partitions.sh (--reassignment-json-file with
log_dirs), DescribeLogDirs showing the result, and every record produced before, during and
after the moves read back by a real client (kafka-python), before and after a restart."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kio.schema.alter_replica_log_dirs.v2.request import (
    AlterReplicaLogDir,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirTopic,
)
from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest

from compat_tests.rawclient import RawClient
from kafkapy.testing import BrokerProcess

TOPIC = "moving"


def _broker(base: Path) -> BrokerProcess:
    return BrokerProcess(base, {"log.dirs": f"{base}/d1,{base}/d2", "num.partitions": "2"})


def _dirs_of(bootstrap: str) -> dict[int, str]:
    """partition -> log dir of TOPIC, from DescribeLogDirs."""
    with RawClient(bootstrap) as c:
        resp = c.request(DescribeLogDirsRequest(topics=None))
    assert resp.error_code == 0
    return {p.partition_index: r.log_dir for r in resp.results for t in r.topics
            if t.name == TOPIC for p in t.partitions}


def _move(bootstrap: str, path: str, partitions: tuple[int, ...]) -> list[int]:
    with RawClient(bootstrap) as c:
        resp = c.request(AlterReplicaLogDirsRequest(dirs=(AlterReplicaLogDir(
            path=path, topics=(AlterReplicaLogDirTopic(name=TOPIC, partitions=partitions),)),)))
    return [p.error_code for t in resp.results for p in t.partitions]


def _produce(bootstrap: str, values: range) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in values:
        producer.send(TOPIC, value=str(i).encode(), partition=i % 2)
    producer.flush()
    producer.close()


def _read_all(bootstrap: str) -> list[int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             consumer_timeout_ms=5000)
    consumer.assign([TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)])
    consumer.seek_to_beginning()
    values = sorted(int(m.value) for m in consumer)
    consumer.close()
    return values


def test_moves_keep_every_record_and_survive_a_restart(tmp_path: Path) -> None:
    broker = _broker(tmp_path).start()
    try:
        b = broker.bootstrap
        _produce(b, range(0, 300))
        before = _dirs_of(b)
        assert set(before) == {0, 1}
        target = {p: str(tmp_path / ("d2" if d.endswith("d1") else "d1"))
                  for p, d in before.items()}
        for p, d in target.items():
            assert _move(b, d, (p,)) == [0]
        assert _dirs_of(b) == target
        assert not (Path(before[0]) / f"{TOPIC}-0").exists()  # the old copy is gone
        _produce(b, range(300, 600))  # the moved logs take appends
        assert _read_all(b) == list(range(600))
        # moving to where it is already changes nothing; unknown dirs and partitions are refused
        assert _move(b, target[0], (0,)) == [0]
        assert _move(b, str(tmp_path / "nowhere"), (0,)) == [57]  # LOG_DIR_NOT_FOUND
        assert _move(b, target[0], (7,)) == [3]  # UNKNOWN_TOPIC_OR_PARTITION
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]
    broker = _broker(tmp_path).start()
    try:
        assert _dirs_of(broker.bootstrap) == target
        assert _read_all(broker.bootstrap) == list(range(600))
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]


def test_kafka_reassign_partitions_moves_log_dirs(tmp_path: Path) -> None:
    from compat_tests.suites.jvm import kafka_home, require_kafka_jvm

    require_kafka_jvm()
    broker = _broker(tmp_path).start()
    try:
        b = broker.bootstrap
        _produce(b, range(200))
        before = _dirs_of(b)
        dest = {p: str(tmp_path / ("d2" if d.endswith("d1") else "d1")) for p, d in before.items()}
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": TOPIC, "partition": p, "replicas": [0], "log_dirs": [dest[p]]}
            for p in (0, 1)]}))
        tool = str(kafka_home() / "bin" / "kafka-reassign-partitions.sh")
        for action in ("--execute", "--verify"):
            out = subprocess.run([tool, "--bootstrap-server", b, "--reassignment-json-file",
                                  str(plan), action], capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stdout + out.stderr
        assert "Reassignment of replica moving-0-0 completed successfully." in out.stdout
        assert _dirs_of(b) == dest
        assert _read_all(b) == list(range(200))
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]


@pytest.mark.parametrize("moved_copy_complete", [True, False])
def test_a_move_interrupted_by_a_stop_is_settled_at_start(tmp_path: Path,
                                                          moved_copy_complete: bool) -> None:
    """A future log left by a stop is promoted when the current one is gone (the copy was
    complete), else discarded (storage/log_move.py)."""
    broker = _broker(tmp_path).start()
    try:
        _produce(broker.bootstrap, range(100))
        before = _dirs_of(broker.bootstrap)
    finally:
        assert broker.stop() == 0
    src = Path(before[0]) / f"{TOPIC}-0"
    other = tmp_path / ("d2" if before[0].endswith("d1") else "d1")
    future = other / f"{TOPIC}-0.0123456789abcdef0123456789abcdef-future"
    subprocess.run(["cp", "-a", str(src), str(future)], check=True)
    if moved_copy_complete:
        src.rename(src.parent / f"{TOPIC}-0.0123456789abcdef0123456789abcdef-delete")
    broker = _broker(tmp_path).start()
    try:
        dirs = _dirs_of(broker.bootstrap)
        assert dirs[0] == str(other if moved_copy_complete else Path(before[0]))
        assert not future.exists()
        assert _read_all(broker.bootstrap) == list(range(100))
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]
