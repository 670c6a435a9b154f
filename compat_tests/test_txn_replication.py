"""Transactions across replicas on a three-broker cluster (real ZooKeeper): markers written by
WriteTxnMarkers wait for the ISR, followers rebuild the same transaction state and .txnindex
from what they replicate, and a new leader after a kill -9 keeps the last stable offset and the
aborted transactions. A raw client plays the transaction coordinator (KIP-890 verification off:
its transactional ids are not known to the cluster's coordinator)."""

from __future__ import annotations

import pytest

from compat_tests.rawclient import RawClient
from compat_tests.test_txn_partitions import describe_producers
from compat_tests.txn_raw import (
    batch,
    fetch_partition,
    list_latest,
    produce,
    producer_id,
    txn_batch,
    write_markers,
)
from kafkapy.testing.cluster import BROKERS, Cluster, wait_for

READ_COMMITTED = 1


# the module's cluster (compat_tests/conftest.py): three brokers on their own ZooKeeper
pytestmark = pytest.mark.kafka_cluster(
    overrides={"transaction.partition.verification.enable": "false"}
)


def txn_index(cluster: Cluster, broker_id: int, topic: str) -> bytes:
    d = cluster.brokers[broker_id].data_dir / "logs" / f"{topic}-0"
    return b"".join(p.read_bytes() for p in sorted(d.glob("*.txnindex")))


def test_followers_and_a_new_leader_keep_transaction_state(cluster: Cluster) -> None:
    cluster.create_topic("rtx", partitions=1, rf=3)
    leader = cluster.state("rtx", 0)["leader"]
    with RawClient(cluster.brokers[leader].bootstrap) as c:
        a, b = producer_id(c), producer_id(c)
        assert produce(c, "rtx", txn_batch(a, 0, [b"a0", b"a1"]), "ta").error_code == 0  # 0-1
        assert produce(c, "rtx", batch([b"plain"])).error_code == 0  # 2
        assert produce(c, "rtx", txn_batch(b, 0, [b"b0"]), "tb").error_code == 0  # 3, stays open
        # acks=all: answered once the ISR has the marker
        got = write_markers(c, a, False, {"rtx": [0]}, coordinator_epoch=2)  # 4
        assert got == {("rtx", 0): 0}
        assert list_latest(c, "rtx", READ_COMMITTED) == 3
    wait_for(lambda: cluster.converged("rtx", 1), what="replicas converged")
    indexes = {i: txn_index(cluster, i, "rtx") for i in BROKERS}
    assert len(indexes[leader]) == 34 and len(set(indexes.values())) == 1

    cluster.brokers[leader].kill()
    try:
        new = wait_for(
            lambda: [x for x in [cluster.state("rtx", 0)["leader"]] if x not in (leader, -1)],
            what="a new leader",
        )[0]
        with RawClient(cluster.brokers[new].bootstrap) as c:
            wait_for(lambda: list_latest(c, "rtx", READ_COMMITTED) == 3, what="the LSO on it")
            p = fetch_partition(c, "rtx", 0, READ_COMMITTED)
            assert (p.high_watermark, p.last_stable_offset) == (5, 3)
            assert [(x.producer_id, x.first_offset) for x in p.aborted_transactions] == [(a, 0)]
            producers = describe_producers(c, "rtx")
            assert producers[a] == (2, -1) and producers[b] == (-1, 3)
            # the coordinator finishes the open transaction on the new leader
            assert write_markers(c, b, True, {"rtx": [0]}, coordinator_epoch=2) == {
                ("rtx", 0): 0
            }
            assert list_latest(c, "rtx", READ_COMMITTED) == 6
    finally:
        cluster.brokers[leader].start()
    wait_for(lambda: cluster.converged("rtx", 1), timeout=60, what="the old leader caught up")
    assert len({txn_index(cluster, i, "rtx") for i in BROKERS}) == 1
