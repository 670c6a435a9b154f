"""A follower's decisions about its own log (kafkapy.replication.truncation, sans-io), the log
operations they drive (truncation of a divergent tail, truncate-fully-and-start-at, the log start
offset following the leader's), and the replica fetcher applying them against a fake leader."""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace

import trio

from kafkapy.protocol.record_batch import Record, encode_batch, iter_batches
from kafkapy.replication.partition import PartitionReplica
from kafkapy.replication.truncation import (
    OutOfRange,
    Truncation,
    epoch_truncation,
    follower_log_start,
    out_of_range,
    restart_for_first_batch,
)
from kafkapy.server.replication.purgatory import Purgatory
from kafkapy.server.replication.replica_fetcher import FETCHING, OUT_OF_RANGE, LeaderFetcher
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog

# -- OffsetForLeaderEpoch truncation (KIP-101 / KIP-279) -----------------------------------------


def test_epoch_truncation_cuts_the_divergent_tail_at_the_leaders_epoch_end():
    # both know epoch 3; the leader's epoch 3 ended at 100, this replica wrote up to 130 in it
    assert epoch_truncation(3, 100, 3, 130, 130, 90) == Truncation(100, True)
    # this replica's epoch 3 ended earlier than the leader's: nothing to cut beyond its own end
    assert epoch_truncation(3, 100, 3, 80, 80, 70) == Truncation(80, True)
    # never beyond the log end offset
    assert epoch_truncation(3, 100, 3, 130, 95, 90) == Truncation(95, True)


def test_epoch_truncation_needs_another_round_for_an_unknown_epoch():
    # the leader answered epoch 2 (its largest <= our 4); our largest epoch <= 2 is 1, ending at
    # 60 (where our epoch 4 began): cut there and ask again with epoch 1
    assert epoch_truncation(2, 70, 1, 60, 120, 50) == Truncation(60, False)


def test_epoch_truncation_without_epoch_information():
    # the leader knows nothing that old: back to the high watermark
    assert epoch_truncation(-1, -1, -1, -1, 120, 50) == Truncation(50, True)
    # an old leader without epochs answered an offset only
    assert epoch_truncation(-1, 70, -1, -1, 120, 50) == Truncation(70, True)
    # this replica has no epoch <= the leader's: go to the leader's end offset
    assert epoch_truncation(2, 70, -1, -1, 120, 50) == Truncation(70, True)


def test_out_of_range_decisions():
    # an unclean election left this replica longer than the new leader: truncate to its end
    a = out_of_range(replica_end=150, leader_end=120, leader_start=None)
    assert (a.kind, a.offset) == (OutOfRange.TRUNCATE, 120)
    # the leader's log start passed this replica's end (retention, DeleteRecords): start over
    a = out_of_range(replica_end=40, leader_end=500, leader_start=300)
    assert (a.kind, a.offset) == (OutOfRange.RESET, 300)
    # in range by now (the leader appended meanwhile): just fetch again
    a = out_of_range(replica_end=40, leader_end=500, leader_start=10)
    assert (a.kind, a.offset) == (OutOfRange.RETRY, 40)


def test_restart_for_first_batch_and_log_start():
    # an empty log restarted at 105 receives the batch 100..109: restart at 100
    assert restart_for_first_batch(105, 105, 100, 109) == 100
    assert restart_for_first_batch(105, 105, 105, 109) is None  # continues the log
    assert restart_for_first_batch(0, 105, 100, 109) is None  # not an empty log
    # the log start follows the leader's, never past the follower's high watermark
    assert follower_log_start(50, 0, 80) == 50
    assert follower_log_start(50, 0, 30) == 30
    assert follower_log_start(50, 50, 80) is None
    assert follower_log_start(10, 20, 80) is None


# -- the log operations ----------------------------------------------------------------------------


def _log(path: Path, **cfg) -> PartitionLog:
    log = PartitionLog.open(path, "t", 0, uuid.uuid4(), LogConfig(**cfg), recover=False)
    log.auto_high_watermark = False
    return log


