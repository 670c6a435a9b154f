"""Partition reassignment on a three-broker kafkapy cluster over a real ZooKeeper: moving an RF2
partition from [a, b] to [b, c] under an acks=all producer (nothing acknowledged is lost, the
removed broker deletes its copy, the new replicas' logs are byte-identical), the in-progress view
of ListPartitionReassignments and of the reassign-partitions tool, cancellation, a controller
failover in the middle of a move, and Kafka's error codes for bad requests.

A reassignment is held in progress by SIGSTOPping the broker being added (shorter than
zookeeper.session.timeout.ms, so it stays registered): it cannot catch up until SIGCONT.
One cluster per module; every test leaves it whole (three brokers registered, running).
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic
from kio.schema.alter_partition_reassignments.v0 import request as alter_req
from kio.schema.list_partition_reassignments.v0 import request as list_req

from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.testing.cluster import BROKERS, Cluster, wait_for

from .rawclient import RawClient
from .test_replication_more import ProducerThread, assert_nothing_lost

TIMEOUT = datetime.timedelta(seconds=30)

# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _leave_whole(cluster):
    yield
    for b in cluster.brokers.values():
        if b.proc is not None and b.proc.poll() is None:
            os.kill(b.proc.pid, signal.SIGCONT)
        if b.proc is None:
            b.start()
    wait_for(lambda: cluster.registered() == set(BROKERS), timeout=60, what="3 brokers")


def roles(cluster: Cluster) -> tuple[int, int, int]:
    """(a, b, c): a is the controller, c a broker that is not, b the third."""
    wait_for(lambda: cluster.controller()[0] is not None, what="a controller")
    ctrl = cluster.controller()[0]
    assert ctrl is not None
    others = [x for x in BROKERS if x != ctrl]
    return ctrl, others[0], others[1]


def request(cluster: Cluster, broker_id: int, entity):
    with RawClient(cluster.brokers[broker_id].bootstrap) as c:
        return c.request(entity)


def alter(cluster: Cluster, broker_id: int, wanted: dict[tuple[str, int], list[int] | None]):
    topics: dict[str, list] = {}
    for (t, p), reps in wanted.items():
        topics.setdefault(t, []).append(
            alter_req.ReassignablePartition(
                partition_index=p, replicas=None if reps is None else tuple(reps)
            )
        )
    return request(
        cluster,
        broker_id,
        alter_req.AlterPartitionReassignmentsRequest(
            timeout=TIMEOUT,
            topics=tuple(
                alter_req.ReassignableTopic(name=t, partitions=tuple(ps))
                for t, ps in topics.items()
            ),
        ),
    )


def codes(resp) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.error_code for t in resp.responses for p in t.partitions}


def ongoing(cluster: Cluster, broker_id: int = 0) -> dict[tuple[str, int], tuple]:
    resp = request(
        cluster, broker_id, list_req.ListPartitionReassignmentsRequest(timeout=TIMEOUT, topics=None)
    )
    assert resp.error_code == 0, resp
    return {
        (t.name, p.partition_index): (
            list(p.replicas),
            list(p.adding_replicas),
            list(p.removing_replicas),
        )
        for t in resp.topics
        for p in t.partitions
    }


def document(cluster: Cluster, topic: str) -> dict:
    return json.loads(cluster.zk.get(f"/kafkapy/brokers/topics/{topic}")[0])


def create(cluster: Cluster, topic: str, replicas: list[int]) -> None:
    admin = cluster.admin()
    fs = admin.create_topics(
        [NewTopic(topic, 1, replica_assignment=[replicas], config={"min.insync.replicas": "2"})]
    )
    fs[topic].result(15)
    wait_for(
        lambda: sorted(cluster.state(topic, 0)["isr"]) == sorted(replicas),
        what=f"full ISR for {topic}",
    )


def partition_dirs(cluster: Cluster, broker_id: int, topic: str) -> list[Path]:
    logs = cluster.brokers[broker_id].data_dir / "logs"
    return [d for d in logs.iterdir() if d.name.startswith(f"{topic}-0")]


def cli(cluster: Cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "reassign-partitions"]
        + ["--bootstrap-server", cluster.bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def reassignment_file(tmp_path: Path, topic: str, replicas: list[int]) -> str:
    path = tmp_path / f"{topic}.json"
    path.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": replicas}]}
        )
    )
    return str(path)


@contextmanager
def stopped(cluster: Cluster, broker_id: int) -> Iterator[None]:
    """SIGSTOP a broker for the block (keep it shorter than the ZooKeeper session timeout)."""
    pid = cluster.brokers[broker_id].proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def converged(cluster: Cluster, topic: str, replicas: list[int]) -> bool:
    logs = {cluster.log_bytes(r, topic, 0) for r in replicas}
    return len(logs) == 1 and len(next(iter(logs))) > 0


# -- tests --------------------------------------------------------------------------------------


def test_move_replicas_under_acks_all_load(cluster, tmp_path):
    a, b, c = roles(cluster)
    topic = "moving"
    create(cluster, topic, [a, b])
    with ProducerThread(cluster, topic) as producer:
        producer.wait_more(300, "records before the move")
        with stopped(cluster, c):
            resp = alter(cluster, a, {(topic, 0): [b, c]})
            assert resp.error_code == 0 and codes(resp) == {(topic, 0): E.none}, resp
            # recorded as ZooKeeper-mode Kafka does, and listed while c cannot catch up
            assert ongoing(cluster, b) == {(topic, 0): ([b, c, a], [c], [a])}
            doc = document(cluster, topic)
            assert doc["partitions"] == {"0": [b, c, a]}
            assert doc["adding_replicas"] == {"0": [c]} and doc["removing_replicas"] == {"0": [a]}
            before = len(producer.acked)
            time.sleep(2)  # acks=all goes on: c is not in the ISR yet
            assert len(producer.acked) > before, "no record acknowledged while c is stopped"
        wait_for(lambda: not ongoing(cluster), timeout=60, what="the move to complete")
        producer.wait_more(200, "records after the move")
    assert not producer.errors, producer.errors[:5]

    doc = document(cluster, topic)
    assert doc["partitions"] == {"0": [b, c]}
    assert doc["adding_replicas"] == {} and doc["removing_replicas"] == {}
    state = cluster.state(topic, 0)
    assert state["leader"] == b and sorted(state["isr"]) == sorted([b, c])
    wait_for(lambda: not partition_dirs(cluster, a, topic), what="the removed copy deleted")
    wait_for(lambda: converged(cluster, topic, [b, c]), what="identical logs on b and c")
    assert_nothing_lost(cluster, topic, 1, producer.acked)

    out = cli(
        cluster, "--verify", "--reassignment-json-file", reassignment_file(tmp_path, topic, [b, c])
    )
    assert out.returncode == 0, out.stderr
    assert f"Reassignment of partition {topic}-0 is completed." in out.stdout, out.stdout
    out = cli(cluster, "--list")
    assert out.returncode == 0 and "No partition reassignments found." in out.stdout, out


def test_cli_execute_list_verify_cancel(cluster, tmp_path):
    a, b, c = roles(cluster)
    topic = "cancelled"
    create(cluster, topic, [a, b])
    target = reassignment_file(tmp_path, topic, [b, c])
    with stopped(cluster, c):
        out = cli(cluster, "--execute", "--reassignment-json-file", target)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "Current partition replica assignment" in out.stdout
        rollback = json.loads(out.stdout.splitlines()[2])
        assert rollback["partitions"][0]["replicas"] == [a, b]
        assert f"Successfully started partition reassignment for {topic}-0" in out.stdout
        out = cli(cluster, "--list")
        assert f"{topic}-0: replicas: {b},{c},{a}. adding: {c}. removing: {a}." in out.stdout
        out = cli(cluster, "--verify", "--reassignment-json-file", target)
        assert f"Reassignment of partition {topic}-0 is still in progress." in out.stdout
        # a second reassignment while one runs needs --additional
        out = cli(cluster, "--execute", "--reassignment-json-file", target)
        assert out.returncode == 1 and "--additional" in out.stdout
        out = cli(cluster, "--cancel", "--reassignment-json-file", target)
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"Successfully cancelled partition reassignment for: {topic}-0" in out.stdout
        assert ongoing(cluster) == {}
    doc = document(cluster, topic)
    assert sorted(doc["partitions"]["0"]) == sorted([a, b]) and doc["adding_replicas"] == {}
    out = cli(cluster, "--verify", "--reassignment-json-file", target)
    assert "There is no active reassignment" in out.stdout, out.stdout
    out = cli(cluster, "--cancel", "--reassignment-json-file", target)
    assert "None of the specified partition reassignments are active." in out.stdout
    wait_for(lambda: not partition_dirs(cluster, c, topic), what="no copy left on c")
    assert sorted(cluster.state(topic, 0)["isr"]) == sorted([a, b])


def test_controller_failover_during_a_move(cluster):
    a, b, c = roles(cluster)  # a is the controller and the replica moved away
    topic = "failover"
    create(cluster, topic, [a, b])
    with ProducerThread(cluster, topic) as producer:
        producer.wait_more(200, "records before the move")
    with stopped(cluster, c):
        resp = alter(cluster, a, {(topic, 0): [b, c]})
        assert codes(resp) == {(topic, 0): E.none}, resp
        assert cluster.brokers[a].stop() == 0  # the controller goes; b takes over
        wait_for(lambda: cluster.controller()[0] == b, what="b elected controller")
        assert ongoing(cluster, b) == {(topic, 0): ([b, c, a], [c], [a])}
    # the new controller completes the move once c caught up
    wait_for(lambda: not ongoing(cluster, b), timeout=60, what="the move to complete")
    assert document(cluster, topic)["partitions"] == {"0": [b, c]}
    state = cluster.state(topic, 0)
    assert state["leader"] in (b, c) and sorted(state["isr"]) == sorted([b, c])
    wait_for(lambda: converged(cluster, topic, [b, c]), what="identical logs on b and c")
    # a was down when its replica was removed: it deletes the stray copy when it starts
    assert partition_dirs(cluster, a, topic)
    cluster.brokers[a].start()
    wait_for(lambda: not partition_dirs(cluster, a, topic), what="a's stray copy deleted")
    assert_nothing_lost(cluster, topic, 1, producer.acked)


def test_bad_requests_get_kafka_errors(cluster, tmp_path):
    a, b, c = roles(cluster)
    topic = "reassign-bad"
    create(cluster, topic, [a, b])
    resp = alter(
        cluster,
        a,
        {
            ("no-such-topic", 0): [a, b],
            (topic, 5): [a, b],
            (topic, 0): [a, 99],
        },
    )
    assert resp.error_code == 0, resp
    assert codes(resp) == {
        ("no-such-topic", 0): E.unknown_topic_or_partition,
        (topic, 5): E.unknown_topic_or_partition,
        (topic, 0): E.invalid_replica_assignment,
    }
    for bad in ([b, b], [], [a, -1]):
        resp = alter(cluster, a, {(topic, 0): bad})
        assert codes(resp) == {(topic, 0): E.invalid_replica_assignment}, (bad, resp)
    resp = alter(cluster, a, {(topic, 0): None})
    assert codes(resp) == {(topic, 0): E.no_reassignment_in_progress}
    # a broker that is not the controller says so (clients look the controller up again)
    resp = alter(cluster, c, {(topic, 0): [b, c]})
    assert resp.error_code == E.not_controller and resp.responses == (), resp
    assert ongoing(cluster) == {}
    assert document(cluster, topic)["partitions"] == {"0": [a, b]}
    # the tool refuses unknown brokers before asking
    out = cli(
        cluster,
        "--execute",
        "--reassignment-json-file",
        reassignment_file(tmp_path, topic, [a, 99]),
    )
    assert out.returncode == 1 and "Unknown broker id 99" in out.stderr, out
