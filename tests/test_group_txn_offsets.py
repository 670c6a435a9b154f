"""Offsets committed in transactions (TxnOffsetCommit), in the sans-io group coordinator: pending
until the marker, KIP-447 fencing, later plain commits and tombstones, and loading."""

from __future__ import annotations

from kafkapy.coordinator.group import GroupCoordinator
from kafkapy.coordinator.group.coordinator import CommitOffset, CoordinatorConfig
from kafkapy.protocol.errors import ErrorCode as E

from .group_helpers import Clock, stable_group

PID, EPOCH = 4000, 0
TP = ("t", 0)


class TxnLog:
    """An in-memory __consumer_offsets that keeps what the real log keeps: records, their
    producer when transactional, and markers."""

    def __init__(self) -> None:
        self.entries: dict[int, list[tuple]] = {}

    def append(self, partition, records, now_ms, *, txn=None):
        out = self.entries.setdefault(partition, [])
        for k, v in records:
            out.append((k, v) if txn is None else (k, v, txn.producer_id, None))

    def marker(self, partition, producer_id, committed):
        self.entries.setdefault(partition, []).append((None, None, producer_id, committed))


def make():
    log = TxnLog()
    c = GroupCoordinator(CoordinatorConfig(num_partitions=5, initial_rebalance_delay_ms=0), log)
    c.add_empty_partitions(range(5), 0)
    return c, log, Clock(c)


def txn_commit(c, offset, *, group="g", pid=PID, generation=-1, member="", instance=None, now=0):
    return c.commit_txn_offsets(
        group, pid, EPOCH, generation, member, instance, {TP: CommitOffset(offset)}, now
    )


def committed(c, group="g"):
    om = c.fetch_offsets(group, [("t", [0])])[1][0][2]
    return None if om is None else om.offset


def end(c, log, committed_, group="g", pid=PID):
    p = c.partition_for(group)
    log.marker(p, pid, committed_)
    return c.complete_txn_offsets(p, pid, committed_)


def test_pending_until_commit_marker():
    c, log, _ = make()
    assert txn_commit(c, 10) == {TP: E.none}
    assert committed(c) is None and c.unstable_offsets("g") == {TP}
    assert end(c, log, True) == 1
    assert committed(c) == 10 and c.unstable_offsets("g") == set()


def test_abort_drops_and_other_partitions_are_untouched():
    c, log, _ = make()
    c.commit_offsets("g", -1, "", None, {TP: CommitOffset(3)}, 0)
    txn_commit(c, 10)
    assert end(c, log, False) == 0
    assert committed(c) == 3 and c.unstable_offsets("g") == set()
    # a marker for another producer or partition changes nothing
    txn_commit(c, 11)
    assert c.complete_txn_offsets(c.partition_for("g"), PID + 1, True) == 0
    assert c.complete_txn_offsets((c.partition_for("g") + 1) % 5, PID, True) == 0
    assert c.unstable_offsets("g") == {TP}


def test_kip447_generation_fencing():
    c, log, clock = make()
    (member,), generation = stable_group(c, clock)
    assert txn_commit(c, 5, generation=generation, member=member) == {TP: E.none}
    assert txn_commit(c, 6, generation=generation + 1, member=member) == {TP: E.illegal_generation}
    assert txn_commit(c, 6, generation=generation, member="zombie") == {TP: E.unknown_member_id}
    # no member named: allowed in a non-empty group (producers before KIP-447)
    assert txn_commit(c, 7) == {TP: E.none}


def test_later_plain_commit_wins_over_the_transaction():
    c, log, _ = make()
    txn_commit(c, 10)
    c.commit_offsets("g", -1, "", None, {TP: CommitOffset(20)}, 0)
    end(c, log, True)
    assert committed(c) == 20


def test_tombstone_removes_pending_offsets():
    c, log, _ = make()
    c.commit_offsets("g", -1, "", None, {TP: CommitOffset(1)}, 0)
    txn_commit(c, 10)
    err, _ = c.delete_offsets("g", [TP], 0)
    assert err == E.none and c.unstable_offsets("g") == set()
    end(c, log, True)
    assert committed(c) is None


def test_loading_replays_transactions_in_log_order():
    c, log, _ = make()
    p = c.partition_for("g")
    txn_commit(c, 10, pid=1)
    end(c, log, True, pid=1)  # committed: 10
    txn_commit(c, 11, pid=2)
    end(c, log, False, pid=2)  # aborted
    txn_commit(c, 12, pid=3)
    c.commit_offsets("g", -1, "", None, {TP: CommitOffset(13)}, 0)  # supersedes pid 3
    end(c, log, True, pid=3)
    txn_commit(c, 14, pid=4)  # still pending at the end of the log
    assert committed(c) == 13
    c2 = GroupCoordinator(CoordinatorConfig(num_partitions=5), log)
    c2.begin_loading([p])
    c2.load_partition(p, log.entries[p], 0)
    assert committed(c2) == 13 and c2.unstable_offsets("g") == {TP}
    assert c2.complete_txn_offsets(p, 4, True) == 1
    assert committed(c2) == 14


def test_pending_offsets_keep_their_group_and_offset():
    c, log, clock = make()
    txn_commit(c, 10)  # creates the group
    assert "g" in c.groups
    clock.advance(10 * 24 * 3600 * 1000)  # past retention: nothing pending expires
    assert "g" in c.groups and c.unstable_offsets("g") == {TP}
    end(c, log, True)
    assert committed(c) == 10
