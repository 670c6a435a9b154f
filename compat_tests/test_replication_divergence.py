"""Follower log repair and replicated group commits on a three-broker kafkapy cluster over a real
ZooKeeper:

* a divergent tail: the leader takes acks=1 records while its followers are down, is killed -9,
  another replica is elected and takes other records at the same offsets; restarted, the old
  leader truncates its tail (OffsetForLeaderEpoch) and follows: every replica holds the same
  batches up to the high watermark;
* a follower restarted below the leader's log start offset (DeleteRecords while it was down)
  truncates fully and restarts its log at the leader's log start; the follower that stayed takes
  the leader's log start from its fetches;
* a committed offset survives kill -9 of the group coordinator (commits are acks=all);
* a commit is not acknowledged when the ISR of its __consumer_offsets partition is below
  min.insync.replicas.

One cluster per module; every test leaves it whole (three brokers registered, full ISRs).
"""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from kio.schema.incremental_alter_configs.v1 import request as iac
from kio.schema.offset_commit.v8 import request as oc

from kafkapy.coordinator.group.partitioning import partition_for
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import iter_batches
from kafkapy.storage.checkpoints import read_offset_checkpoint
from kafkapy.testing.cluster import BROKERS, SESSION_MS, Cluster, wait_for

from .rawclient import RawClient

OFFSETS = "__consumer_offsets"
SESSION_S = SESSION_MS / 1000

# -- helpers ------------------------------------------------------------------------------------


def ensure_whole(cluster: Cluster) -> None:
    """Start every stopped broker (once its old registration expired) and wait for full ISRs."""
    down = [b for b, proc in cluster.brokers.items() if proc.proc is None]
    if down:
        wait_for(
            lambda: not (cluster.registered() & set(down)),
            timeout=SESSION_S + 15,
            what=f"old registrations of {down} expired",
        )
        for b in down:
            cluster.brokers[b].start()
    wait_for(cluster.whole, timeout=90, what="cluster whole again")


@pytest.fixture(autouse=True)
def _leave_whole(cluster):
    yield
    ensure_whole(cluster)


def produce(
    bootstrap: str, topic: str, values: list[bytes], acks: str = "all", batched: bool = False
) -> list[int]:
    """Produce ``values`` to partition 0 in order, one record per batch unless ``batched``;
    returns their offsets (all acknowledged)."""
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "enable.idempotence": False,
            "max.in.flight.requests.per.connection": 1,
            "linger.ms": 50 if batched else 0,
            "batch.num.messages": 1000 if batched else 1,
            "message.timeout.ms": 30000,
        }
    )
    offsets: list[int] = []
    errors: list = []

    def cb(err, msg):
        if err is None:
            offsets.append(msg.offset())
        else:
            errors.append(err)

    for v in values:
        p.produce(topic, value=v, partition=0, callback=cb)
        p.poll(0)
    assert p.flush(60) == 0
    assert not errors, errors[:3]
    return offsets


def watermarks(cluster: Cluster, topic: str) -> tuple[int, int]:
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "watermarks"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        c.close()


def read_values(cluster: Cluster, topic: str) -> list[tuple[int, bytes]]:
    low, high = watermarks(cluster, topic)
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": f"read-{time.time()}",
            "enable.auto.commit": False,
        }
    )
    c.assign([TopicPartition(topic, 0, low)])
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + 60
    while (not got or got[-1][0] < high - 1) and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            got.append((m.offset(), m.value()))
    c.close()
    return got


def batches(cluster: Cluster, broker: int, topic: str) -> list[tuple[int, int, bytes]]:
    """(base offset, last offset, bytes) of every batch in a replica's segment files."""
    d = cluster.brokers[broker].data_dir / "logs" / f"{topic}-0"
    out = []
    for f in sorted(d.glob("*.log")):
        data = f.read_bytes()
        for pos, h in iter_batches(data):
            out.append((h.base_offset, h.last_offset, data[pos : pos + h.size]))
    return out


def identical(cluster: Cluster, topic: str, start: int, end: int) -> bool:
    """Every replica holds the same batches for offsets [start, end)."""
    views = [
        [b for b in batches(cluster, broker, topic) if b[1] >= start and b[0] < end]
        for broker in BROKERS
    ]
    return bool(views[0]) and all(v == views[0] for v in views)


def log_start(cluster: Cluster, broker: int, topic: str) -> int | None:
    path = cluster.brokers[broker].data_dir / "logs" / "log-start-offset-checkpoint"
    return read_offset_checkpoint(path).get((topic, 0))


def segment_bases(cluster: Cluster, broker: int, topic: str) -> list[int]:
    d = cluster.brokers[broker].data_dir / "logs" / f"{topic}-0"
    return sorted(int(f.name[:20]) for f in d.glob("*.log"))