def _fill(log: PartitionLog, n: int, epoch: int = 0, per_batch: int = 1) -> None:
    for i in range(n):
        recs = [Record(0, 1000 + i, b"k", b"v%d-%d" % (i, j)) for j in range(per_batch)]
        log.append_as_leader(encode_batch(recs), leader_epoch=epoch, now_ms=2000)


def test_truncate_fully_and_start_at(tmp_path):
    log = _fill_rolled(tmp_path / "a")
    assert len(log.segments) > 1
    old_files = sorted(p.name for p in log.directory.glob("*.log"))
    log.truncate_fully_and_start_at(500, now_ms=5000)
    assert log.log_start_offset == log.log_end_offset == log.high_watermark == 500
    assert [s.base_offset for s in log.segments] == [500]
    assert log.epoch_cache.entries == []
    live = sorted(p.name for p in log.directory.glob("*.log"))
    assert live == ["00000000000000000500.log"]
    assert all((log.directory / (n + ".deleted")).exists() for n in old_files)
    # it continues at 500: a follower appends the leader's batches from there
    src = _log(tmp_path / "src")
    src.truncate_fully_and_start_at(500)
    _fill(src, 3, epoch=4)
    assert log.append_as_follower(src.read_bytes(500, 1 << 20), now_ms=6000) > 0
    assert log.log_end_offset == 503 and log.epoch_cache.entries == [(4, 500)]
    log.close()
    # reopened, the log keeps its start
    again = PartitionLog.open(tmp_path / "a", "t", 0, None, LogConfig(), recover=True)
    assert again.log_start_offset == 500 and again.log_end_offset == 503
    again.close()


def _fill_rolled(path: Path) -> PartitionLog:
    log = _log(path, segment_bytes=400)
    _fill(log, 20)
    return log


def test_truncate_below_the_first_segment_restarts_the_log(tmp_path):
    log = _fill_rolled(tmp_path / "a")
    log.high_watermark = log.log_end_offset
    start = log.segments[1].base_offset
    log.delete_records_before(start)
    assert log.segments[0].base_offset == start
    log.truncate_to(start - 2)
    assert log.log_start_offset == log.log_end_offset == start - 2
    assert [s.base_offset for s in log.segments] == [start - 2]


def test_truncate_at_the_end_drops_an_empty_epoch(tmp_path):
    log = _log(tmp_path / "a")
    _fill(log, 3, epoch=1)
    log.epoch_cache.assign(5, 3)  # became leader at 3, wrote nothing, lost leadership
    log.truncate_to(3)
    assert log.epoch_cache.entries == [(1, 0)]


def test_follower_catches_up_from_a_log_start_inside_a_batch(tmp_path):
    """The leader's log start lies inside a batch: the restarted follower restarts at the
    batch's base, appends it whole, then takes the leader's log start."""
    leader = _log(tmp_path / "l")
    _fill(leader, 4, epoch=0, per_batch=5)  # batches 0-4, 5-9, 10-14, 15-19
    leader.high_watermark = leader.log_end_offset
    leader.delete_records_before(7)
    follower = _log(tmp_path / "f")
    follower.truncate_fully_and_start_at(7)
    data = leader.read_bytes(7, 1 << 20)
    first = next(iter_batches(data))[1]
    base = restart_for_first_batch(
        follower.log_start_offset, follower.log_end_offset, first.base_offset, first.last_offset
    )
    assert base == 5
    follower.truncate_fully_and_start_at(base)
    follower.append_as_follower(data, now_ms=3000)
    follower.high_watermark = min(leader.high_watermark, follower.log_end_offset)
    new = follower_log_start(leader.log_start_offset, follower.log_start_offset, 20)
    assert new == 7
    follower.delete_records_before(new)
    assert follower.log_start_offset == 7 and follower.log_end_offset == 20
    assert follower.read_bytes(7, 1 << 20) == leader.read_bytes(7, 1 << 20)


