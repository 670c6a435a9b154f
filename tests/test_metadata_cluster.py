"""ClusterMetadata on the embedded store: brokers, controller, topic lifecycle, persistence."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.errors import (
    BadVersionError,
    ControllerExistsError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    TopicExistsError,
    UnknownTopicError,
)
from kafkapy.metadata.models import Endpoint, PartitionState


@pytest.fixture
def store(tmp_path: Path):
    s = EmbeddedStore.in_dir(tmp_path)
    yield s
    s.close()


@pytest.fixture
def cluster(store: EmbeddedStore) -> ClusterMetadata:
    return ClusterMetadata(store)


def test_persistent_paths(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    for path in zn.PERSISTENT_PATHS:
        assert store.exists(path) is not None


def test_cluster_id_created_once(tmp_path: Path) -> None:
    with EmbeddedStore.in_dir(tmp_path) as s:
        cid = ClusterMetadata(s).ensure_cluster_id()
        assert len(cid) == 22
        assert ClusterMetadata(s).ensure_cluster_id() == cid
        assert json.loads(s.get("/cluster/id")[0]) == {"version": "1", "id": cid}
    with EmbeddedStore.in_dir(tmp_path) as s:
        assert ClusterMetadata(s).ensure_cluster_id() == cid


def test_broker_registration(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    info = cluster.register_broker(1, "127.0.0.1", 9092, rack="r1")
    assert info.host == "127.0.0.1" and info.port == 9092
    stat = store.exists("/brokers/ids/1")
    assert stat is not None and stat.ephemeral_owner == store.session_id
    # the same session registering again (a create retried after a lost reply) keeps the znode
    # and updates it, as Kafka's checked ephemeral create does; another session is refused
    # (tests/test_zk_store.py, where two sessions can coexist)
    cluster.register_broker(1, "127.0.0.1", 9093)
    assert cluster.get_broker(1).port == 9093
    info = cluster.register_broker(1, "127.0.0.1", 9092, rack="r1")
    assert store.exists("/brokers/ids/1").ephemeral_owner == store.session_id
    cluster.register_broker(
        2, "h", 1, listeners=[Endpoint("PLAINTEXT", "h", 1), Endpoint("OTHER", "h", 2)]
    )
    brokers = cluster.list_brokers()
    assert list(brokers) == [1, 2]
    assert brokers[1].rack == "r1" and brokers[1].endpoints == info.endpoints
    assert brokers[2].endpoint("OTHER") == Endpoint("OTHER", "h", 2)
    cluster.unregister_broker(2)
    assert list(cluster.list_brokers()) == [1]


def test_broker_registration_gone_after_restart(tmp_path: Path) -> None:
    with EmbeddedStore.in_dir(tmp_path) as s:
        ClusterMetadata(s).register_broker(1, "h", 1)
        ClusterMetadata(s).elect_controller(1)
    with EmbeddedStore.in_dir(tmp_path) as s:
        c = ClusterMetadata(s)
        assert c.list_brokers() == {} and c.controller_id() is None
        c.register_broker(1, "h", 1)
        assert c.elect_controller(1) == 2


def test_controller_election(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    assert cluster.controller_id() is None
    assert cluster.controller_epoch() == (0, -1)
    assert cluster.elect_controller(1) == 1
    assert cluster.elect_controller(1) == 1  # already controller: same epoch
    assert cluster.controller_id() == 1
    assert store.get("/controller_epoch")[0] == b"1"
    assert json.loads(store.get("/controller")[0])["brokerid"] == 1
    with pytest.raises(ControllerExistsError) as info:
        cluster.elect_controller(2)
    assert info.value.controller_id == 1
    cluster.resign_controller(1)
    assert cluster.elect_controller(2) == 2


def test_broker_id_generation(cluster: ClusterMetadata) -> None:
    assert cluster.generate_broker_id() == 1001
    assert cluster.generate_broker_id() == 1002


def test_create_topic(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    cluster.elect_controller(1)
    info = cluster.create_topic("orders", {0: [1, 2], 1: [2, 1]}, {"retention.ms": "1000"})
    assert info.name == "orders" and info.partitions == {0: [1, 2], 1: [2, 1]}
    assert info.configs == {"retention.ms": "1000"} and info.num_partitions == 2
    assert info.states[1] == PartitionState(
        leader=2, leader_epoch=0, isr=[2, 1], controller_epoch=1, zk_version=0
    )
    doc = json.loads(store.get("/brokers/topics/orders")[0])
    assert doc["partitions"] == {"0": [1, 2], "1": [2, 1]} and len(doc["topic_id"]) == 22
    assert json.loads(store.get("/brokers/topics/orders/partitions/0/state")[0])["leader"] == 1
    assert json.loads(store.get("/config/topics/orders")[0]) == {
        "version": 1, "config": {"retention.ms": "1000"}
    }
    assert cluster.list_topics() == ["orders"]
    assert cluster.topic_by_id(info.topic_id) == info
    assert cluster.topic_by_id(uuid.uuid4()) is None
    assert cluster.get_topic("nope") is None


def test_create_topic_with_given_id(cluster: ClusterMetadata) -> None:
    tid = uuid.uuid4()
    assert cluster.create_topic("t", {0: [0]}, topic_id=tid).topic_id == tid


def test_create_topic_errors(cluster: ClusterMetadata) -> None:
    cluster.create_topic("a.b", {0: [1]})
    with pytest.raises(TopicExistsError, match="Topic 'a.b' already exists."):
        cluster.create_topic("a.b", {0: [1]})
    with pytest.raises(InvalidTopicError, match="collides with existing topics: a.b"):
        cluster.create_topic("a_b", {0: [1]})
    with pytest.raises(InvalidTopicError, match="Topic name is invalid"):
        cluster.create_topic("bad name", {0: [1]})
    with pytest.raises(InvalidPartitionsError):
        cluster.create_topic("t", {})
    with pytest.raises(InvalidReplicaAssignmentError, match="consecutive"):
        cluster.create_topic("t", {1: [1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="Duplicate"):
        cluster.create_topic("t", {0: [1, 1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="same number"):
        cluster.create_topic("t", {0: [1], 1: [1, 2]})
    with pytest.raises(InvalidReplicaAssignmentError):
        cluster.create_topic("t", {0: []})
    assert cluster.list_topics() == ["a.b"]


def test_create_topic_replaces_leftover_config(
    store: EmbeddedStore, cluster: ClusterMetadata
) -> None:
    store.create("/config/topics/t", zn.TOPIC_CONFIG.encode({"x": "1"}))
    assert cluster.create_topic("t", {0: [1]}, {"y": "2"}).configs == {"y": "2"}


def test_create_topic_rolls_back_on_conflict(
    store: EmbeddedStore, cluster: ClusterMetadata
) -> None:
    class Racing(ClusterMetadata):
        def _state_ops(self, name, assignment, controller_epoch):  # type: ignore[no-untyped-def]
            ops = super()._state_ops(name, assignment, controller_epoch)
            store.create("/brokers/topics/t", b"{}")  # someone else creates the topic meanwhile
            return ops

    with pytest.raises(TopicExistsError):
        Racing(store).create_topic("t", {0: [1]}, {"a": "b"})
    assert store.get("/brokers/topics/t")[0] == b"{}"
    assert store.exists("/config/topics/t") is None
    assert store.exists("/brokers/topics/t/partitions") is None


def test_delete_topic(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    info = cluster.create_topic("t", {0: [1], 1: [1]}, {"a": "b"})
    cluster.create_topic("t2", {0: [1]})
    cluster.delete_topic("t")
    assert cluster.list_topics() == ["t2"]
    assert store.exists("/config/topics/t") is None
    assert store.children("/admin/delete_topics") == []
    assert cluster.topic_by_id(info.topic_id) is None
    with pytest.raises(UnknownTopicError):
        cluster.delete_topic("t")
    # the name can be reused, with a new id
    assert cluster.create_topic("t", {0: [1]}).topic_id != info.topic_id


def test_resume_pending_deletions(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    cluster.create_topic("t", {0: [1]})
    store.create("/admin/delete_topics/t")  # as if a crash interrupted delete_topic
    assert cluster.pending_deletions() == ["t"]
    assert cluster.resume_pending_deletions() == ["t"]
    assert cluster.list_topics() == [] and cluster.pending_deletions() == []


def test_add_partitions(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    cluster.create_topic("t", {0: [1, 2]})
    info = cluster.add_partitions("t", {1: [2, 1], 2: [1, 2]})
    assert info.partitions == {0: [1, 2], 1: [2, 1], 2: [1, 2]}
    assert info.states[1].leader == 2 and info.zk_version == 1
    with pytest.raises(InvalidReplicaAssignmentError):
        cluster.add_partitions("t", {4: [1, 2]})
    with pytest.raises(InvalidReplicaAssignmentError, match="replication factor"):
        cluster.add_partitions("t", {3: [1]})
    with pytest.raises(InvalidPartitionsError):
        cluster.add_partitions("t", {})
    with pytest.raises(UnknownTopicError):
        cluster.add_partitions("nope", {1: [1]})


def test_topic_configs_and_notifications(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    cluster.create_topic("t", {0: [1]})
    cluster.set_topic_configs("t", {"cleanup.policy": "compact"})
    assert cluster.topic_configs("t") == {"cleanup.policy": "compact"}
    assert cluster.get_topic("t").configs == {"cleanup.policy": "compact"}  # type: ignore[union-attr]
    changes = store.children("/config/changes")
    assert changes == ["config_change_0000000000"]
    data = store.get("/config/changes/" + changes[0])[0]
    assert zn.CONFIG_CHANGE_NOTIFICATION.decode(data) == "topics/t"
    with pytest.raises(UnknownTopicError):
        cluster.set_topic_configs("nope", {})
    cluster.set_broker_configs(1, {"log.cleaner.threads": "2"})
    assert cluster.broker_configs(1) == {"log.cleaner.threads": "2"}
    assert cluster.broker_configs("<default>") == {}


def test_update_partition_state(cluster: ClusterMetadata) -> None:
    cluster.create_topic("t", {0: [1, 2]})
    state = cluster.get_partition_state("t", 0)
    assert state is not None and state.zk_version == 0
    new = PartitionState(leader=2, leader_epoch=1, isr=[2], controller_epoch=0)
    updated = cluster.update_partition_state("t", 0, new, state.zk_version)
    assert updated.zk_version == 1 and cluster.get_partition_state("t", 0) == updated
    with pytest.raises(BadVersionError):
        cluster.update_partition_state("t", 0, new, 0)


def test_legacy_topic_gets_an_id(store: EmbeddedStore, cluster: ClusterMetadata) -> None:
    store.create("/brokers/topics/old", b'{"version":1,"partitions":{"0":[1]}}')
    info = cluster.get_topic("old")
    assert info is not None and info.topic_id.int != 0
    assert cluster.get_topic("old").topic_id == info.topic_id  # type: ignore[union-attr]


def test_persistence_across_reopen(tmp_path: Path) -> None:
    with EmbeddedStore.in_dir(tmp_path) as s:
        c = ClusterMetadata(s)
        c.elect_controller(1)
        before = c.create_topic("t", {0: [1], 1: [1]}, {"a": "b"})
        c.set_topic_configs("t", {"a": "c"})
    with EmbeddedStore.in_dir(tmp_path) as s:
        c = ClusterMetadata(s)
        after = c.get_topic("t")
        assert after is not None
        assert after.topic_id == before.topic_id and after.partitions == before.partitions
        assert after.states == before.states and after.configs == {"a": "c"}
        assert c.topic_by_id(before.topic_id) == after
