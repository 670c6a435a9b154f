"""Transactions on a three-broker cluster (ZooKeeper mode, replication factor 3): a
consume-transform-produce application with send_offsets_to_transaction stays exactly once
while the leader of its transaction coordinator's __transaction_state partition is killed with
kill -9 in the middle of a transaction (the new leader loads the state and finishes it), and
again while the leader of the output partition it writes to is killed (the markers go to the
new leader). Markers reach remote leaders with WriteTxnMarkers, and partition leaders verify
with the remote coordinator (KIP-890). A coordinator killed after PrepareCommit, while a
partition of the transaction is offline, leaves the commit to the next leader of its
__transaction_state partition, which loads it and writes the markers."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kafkapy.coordinator.group.partitioning import partition_for
from kafkapy.testing.cluster import SESSION_MS

from .txn_clients import produce_input, read_all, transform_batch

TXN_ID = "cluster-app"
GROUP = "cluster-ctp"
N = 300
# the first test alone allows itself 150 s of rounds plus the cluster's recoveries (kill -9
# twice, a restart in between): the suite's 120 s default would cut it short under load
pytestmark = pytest.mark.timeout(420)


@pytest.fixture
def cluster(kafka_cluster_factory):
    """A cluster of each test's own (ZooKeeper and three brokers): a test that kills brokers
    leaves nothing behind for the next one."""
    return kafka_cluster_factory()


def keep_group_coordinator_off(cluster, group: str, victim: int) -> None:
    """Move the group coordinator (the leader of the group's __consumer_offsets partition) off a
    broker about to be killed, in the round before the kill, so that librdkafka's TxnOffsetCommit
    of that round is refused by the old coordinator (NOT_COORDINATOR) and learns the new one.
    librdkafka (2.16 and earlier: confluentinc/librdkafka#5456, #5511) caches the group
    coordinator for send_offsets_to_transaction, and when the cached broker disappears from
    Metadata (its registration expired: Kafka 4.4 likewise lists only live brokers) it waits
    for a broker state change that may never come, ignoring its timeout: the call hung until
    pytest's timeout, with the test's own restart of the victim queued behind it. This test is
    about the transaction coordinator and the output partition's leader."""
    p = partition_for(group, 3)
    state = cluster.state("__consumer_offsets", p)
    if state["leader"] == victim:
        target = next(b for b in state["isr"] if b != victim)
        cluster.move_leadership("__consumer_offsets", p, target)


def test_exactly_once_across_coordinator_and_partition_leader_kills(cluster):
    cluster.create_topic("cin", partitions=2)
    cluster.create_topic("cout", partitions=2)
    produce_input(cluster.bootstrap, "cin", N, partitions=2)
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": GROUP,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["cin"])
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "transactional.id": TXN_ID, "linger.ms": 5}
    )
    producer.init_transactions(60)
    killed: list[tuple[str, int]] = []

    def killer(what: str, victim: int):
        """The hook that kills ``victim`` before the round's commit; the group coordinator
        leaves it first (``keep_group_coordinator_off``)."""
        keep_group_coordinator_off(cluster, GROUP, victim)

        def kill() -> None:
            producer.flush(30)  # this transaction's records are on the leaders, not committed
            cluster.brokers[victim].kill()
            killed.append((what, victim))

        return kill

    done, rounds = 0, 0
    deadline = time.monotonic() + 150
    while done < N and time.monotonic() < deadline:
        rounds += 1
        hook = None
        if rounds == 3:
            p = partition_for(TXN_ID, 3)
            hook = killer("coordinator", cluster.state("__transaction_state", p)["leader"])
        elif rounds == 8 and len(killed) == 1:
            # the first victim is back and in sync before the second kill
            cluster.brokers[killed[0][1]].start()
            cluster.wait_for(cluster.whole, timeout=60, what="cluster whole again")
            hook = killer("output leader", cluster.state("cout", 0)["leader"])
        done += transform_batch(consumer, producer, "cout", before_commit=hook, batch=25)
    consumer.close()
    assert [w for w, _ in killed] == ["coordinator", "output leader"], killed
    assert done == N, f"{done} of {N} processed in {rounds} rounds"
    for _, broker_id in killed:
        if cluster.brokers[broker_id].proc is None:
            cluster.brokers[broker_id].start()
    cluster.wait_for(cluster.whole, timeout=SESSION_MS / 1000 + 60, what="cluster whole")
    out = read_all(cluster.bootstrap, "cout", "read_committed", partitions=2, timeout=60)
    assert sorted(out) == sorted(b"x%d" % i for i in range(N)), "not exactly once"
    check = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": GROUP})
    try:
        got = check.committed([TopicPartition("cin", 0), TopicPartition("cin", 1)], timeout=20)
        assert [tp.offset for tp in got] == [N // 2, N // 2]
    finally:
        check.close()


def describe_state(cluster, broker_id: int, txn_id: str) -> str | None:
    """The transaction's state as the given broker's coordinator reports it (None: not its)."""
    from kio.schema.describe_transactions.v0 import request as dq

    from .rawclient import RawClient

    with RawClient(cluster.brokers[broker_id].bootstrap) as c:
        (s,) = c.request(
            dq.DescribeTransactionsRequest(transactional_ids=(txn_id,))
        ).transaction_states
    return s.transaction_state if s.error_code == 0 else None


def create_on(cluster, topic: str, broker_id: int) -> None:
    """One partition whose only replica is on ``broker_id`` (confluent-kafka 2.16 refuses a
    replica assignment without a partition count, so CreateTopics is sent as is)."""
    import datetime

    from .rawclient import RawClient
    from .txn_raw import req

    Q = req(19, 7)
    topic_spec = Q.CreatableTopic(
        name=topic,
        num_partitions=-1,
        replication_factor=-1,
        assignments=(Q.CreatableReplicaAssignment(partition_index=0, broker_ids=(broker_id,)),),
        configs=(),
    )
    with RawClient(cluster.brokers[broker_id].bootstrap) as c:
        resp = c.request(
            Q.CreateTopicsRequest(
                topics=(topic_spec,), timeout=datetime.timedelta(seconds=15), validate_only=False
            )
        )
    assert resp.topics[0].error_code == 0, resp


def test_new_coordinator_completes_a_prepared_commit(cluster):
    """The coordinator dies after PrepareCommit while a partition of the transaction has no
    leader (its only replica is down): the next leader of its __transaction_state partition
    loads the PrepareCommit and writes the markers once the partition is back."""
    txn_id = "prepared-app"
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "transactional.id": txn_id, "linger.ms": 0}
    )
    producer.init_transactions(60)  # creates __transaction_state if this test runs alone
    p = partition_for(txn_id, 3)
    coordinator = cluster.state("__transaction_state", p)["leader"]
    holder = next(b for b in (0, 1, 2) if b != coordinator)
    create_on(cluster, "cprep", holder)
    cluster.wait_for(lambda: cluster.state("cprep", 0)["leader"] == holder, what="cprep leader")
    producer.begin_transaction()
    producer.produce("cprep", value=b"prepared", partition=0)
    assert producer.flush(30) == 0
    cluster.brokers[holder].kill()  # cprep-0 now has no leader: its marker must wait
    producer.commit_transaction(60)  # answered once PrepareCommit is written
    assert describe_state(cluster, coordinator, txn_id) == "PrepareCommit"
    cluster.brokers[coordinator].kill()
    (successor,) = cluster.wait_for(
        lambda: (
            (s := cluster.state("__transaction_state", p)["leader"]) not in (coordinator, -1)
            and (s,)
        ),
        timeout=SESSION_MS / 1000 + 20,
        what="a new transaction coordinator",
    )
    cluster.wait_for(
        lambda: describe_state(cluster, successor, txn_id) == "PrepareCommit",
        timeout=30,
        what="the prepared commit loaded",
    )
    cluster.brokers[holder].start()  # cprep-0 is back: the successor writes its marker
    cluster.wait_for(
        lambda: describe_state(cluster, successor, txn_id) == "CompleteCommit",
        timeout=60,
        what="the commit completed by the new coordinator",
    )
    cluster.brokers[coordinator].start()
    cluster.wait_for(cluster.whole, timeout=60, what="cluster whole")
    assert read_all(cluster.bootstrap, "cprep", "read_committed", timeout=30) == [b"prepared"]
