"""Partition reassignment and new-partition states: the pure decisions
(kafkapy.replication.reassignment) and the controller's use of them on the embedded store
(kafkapy.replication.topic_controller), including resuming after a controller change."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.models import PartitionState
from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication.controller import Controller, NotControllerError
from kafkapy.replication.election import NO_LEADER, Decision
from kafkapy.replication.reassignment import (
    ReplicaAssignment,
    begin,
    check_request,
    complete,
    initial_state,
    shrink_to,
)
from kafkapy.replication.topic_controller import TopicChanges, alter, on_topics_change

A = ReplicaAssignment.of

# -- the pure decisions ---------------------------------------------------------------------------


def test_reassign_to_orders_target_first_and_derives_original_and_target():
    a = A([0, 1]).reassign_to([1, 2])
    assert a == A([1, 2, 0], [2], [0])
    assert a.reassigning and a.original == [1, 0] and a.target == [1, 2]
    # a new target replaces the ongoing one, relative to the original replicas
    b = a.reassign_to([2, 0])
    assert b == A([2, 0, 1], [2], [1])
    # back to the original replicas: nothing moves any more
    assert a.reassign_to(a.original) == A([1, 0])
    assert not A([1, 0]).reassigning


def test_check_request_errors_as_kafka():
    live = {0, 1, 2}
    assert check_request(None, [0], live).code == ErrorCode.unknown_topic_or_partition
    assert check_request(None, None, live).code == ErrorCode.unknown_topic_or_partition
    cur = A([0, 1])
    assert check_request(cur, None, live).code == ErrorCode.no_reassignment_in_progress
    for bad in ([], [1, 1], [0, -1], [0, 7]):
        assert check_request(cur, bad, live).code == ErrorCode.invalid_replica_assignment, bad
    assert "not alive" in check_request(cur, [0, 7], live).message
    assert "Duplicate" in check_request(cur, [2, 2], live).message
    assert check_request(cur, [1, 2], live) is None
    # only new replicas must be registered: an original one may be down
    assert check_request(cur, [0, 2], {1, 2}) is None
    assert check_request(A([1, 2, 0], [2], [0]), None, live) is None


def test_begin_records_without_touching_the_state():
    step = begin(A([0, 1]), [1, 2], 0, 3, [0, 1], {0, 1, 2})
    assert step.assignment == A([1, 2, 0], [2], [0]) and step.state is None


def test_begin_replacing_drops_superseded_adding_replicas_from_isr():
    cur = A([1, 2, 0], [2], [0])  # 2 was being added and already joined the ISR
    step = begin(cur, [0, 1], 0, 3, [0, 1, 2], {0, 1, 2})
    assert step.assignment == A([0, 1])
    assert step.state == Decision(0, 3, [0, 1])
    # the superseded replica led (elected while moving): leadership goes back, new epoch
    step = begin(cur, None, 2, 4, [2, 1, 0], {0, 1, 2})
    assert step.assignment == A([1, 0]) and step.state == Decision(1, 5, [1, 0])


def test_complete_waits_for_every_target_replica_in_isr():
    cur = A([1, 2, 0], [2], [0])
    assert complete(cur, 0, 3, [0, 1], {0, 1, 2}) is None
    step = complete(cur, 0, 3, [0, 1, 2], {0, 1, 2})
    assert step is not None and step.assignment == A([1, 2])
    # the leader was removed: the first in-sync target replica leads, with a new epoch
    assert step.state == Decision(1, 4, [1, 2])
    # the leader stays when it is a target replica; only the ISR loses the removed replicas
    step = complete(cur, 2, 3, [2, 0, 1], {0, 1, 2})
    assert step is not None and step.state == Decision(2, 3, [2, 1])
    assert complete(A([0, 1]), 0, 3, [0, 1], {0, 1}) is None


def test_complete_without_a_live_target_leader_waits():
    cur = A([1, 2, 0], [2], [0])
    assert complete(cur, 0, 3, [0, 1, 2], {0}) is None


def test_shrink_to_and_initial_state():
    assert shrink_to([0, 1], 0, 2, [0, 1], {0, 1}) is None
    assert shrink_to([0, 1], 0, 2, [0, 1, 2], {0, 1, 2}) == Decision(0, 2, [0, 1])
    assert shrink_to([1], 0, 2, [0], {0, 1}) == Decision(NO_LEADER, 3, [])
    assert initial_state([2, 0, 1], {0, 1}) == Decision(0, 0, [0, 1])
    assert initial_state([2], {0, 1}) is None


def test_topic_changes_take_resets():
    c = TopicChanges()
    assert c and c.full
    got = c.take()
    assert got.full and not c
    c.names.add("t")
    assert c.take().names == {"t"} and not c


# -- the controller on the embedded store ---------------------------------------------------------


@pytest.fixture
def cluster(tmp_path: Path):
    store = EmbeddedStore.in_dir(tmp_path)
    c = ClusterMetadata(store)
    for b in (0, 1, 2):
        c.register_broker(b, "127.0.0.1", 9092 + b)
    yield c
    store.close()


def _controller(cluster: ClusterMetadata) -> Controller:
    ctrl = Controller(cluster, 0)
    assert ctrl.try_elect()
    return ctrl


def _doc(cluster: ClusterMetadata, name: str):
    got = cluster.get_assignment(name)
    assert got is not None
    return got[0]


def test_controller_creates_states_of_new_topics_and_partitions(cluster):
    ctrl = _controller(cluster)
    cluster.create_topic("t", {0: [1, 2], 1: [2, 0]}, with_states=False)
    assert cluster.get_topic("t").states == {}
    assert on_topics_change(ctrl, TopicChanges(full=False, listed=True)) == 2
    s0 = cluster.get_partition_state("t", 0)
    assert (s0.leader, s0.leader_epoch, s0.isr, s0.controller_epoch) == (1, 0, [1, 2], ctrl.epoch)
    # nothing left to do; new partitions get their state from a change of the topic
    assert on_topics_change(ctrl, TopicChanges(full=False, names={"t"})) == 0
    cluster.add_partitions("t", {2: [0, 1]}, with_states=False)
    assert on_topics_change(ctrl, TopicChanges(full=False, names={"t"})) == 1
    assert cluster.get_partition_state("t", 2).leader == 0


def test_controller_waits_for_a_live_replica_before_creating_a_state(cluster):
    ctrl = _controller(cluster)
    cluster.unregister_broker(2)
    cluster.create_topic("solo", {0: [2]}, with_states=False)
    assert on_topics_change(ctrl, TopicChanges(full=False, listed=True)) == 0
    cluster.register_broker(2, "127.0.0.1", 9094)
    assert on_topics_change(ctrl, TopicChanges(full=True)) == 1
    assert cluster.get_partition_state("solo", 0).isr == [2]


def test_reassignment_recorded_then_completed_and_resumed_by_a_new_controller(cluster):
    ctrl = _controller(cluster)
    cluster.create_topic("m", {0: [0, 1], 1: [1, 0]})
    out = alter(
        ctrl,
        {
            ("m", 0): [1, 2],
            ("m", 1): [1, 1],
            ("m", 9): [0],
            ("nope", 0): [0],
            ("m", 7): None,
        },
    )
    assert out[("m", 0)] is None
    assert out[("m", 1)].code == ErrorCode.invalid_replica_assignment
    assert out[("m", 9)].code == ErrorCode.unknown_topic_or_partition
    assert out[("nope", 0)].code == ErrorCode.unknown_topic_or_partition
    assert out[("m", 7)].code == ErrorCode.unknown_topic_or_partition
    doc = _doc(cluster, "m")
    assert doc.partitions[0] == [1, 2, 0]
    assert doc.adding_replicas == {0: [2]} and doc.removing_replicas == {0: [0]}
    assert alter(ctrl, {("m", 1): None})[("m", 1)].code == ErrorCode.no_reassignment_in_progress

    # broker 2 catches up: the leader (0) adds it to the ISR
    s = cluster.get_partition_state("m", 0)
    cluster.update_partition_state(
        "m", 0, PartitionState(0, s.leader_epoch, [0, 1, 2], s.controller_epoch), s.zk_version
    )
    # a new controller (epoch bumped) resumes from the tree alone; the old one is fenced
    cluster.resign_controller(0)
    ctrl2 = Controller(cluster, 1)
    assert ctrl2.try_elect() and ctrl2.epoch == ctrl.epoch + 1
    with pytest.raises(NotControllerError):
        alter(ctrl, {("m", 0): None})
    assert on_topics_change(ctrl2, TopicChanges()) == 1
    doc = _doc(cluster, "m")
    assert doc.partitions[0] == [1, 2] and not doc.adding_replicas and not doc.removing_replicas
    s = cluster.get_partition_state("m", 0)
    assert (s.leader, s.leader_epoch, s.isr, s.controller_epoch) == (1, 1, [1, 2], ctrl2.epoch)


def test_cancel_reverts_to_the_original_replicas(cluster):
    ctrl = _controller(cluster)
    cluster.create_topic("c", {0: [0, 1]})
    assert alter(ctrl, {("c", 0): [2, 1]}) == {("c", 0): None}
    assert _doc(cluster, "c").adding_replicas == {0: [2]}
    assert alter(ctrl, {("c", 0): None}) == {("c", 0): None}
    doc = _doc(cluster, "c")
    assert sorted(doc.partitions[0]) == [0, 1] and not doc.adding_replicas
    assert cluster.get_partition_state("c", 0).isr == [0, 1]


def test_move_to_replicas_already_in_sync_completes_at_once(cluster):
    ctrl = _controller(cluster)
    cluster.create_topic("s", {0: [0, 1, 2]})
    assert alter(ctrl, {("s", 0): [2, 1]}) == {("s", 0): None}
    doc = _doc(cluster, "s")
    assert doc.partitions[0] == [2, 1] and not doc.removing_replicas
    s = cluster.get_partition_state("s", 0)
    assert (s.leader, s.leader_epoch, s.isr) == (2, 1, [1, 2])
