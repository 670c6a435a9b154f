"""A broker starting in ZooKeeper mode on a real ZooKeeper: the topic views it serves in
Metadata are as fresh as the partition states its replica manager applies.

The topic registry reads every topic before the replica manager adds its watches. A leader
elected in between (a restarted broker's partitions get their leader back at about that moment)
changes no znode the broker watches afterwards, so unless the replica manager's fresher read
replaces the registry's view, Metadata keeps answering the old state ("leader -1") until some
later change of that topic: clients of the partition wait forever (seen as a read_committed
consumer that never found cprep-0's leader in test_txn_cluster under load)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kafkapy.server.apis  # noqa: F401  (registers the API handlers, as the broker does)
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.models import PartitionState
from kafkapy.metadata.zookeeper import ZooKeeperStore
from kafkapy.server.broker import Broker
from kafkapy.server.config.broker_config import BrokerConfig
from kafkapy.server.topics import TopicRegistry
from kafkapy.testing import free_port
from kafkapy.testing.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(120)


def test_a_leader_elected_while_the_broker_starts_is_in_its_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ZooKeeperServer(tmp_path / "zk").start()
    broker = None
    admin = ZooKeeperStore(server.connect_string + "/kafka", session_timeout_ms=20000)
    try:
        cluster = ClusterMetadata(admin)
        cluster.create_topic("t", {0: [0]})
        offline = PartitionState(leader=-1, leader_epoch=1, isr=[0], controller_epoch=1)
        version = cluster.get_topic("t").states[0].zk_version
        cluster.update_partition_state("t", 0, offline, version)

        load = TopicRegistry.load

        def load_then_elect(registry: TopicRegistry) -> None:
            load(registry)  # the registry holds "leader -1 epoch 1"
            state = cluster.get_topic("t").states[0]
            back = PartitionState(leader=0, leader_epoch=2, isr=[0], controller_epoch=1)
            cluster.update_partition_state("t", 0, back, state.zk_version)

        monkeypatch.setattr(TopicRegistry, "load", load_then_elect)
        config = BrokerConfig.from_properties(
            {
                "broker.id": "0",
                "zookeeper.connect": server.connect_string + "/kafka",
                "log.dirs": str(tmp_path / "logs"),
                "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
            }
        )
        broker = Broker(config)
        broker.start()
        view = broker.topics.get("t").states[0]
        assert (view.leader, view.leader_epoch) == (0, 2)
        assert broker.replicas.partitions[("t", 0)].is_leader
    finally:
        if broker is not None:
            broker.stop()
        admin.close()
        server.stop()
