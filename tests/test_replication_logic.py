"""Sans-io replication logic: replica placement, leader elections, ISR / high watermark, and the
follower append path of the partition log."""

from __future__ import annotations

import random
import uuid

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.replication import election
from kafkapy.replication.assignment import AssignmentError, assign_replicas
from kafkapy.replication.partition import PartitionReplica
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog


def test_assignment_spreads_leaders_and_replicas():
    a = assign_replicas({0: None, 1: None, 2: None}, 6, 3, rng=random.Random(1))
    assert sorted(a) == list(range(6))
    for reps in a.values():
        assert sorted(reps) == [0, 1, 2]
    leaders = [r[0] for r in a.values()]
    assert sorted(leaders) == [0, 0, 1, 1, 2, 2]


def test_assignment_rack_aware_puts_replicas_on_distinct_racks():
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    a = assign_replicas(racks, 12, 3, rng=random.Random(7))
    for reps in a.values():
        assert len({racks[b] for b in reps}) == 3


def test_assignment_refuses_rf_above_brokers():
    try:
        assign_replicas({0: None, 1: None}, 1, 3)
    except AssignmentError as e:
        assert "larger than available brokers" in str(e)
    else:
        raise AssertionError("accepted")


def test_offline_leader_is_replaced_from_isr():
    d = election.on_brokers_change([1, 2, 3], 1, 4, [1, 2, 3], {2, 3})
    assert d is not None and d.leader == 2 and d.leader_epoch == 5 and d.isr == [2, 3]
    # follower died: only the ISR shrinks
    d = election.on_brokers_change([1, 2, 3], 1, 4, [1, 2, 3], {1, 2})
    assert d is not None and d.leader == 1 and d.leader_epoch == 4 and d.isr == [1, 2]
    # nobody in sync is alive: offline, unless unclean election is allowed
    d = election.on_brokers_change([1, 2, 3], 1, 4, [1], {2, 3})
    assert d is not None and d.leader == -1 and d.isr == [1]
    d = election.on_brokers_change([1, 2, 3], 1, 4, [1], {2, 3}, unclean=True)
    assert d is not None and d.leader == 2 and d.unclean and d.isr == [2]
    assert election.on_brokers_change([1, 2], 1, 0, [1, 2], {1, 2}) is None


def test_preferred_and_controlled_shutdown():
    d, why = election.preferred([1, 2, 3], 2, 3, [1, 2, 3], {1, 2, 3})
    assert d is not None and d.leader == 1 and d.leader_epoch == 4 and why == ""
    assert election.preferred([1, 2, 3], 1, 3, [1, 2, 3], {1, 2, 3}) == (None, "not_needed")
    assert election.preferred([1, 2, 3], 2, 3, [2, 3], {1, 2, 3}) == (None, "not_available")
    d = election.to_move_away([1, 2, 3], 1, 0, [1, 2, 3], {2, 3}, leaving=1)
    assert d is not None and d.leader == 2 and d.isr == [2, 3]


def test_isr_and_high_watermark():
    rp = PartitionReplica("t", 0, broker_id=1)
    assert rp.apply_state(1, 0, [1, 2, 3], 0, 1, [1, 2, 3], 10, now_ms=1000) == "leader"
    assert rp.high_watermark(10, 5) == 5  # followers not heard from yet
    rp.on_follower_fetch(2, 10, 10, 1100)
    rp.on_follower_fetch(3, 8, 10, 1100)
    assert rp.high_watermark(10, 5) == 8
    # 3 stops fetching: out of the ISR after the lag time
    assert rp.isr_to_shrink(1100 + 2000, 3000, 12) is None
    assert rp.isr_to_shrink(1000 + 3001, 3000, 12) == [1, 2]
    rp.isr_written([1, 2], 1)
    assert rp.high_watermark(10, 8) == 10
    # it catches up: back in
    rp.on_follower_fetch(3, 10, 10, 5000)
    assert rp.isr_to_expand(10, {1, 2, 3}) == [1, 2, 3]
    assert rp.isr_to_expand(10, {1, 2}) is None  # not registered (controlled shutdown)
    rp.apply_state(1, 0, [1], 0, 1, [1, 2, 3], 10, 6000)  # an older zk version: ignored
    assert rp.isr == [1, 2]
    assert rp.apply_state(2, 1, [2, 3], 3, 1, [1, 2, 3], 10, 6000) == "follower"
    assert rp.apply_state(1, 0, [1, 2, 3], 4, 1, [1, 2, 3], 10, 6000) == "stale"


def test_follower_append_keeps_offsets_and_epochs(tmp_path):
    cfg = LogConfig()
    tid = uuid.uuid4()
    leader = PartitionLog.open(tmp_path / "l", "t", 0, tid, cfg, recover=False)
    follower = PartitionLog.open(tmp_path / "f", "t", 0, tid, cfg, recover=False)
    follower.auto_high_watermark = False
    for epoch, n in ((0, 3), (2, 2)):
        for i in range(n):
            leader.append_as_leader(
                encode_batch([Record(0, 1000 + i, b"k", b"v%d" % i)]),
                leader_epoch=epoch,
                now_ms=2000,
            )
    data = leader.read_bytes(0, 1 << 20)
    assert follower.append_as_follower(data[:0] or data, now_ms=3000) > 0
    assert follower.log_end_offset == leader.log_end_offset == 5
    assert follower.high_watermark == 0
    assert follower.epoch_cache.entries == leader.epoch_cache.entries == [(0, 0), (2, 3)]
    assert follower.read_bytes(0, 1 << 20) == data
    # appending the same data again is a no-op; divergent tail truncation
    assert follower.append_as_follower(data, now_ms=3000) == 0
    assert follower.end_offset_for_epoch(1) == (0, 3)
    follower.truncate_to(3)
    assert follower.log_end_offset == 3 and follower.epoch_cache.entries == [(0, 0)]
