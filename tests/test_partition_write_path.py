"""The leader write path (server/replication/partition.py): one lookup with Kafka's refusals, the
append moving the high watermark and waking waiters, and one wait over several writes for acks=all
(each answered on its own). A fake broker around a real partition log and a real
PartitionReplica; trio's mock clock stands in for real time."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import trio
import trio.testing

from kafkapy.metadata.models import PartitionState, TopicInfo
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.replication.partition import PartitionReplica
from kafkapy.server.config.broker_config import BrokerConfig
from kafkapy.server.replication.partition import Partition, await_replication, complete_writes
from kafkapy.server.replication.purgatory import Purgatory
from kafkapy.server.replication.replica_manager import ReplicaManager
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog

ME = 1


class FakeTopics:
    def __init__(self, info: TopicInfo, plog: PartitionLog) -> None:
        self.info, self.plog = info, plog

    def get(self, name: str):
        return self.info if name == self.info.name else None

    def log(self, name: str, p: int):
        return self.plog if (name, p) == (self.info.name, 0) else None

    get_log = log


def make(tmp_path, isr=(1, 2), min_isr: int = 1, replicated: bool = True):
    plog = PartitionLog.open(tmp_path, "t", 0, uuid.uuid4(), LogConfig(), recover=False)
    plog.auto_high_watermark = not replicated
    info = TopicInfo(
        "t",
        uuid.uuid4(),
        {0: [1, 2]},
        {0: PartitionState(leader=ME, leader_epoch=4, isr=list(isr), controller_epoch=1)},
        {"min.insync.replicas": str(min_isr)},
    )
    topics = FakeTopics(info, plog)
    broker = SimpleNamespace(
        config=BrokerConfig(), topics=topics, logs=topics, appended=Purgatory(), broker_id=ME,
        replicas=None,
    )
    rp = PartitionReplica("t", 0, ME)
    if replicated:
        rm = ReplicaManager.__new__(ReplicaManager)
        rm.broker, rm.me = broker, ME
        rp.apply_state(ME, 4, list(isr), 0, 1, [1, 2], plog.log_end_offset, 0)
        rm.partitions = {("t", 0): rp}
        broker.replicas = rm
    return broker, rp, plog


def batch() -> bytes:
    return encode_batch([Record(0, 0, b"k", b"v")])


def test_lookup_refusals(tmp_path):
    broker, rp, plog = make(tmp_path)
    assert Partition.for_write(broker, "nope", 0) == E.unknown_topic_or_partition
    assert Partition.for_write(broker, "t", 1) == E.unknown_topic_or_partition
    part = Partition.for_write(broker, "t", 0)
    assert isinstance(part, Partition) and part.leader_epoch == 4 and part.replica is rp
    plog.offline = True
    assert Partition.for_write(broker, "t", 0, refuse_offline=True) == E.kafka_storage_error
    plog.offline = False
    rp.apply_state(2, 5, [2], 1, 1, [1, 2], plog.log_end_offset, 0)  # leadership moved
    assert Partition.for_write(broker, "t", 0) == E.not_leader_or_follower


def test_min_isr_refusal_only_in_zookeeper_mode(tmp_path):
    broker, _rp, _plog = make(tmp_path, isr=(1,), min_isr=2)
    part = Partition.for_write(broker, "t", 0)
    assert isinstance(part, Partition)
    assert part.min_isr_refusal() == (
        "The size of the current ISR [1] is insufficient to satisfy the min.isr requirement "
        "of 2 for partition t-0"
    )
    embedded, _rp, _plog = make(tmp_path / "e", isr=(1,), min_isr=2, replicated=False)
    part = Partition.for_write(embedded, "t", 0)
    assert isinstance(part, Partition) and part.min_isr_refusal() is None


def test_append_moves_the_high_watermark_and_wakes_waiters(tmp_path):
    broker, rp, plog = make(tmp_path, isr=(1,))  # alone in the ISR: the append is replicated

    async def main():
        watch = broker.appended.watch([("t", 0)])
        part = Partition.for_write(broker, "t", 0)
        assert isinstance(part, Partition)
        res = part.append_records(batch(), 0)
        assert watch.fired and plog.high_watermark == res.last_offset + 1 == 1
        mark = part.mark(res.last_offset)
        assert (mark.topic, mark.partition, mark.leader_epoch, mark.end_offset) == ("t", 0, 4, 1)
        assert await complete_writes(broker, [mark], 1.0) == [E.none]
        watch.close()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_one_wait_over_several_writes(tmp_path):
    broker, rp, plog = make(tmp_path)

    async def main():
        part = Partition.for_write(broker, "t", 0)
        assert isinstance(part, Partition)
        first = part.mark(part.append_records(batch(), 0).last_offset)
        second = part.mark(part.append_records(batch(), 0).last_offset)
        stale = type(first)("t", 0, 3, 1)  # written under an older epoch
        got: list = []

        async def wait():
            got.extend(await await_replication(broker, [first, second, stale], 5.0))

        async with trio.open_nursery() as n:
            n.start_soon(wait)
            await trio.sleep(1)
            rp.on_follower_fetch(2, 1, plog.log_end_offset, 1)  # the follower has the first
            broker.replicas.advance_hw(rp, plog)
        assert got == [E.none, E.request_timed_out, E.not_leader_or_follower]
        assert trio.current_time() == 5.0

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_embedded_mode_does_not_wait(tmp_path):
    broker, _rp, _plog = make(tmp_path, replicated=False)

    async def main():
        part = Partition.for_write(broker, "t", 0)
        assert isinstance(part, Partition)
        mark = part.mark(part.append_records(batch(), 0).last_offset)
        assert await complete_writes(broker, [mark], 5.0) == [E.none]
        assert trio.current_time() == 0

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
