"""Transactions on a three-broker cluster (ZooKeeper mode, replication factor 3): a
consume-transform-produce application with send_offsets_to_transaction stays exactly once
while the leader of its transaction coordinator's __transaction_state partition is killed with
kill -9 in the middle of a transaction (the new leader loads the state and finishes it), and
again while the leader of the output partition it writes to is killed (the markers go to the
new leader). Markers reach remote leaders with WriteTxnMarkers, and partition leaders verify
with the remote coordinator (KIP-890)."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from kafkapy.coordinator.group.partitioning import partition_for
from kafkapy.testing_cluster import SESSION_MS

from .txn_clients import produce_input, read_all, transform_batch

TXN_ID = "cluster-app"
N = 300


def test_exactly_once_across_coordinator_and_partition_leader_kills(cluster):
    cluster.create_topic("cin", partitions=2)
    cluster.create_topic("cout", partitions=2)
    produce_input(cluster.bootstrap, "cin", N, partitions=2)
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": "cluster-ctp",
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

    def kill(what: str, broker_id: int) -> None:
        producer.flush(30)  # this transaction's records are on the leaders, not yet committed
        cluster.brokers[broker_id].kill()
        killed.append((what, broker_id))

    def kill_coordinator() -> None:
        p = partition_for(TXN_ID, 3)
        kill("coordinator", cluster.state("__transaction_state", p)["leader"])

    def kill_output_leader() -> None:
        kill("output leader", cluster.state("cout", 0)["leader"])

    done, rounds = 0, 0
    deadline = time.monotonic() + 150
    while done < N and time.monotonic() < deadline:
        rounds += 1
        hook = None
        if rounds == 3:
            hook = kill_coordinator
        elif rounds == 8 and len(killed) == 1:
            # the first victim is back and in sync before the second kill
            cluster.brokers[killed[0][1]].start()
            cluster.wait_for(cluster.whole, timeout=60, what="cluster whole again")
            hook = kill_output_leader
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
    check = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "cluster-ctp"})
    try:
        got = check.committed([TopicPartition("cin", 0), TopicPartition("cin", 1)], timeout=20)
        assert [tp.offset for tp in got] == [N // 2, N // 2]
    finally:
        check.close()
