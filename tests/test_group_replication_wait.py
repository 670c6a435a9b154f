"""Group coordinator writes wait for replication (acks=all on __consumer_offsets): the replica
manager's wait on the high watermark, the group service's refusals and waits, Kafka's error
mapping, and the rebalance after an unreplicated assignment. A fake broker around real partition
logs and a real PartitionReplica; trio's mock clock stands in for real time."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import trio
import trio.testing

from kafkapy.coordinator.group.classic import GroupState, SyncResult
from kafkapy.coordinator.group.coordinator import (
    CommitOffset,
    JoinRequest,
    append_error_to_response_error,
)
from kafkapy.metadata.models import PartitionState, TopicInfo
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.replication.partition import PartitionReplica, replication_outcome
from kafkapy.server.config.broker_config import BrokerConfig
from kafkapy.server.coordinator.group_service import OFFSETS_TOPIC, GroupService
from kafkapy.server.replication.purgatory import Purgatory
from kafkapy.server.replication.replica_manager import ReplicaManager
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog

ME = 1


class FakeTopics:
    def __init__(self, info: TopicInfo, plog: PartitionLog) -> None:
        self.by_name = {info.name: info}
        self.by_id = {info.topic_id: info}
        self.plog = plog

    def get(self, name: str):
        return self.by_name.get(name)

    def log(self, name: str, p: int):
        return self.plog if name == OFFSETS_TOPIC and p == 0 else None

    def get_log(self, name: str, p: int):
        return self.log(name, p)


def make(tmp_path, isr=(1, 2, 3), min_isr: int | None = None):
    """A broker leading __consumer_offsets-0 (one partition) with replicas 1, 2, 3."""
    plog = PartitionLog.open(tmp_path, OFFSETS_TOPIC, 0, uuid.uuid4(), LogConfig(), recover=False)
    plog.auto_high_watermark = False
    configs = {} if min_isr is None else {"min.insync.replicas": str(min_isr)}
    info = TopicInfo(
        OFFSETS_TOPIC,
        uuid.uuid4(),
        {0: [1, 2, 3]},
        {0: PartitionState(leader=ME, leader_epoch=4, isr=list(isr), controller_epoch=1)},
        configs,
    )
    topics = FakeTopics(info, plog)
    broker = SimpleNamespace(
        config=BrokerConfig(offsets_topic_num_partitions=1),
        topics=topics,
        logs=topics,
        appended=Purgatory(),
        broker_id=ME,
        replicas=None,
    )
    rm = ReplicaManager.__new__(ReplicaManager)
    rm.broker, rm.me = broker, ME
    rp = PartitionReplica(OFFSETS_TOPIC, 0, ME)
    rp.apply_state(ME, 4, list(isr), 0, 1, [1, 2, 3], plog.log_end_offset, 0)
    rm.partitions = {(OFFSETS_TOPIC, 0): rp}
    broker.replicas = rm
    svc = GroupService(broker)
    svc.coordinator.add_empty_partitions([0], 0)
    return svc, rm, rp, plog


def commit(svc: GroupService, offset: int = 42) -> dict:
    return svc.coordinator.commit_offsets("g", -1, "", None, {("t", 0): CommitOffset(offset)}, 0)


def committed(svc: GroupService) -> int | None:
    _err, rows = svc.coordinator.fetch_offsets("g", [("t", [0])])
    om = rows[0][2]
    return None if om is None else om.offset


def followers_fetch(rm: ReplicaManager, rp: PartitionReplica, plog: PartitionLog, *ids) -> None:
    for b in ids:
        rp.on_follower_fetch(b, plog.log_end_offset, plog.log_end_offset, 1)
    rm.advance_hw(rp, plog)


def run(fn) -> None:
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def test_replication_outcome():
    assert replication_outcome(4, 3, 10, 4, 10, 2) == E.none
    assert replication_outcome(4, 3, 9, 4, 10, 2) is None  # wait
    assert replication_outcome(4, 1, 10, 4, 10, 2) == E.not_enough_replicas_after_append
    assert replication_outcome(5, 3, 10, 4, 10, 2) == E.not_leader_or_follower
    assert replication_outcome(None, 3, 10, 4, 10, 2) == E.not_leader_or_follower


def test_kafkas_error_mapping():
    assert append_error_to_response_error(E.request_timed_out) == E.coordinator_not_available
    assert append_error_to_response_error(E.not_enough_replicas) == E.coordinator_not_available
    assert (
        append_error_to_response_error(E.not_enough_replicas_after_append)
        == E.coordinator_not_available
    )
    assert append_error_to_response_error(E.unknown_topic_or_partition) == (
        E.coordinator_not_available
    )
    assert append_error_to_response_error(E.not_leader_or_follower) == E.not_coordinator
    assert append_error_to_response_error(E.kafka_storage_error) == E.not_coordinator
    assert append_error_to_response_error(E.message_too_large) == E.unknown_server_error
    assert append_error_to_response_error(E.invalid_group_id) == E.invalid_group_id


def test_commit_is_answered_once_the_isr_has_it(tmp_path):
    svc, rm, rp, plog = make(tmp_path)

    async def main():
        assert commit(svc) == {("t", 0): E.none}
        assert plog.log_end_offset == 1 and plog.high_watermark == 0
        got: list[int] = []

        async def answer():
            got.append(await svc.replicated("g"))

        async with trio.open_nursery() as n:
            n.start_soon(answer)
            await trio.sleep(1)
            assert not got  # followers have not fetched it
            followers_fetch(rm, rp, plog, 2)
            await trio.sleep(1)
            assert not got  # one of two
            followers_fetch(rm, rp, plog, 3)
        assert got == [0]
        assert trio.current_time() < 5

    run(main)


def test_commit_not_replicated_in_time_is_coordinator_not_available(tmp_path):
    svc, _rm, _rp, plog = make(tmp_path)

    async def main():
        assert commit(svc) == {("t", 0): E.none}
        start = trio.current_time()
        assert await svc.replicated("g") == E.coordinator_not_available
        assert trio.current_time() - start == 5.0  # offsets.commit.timeout.ms

    run(main)


def test_commit_refused_when_the_isr_is_below_min_insync(tmp_path):
    svc, _rm, _rp, plog = make(tmp_path, isr=(1,), min_isr=2)
    assert commit(svc) == {("t", 0): E.coordinator_not_available}
    assert plog.log_end_offset == 0  # nothing written
    assert committed(svc) is None


def test_isr_shrinking_below_min_insync_after_the_append(tmp_path):
    svc, rm, rp, plog = make(tmp_path, min_isr=2)

    async def main():
        assert commit(svc) == {("t", 0): E.none}
        got: list[int] = []

        async def answer():
            got.append(await svc.replicated("g"))

        async with trio.open_nursery() as n:
            n.start_soon(answer)
            await trio.sleep(1)
            rp.isr_written([1], 1)  # both followers dropped out: the high watermark moves
            rm.advance_hw(rp, plog)
        assert got == [E.coordinator_not_available]

    run(main)


def test_leadership_lost_while_waiting_is_not_coordinator(tmp_path):
    svc, rm, rp, plog = make(tmp_path)

    async def main():
        assert commit(svc) == {("t", 0): E.none}
        got: list[int] = []

        async def answer():
            got.append(await svc.replicated("g"))

        async with trio.open_nursery() as n:
            n.start_soon(answer)
            await trio.sleep(1)
            rp.apply_state(2, 5, [2, 3], 1, 1, [1, 2, 3], plog.log_end_offset, 1000)
            rm.broker.appended.notify()
        assert got == [E.not_coordinator]
        # and a write is refused while another broker leads
        assert commit(svc, 43) == {("t", 0): E.not_coordinator}

    run(main)


def test_embedded_mode_does_not_wait(tmp_path):
    svc, _rm, _rp, _plog = make(tmp_path)
    svc.broker.replicas = None

    async def main():
        assert commit(svc) == {("t", 0): E.none}
        assert await svc.replicated("g") == 0

    run(main)


def test_unreplicated_assignment_rebalances_the_group(tmp_path):
    svc, _rm, _rp, _plog = make(tmp_path)
    c = svc.coordinator
    c.config.initial_rebalance_delay_ms = 0
    req = JoinRequest(
        group_id="g",
        member_id="",
        protocol_type="consumer",
        protocols=[("range", b"")],
        session_timeout_ms=10000,
        rebalance_timeout_ms=10000,
        require_known_member_id=False,
    )
    join = c.join_group(req, 0)
    c.poll(1)
    assert join.done and join.result.error == 0
    mid, gen = join.result.member_id, join.result.generation_id
    sync = c.sync_group("g", gen, mid, None, {mid: b"assignment"}, 2)
    assert sync.done and sync.result == SyncResult(E.none, "consumer", "range", b"assignment")
    group = c.groups["g"]
    assert group.is_in(GroupState.STABLE)
    c.assignment_not_replicated("g", gen, "someone-else", E.coordinator_not_available, 3)
    assert group.is_in(GroupState.STABLE)  # only the leader's sync stored the assignment
    c.assignment_not_replicated("g", gen, mid, E.coordinator_not_available, 3)
    assert group.is_in(GroupState.PREPARING_REBALANCE)
    assert group.members[mid].assignment == b""