# -- the fetcher applying them (a fake leader connection) ------------------------------------------


class FakeLogs:
    def __init__(self, plog: PartitionLog) -> None:
        self.plog = plog
        self.checkpoints = 0

    def get_log(self, topic: str, p: int) -> PartitionLog | None:
        return self.plog if (topic, p) == ("t", 0) else None

    def checkpoint_log_start_offsets(self) -> None:
        self.checkpoints += 1


class FakeLeader:
    """Answers ListOffsets as a leader whose log spans [start, end)."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.asked: list[int] = []

    async def request(self, req):
        parts = []
        for t in req.topics:
            for p in t.partitions:
                self.asked.append(p.timestamp)
                offset = self.end if p.timestamp == -1 else self.start
                parts.append(
                    SimpleNamespace(partition_index=p.partition_index, error_code=0, offset=offset)
                )
        return SimpleNamespace(topics=[SimpleNamespace(name="t", partitions=parts)])


def _fetcher(plog: PartitionLog):

    rp = PartitionReplica("t", 0, broker_id=2)
    rp.apply_state(1, 3, [1, 2], 0, 1, [1, 2], plog.log_end_offset, 0)
    logs = FakeLogs(plog)
    manager = SimpleNamespace(
        me=2,
        partitions={("t", 0): rp},
        broker=SimpleNamespace(logs=logs, appended=Purgatory()),
        now_ms=lambda: 5000,
    )
    f = LeaderFetcher(manager, 1)  # type: ignore[arg-type]
    f.partitions[("t", 0)] = OUT_OF_RANGE
    return f, logs


def test_fetcher_restarts_below_the_leaders_log_start(tmp_path):
    plog = _log(tmp_path / "f")
    _fill(plog, 40)
    f, logs = _fetcher(plog)
    leader = FakeLeader(start=225, end=240)
    trio.run(f._reset_out_of_range, leader, [("t", 0)])
    assert leader.asked == [-1, -2]  # latest, then earliest
    assert plog.log_start_offset == plog.log_end_offset == 225
    assert [s.base_offset for s in plog.segments] == [225]
    assert f.partitions[("t", 0)] == FETCHING and logs.checkpoints == 1


def test_fetcher_truncates_to_a_shorter_leader(tmp_path):
    plog = _log(tmp_path / "f")
    _fill(plog, 30)
    f, _logs = _fetcher(plog)
    leader = FakeLeader(start=0, end=20)
    trio.run(f._reset_out_of_range, leader, [("t", 0)])
    assert leader.asked == [-1]  # the earliest offset is not needed
    assert plog.log_end_offset == 20 and plog.log_start_offset == 0
    assert f.partitions[("t", 0)] == FETCHING


def test_fetcher_appends_from_a_log_start_inside_a_batch_and_follows_it(tmp_path):
    leader = _log(tmp_path / "l")
    _fill(leader, 4, per_batch=5)
    leader.high_watermark = leader.log_end_offset
    leader.delete_records_before(7)
    plog = _log(tmp_path / "f")
    plog.truncate_fully_and_start_at(7)
    f, logs = _fetcher(plog)
    f.partitions[("t", 0)] = FETCHING
    pd = SimpleNamespace(
        partition_index=0,
        error_code=0,
        high_watermark=20,
        log_start_offset=7,
        records=leader.read_bytes(7, 1 << 20),
    )
    assert f._handle_partition("t", pd)
    assert plog.log_end_offset == 20 and plog.high_watermark == 20
    assert plog.log_start_offset == 7 and logs.checkpoints == 1
    assert plog.read_bytes(7, 1 << 20) == leader.read_bytes(7, 1 << 20)
    # an out-of-range answer moves the partition to the out-of-range state, without backoff
    pd.error_code = 1
    assert f._handle_partition("t", pd)
    assert f.partitions[("t", 0)] == OUT_OF_RANGE