# -- a divergent tail ---------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_old_leader_truncates_its_divergent_tail(cluster):
    topic = "diverge"
    configs = {"min.insync.replicas": "1", "unclean.leader.election.enable": "true"}
    cluster.create_topic(topic, partitions=1, **configs)
    st = cluster.state(topic, 0)
    old, epoch = st["leader"], st["leader_epoch"]
    followers = [b for b in BROKERS if b != old]
    assert produce(cluster.bootstrap, topic, [b"base-%d" % i for i in range(20)]) == list(range(20))
    wait_for(lambda: identical(cluster, topic, 0, 20), what="followers have the base records")
    for b in followers:
        cluster.brokers[b].kill()
    # only the leader gets these (acks=1): its tail
    leader_only = cluster.brokers[old].bootstrap
    tail = produce(leader_only, topic, [b"divergent-%d" % i for i in range(10)], acks="1")
    assert tail == list(range(20, 30))
    cluster.brokers[old].kill()
    wait_for(lambda: not cluster.registered(), timeout=SESSION_S + 15, what="all sessions expired")
    for b in followers:
        cluster.brokers[b].start()
    wait_for(
        lambda: cluster.state(topic, 0)["leader"] in followers,
        timeout=SESSION_S + 20,
        what="a former follower leads",
    )
    assert cluster.state(topic, 0)["leader_epoch"] > epoch
    # other records at the same offsets, under the new epoch
    assert produce(cluster.bootstrap, topic, [b"new-%d" % i for i in range(10)]) == list(
        range(20, 30)
    )
    cluster.brokers[old].start()
    wait_for(lambda: cluster.full_isr(topic, 1), timeout=60, what="old leader back in the ISR")
    _low, high = watermarks(cluster, topic)
    assert high == 30
    wait_for(lambda: identical(cluster, topic, 0, high), timeout=30, what="identical batches")
    assert f"{topic}-0: truncating from 30 to 20" in cluster.brokers[old].log_text()
    values = read_values(cluster, topic)
    assert values == [(i, b"base-%d" % i) for i in range(20)] + [
        (20 + i, b"new-%d" % i) for i in range(10)
    ]


# -- a follower below the leader's log start ----------------------------------------------------


@pytest.mark.timeout(300)
def test_follower_restarts_at_the_leaders_log_start(cluster):
    topic = "lowstart"
    cluster.create_topic(topic, partitions=1, **{"segment.bytes": "2048"})
    st = cluster.state(topic, 0)
    leader = st["leader"]
    victim, stayed = [b for b in BROKERS if b != leader]
    produce(cluster.bootstrap, topic, [b"early-%03d" % i for i in range(40)])
    wait_for(lambda: identical(cluster, topic, 0, 40), what="replicated")
    assert cluster.brokers[victim].stop() == 0
    produce(cluster.bootstrap, topic, [b"late-%03d" % i for i in range(180)])
    # the last ones batched: the new log start lies inside a batch
    produce(cluster.bootstrap, topic, [b"late-%03d" % i for i in range(180, 200)], batched=True)
    _low, high = watermarks(cluster, topic)
    assert high == 240
    target = 225
    admin = cluster.admin()
    fs = admin.delete_records([TopicPartition(topic, 0, target)])
    for f in fs.values():
        assert f.result(15).low_watermark == target
    assert watermarks(cluster, topic)[0] == target
    # the follower that stayed takes the leader's log start from its fetches
    wait_for(lambda: log_start(cluster, stayed, topic) == target, what="log start followed")
    assert segment_bases(cluster, stayed, topic)[0] > 40  # segments below it deleted
    cluster.brokers[victim].start()
    wait_for(lambda: cluster.full_isr(topic, 1), timeout=60, what="victim back in the ISR")
    wait_for(lambda: identical(cluster, topic, target, high), timeout=30, what="same batches")
    wait_for(lambda: log_start(cluster, victim, topic) == target, what="victim's log start")
    bases = segment_bases(cluster, victim, topic)
    assert bases[0] > 40, bases  # its old segments are gone: the log restarted
    assert min(b[0] for b in batches(cluster, victim, topic)) <= target
    assert "truncating fully and restarting the log" in cluster.brokers[victim].log_text()
    values = read_values(cluster, topic)
    assert values[0] == (target, b"late-%03d" % (target - 40))
    assert values[-1] == (239, b"late-199")


# -- group commits wait for the ISR --------------------------------------------------------------


def _offsets_topic_ready(cluster: Cluster, topic: str) -> None:
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "bootstrap-offsets"})

    def commit() -> bool:
        c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        return True

    try:
        wait_for(commit, timeout=60, what="a first commit")
    finally:
        c.close()
    wait_for(lambda: cluster.full_isr(OFFSETS, 3), timeout=60, what=f"{OFFSETS} fully replicated")


@pytest.mark.timeout(300)
def test_committed_offset_survives_coordinator_kill(cluster):
    topic = "commits"
    cluster.create_topic(topic, partitions=1)
    _offsets_topic_ready(cluster, topic)
    group = "survivor"
    p = partition_for(group, 3)
    coordinator = cluster.state(OFFSETS, p)["leader"]
    acked: list[int] = []
    stop = threading.Event()

    def commit_loop() -> None:
        c = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
            }
        )
        i = 100
        try:
            while not stop.is_set():
                try:
                    c.commit(offsets=[TopicPartition(topic, 0, i)], asynchronous=False)
                    acked.append(i)
                except KafkaException:
                    time.sleep(0.05)
                i += 1
        finally:
            c.close()

    t = threading.Thread(target=commit_loop, daemon=True)
    t.start()
    try:
        wait_for(lambda: len(acked) >= 100, timeout=60, what="commits acknowledged")
        cluster.brokers[coordinator].kill()
        acked_before_kill = max(acked)
        wait_for(
            lambda: cluster.state(OFFSETS, p)["leader"] not in (coordinator, -1),
            timeout=SESSION_S + 15,
            what="a new coordinator",
        )
        wait_for(lambda: max(acked) > acked_before_kill, timeout=60, what="commits resume")
    finally:
        stop.set()
        t.join(60)
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, 0)], timeout=30)[0].offset
    finally:
        c.close()
    assert got >= max(acked) >= acked_before_kill


def _commit(rc: RawClient, group: str, topic: str, offset: int) -> int:
    resp = rc.request(
        oc.OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=(
                oc.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=(
                        oc.OffsetCommitRequestPartition(
                            partition_index=0,
                            committed_offset=offset,
                            committed_leader_epoch=-1,
                            committed_metadata="",
                        ),
                    ),
                ),
            ),
        )
    )
    return int(resp.topics[0].partitions[0].error_code)


def _set_offsets_min_isr(rc: RawClient, value: str | None) -> None:
    resp = rc.request(
        iac.IncrementalAlterConfigsRequest(
            resources=(
                iac.AlterConfigsResource(
                    resource_type=2,
                    resource_name=OFFSETS,
                    configs=(
                        iac.AlterableConfig(
                            name="min.insync.replicas",
                            config_operation=0 if value is not None else 1,
                            value=value,
                        ),
                    ),
                ),
            ),
            validate_only=False,
        )
    )
    assert int(resp.responses[0].error_code) == 0, resp


@pytest.mark.timeout(300)
def test_commit_not_acknowledged_without_enough_insync_replicas(cluster):
    topic = "needs-isr"
    cluster.create_topic(topic, partitions=1)
    _offsets_topic_ready(cluster, topic)
    group = "needs-isr-group"
    p = partition_for(group, 3)
    coordinator = cluster.state(OFFSETS, p)["leader"]
    followers = [b for b in BROKERS if b != coordinator]
    with RawClient(cluster.brokers[coordinator].bootstrap, timeout=30) as rc:
        _set_offsets_min_isr(rc, "2")
        try:
            assert _commit(rc, group, topic, 5) == ErrorCode.none
            for b in followers:
                cluster.brokers[b].kill()
            # appended while the ISR still names the followers, who never fetch it: not
            # acknowledged (NOT_ENOUGH_REPLICAS_AFTER_APPEND once the leader shrinks the ISR)
            isr_then = cluster.state(OFFSETS, p)["isr"]
            started = time.monotonic()
            assert _commit(rc, group, topic, 6) == ErrorCode.coordinator_not_available
            if len(isr_then) == 3:
                assert time.monotonic() - started >= 1.0  # it waited for the ISR
            wait_for(
                lambda: cluster.state(OFFSETS, p)["isr"] == [coordinator],
                timeout=SESSION_S + 15,
                what="the ISR shrank to the coordinator",
            )
            # the ISR is below min.insync.replicas: refused at once (NOT_ENOUGH_REPLICAS)
            started = time.monotonic()
            assert _commit(rc, group, topic, 7) == ErrorCode.coordinator_not_available
            assert time.monotonic() - started < 2.0
        finally:
            _set_offsets_min_isr(rc, None)
    ensure_whole(cluster)
    with RawClient(cluster.brokers[coordinator].bootstrap, timeout=30) as rc:
        assert _commit(rc, group, topic, 8) == ErrorCode.none
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group})
    try:
        assert c.committed([TopicPartition(topic, 0)], timeout=30)[0].offset == 8
    finally:
        c.close()
