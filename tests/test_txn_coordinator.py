"""The transaction coordinator's state machine, without I/O: a tiny driver plays the server
(writes succeed at once unless told otherwise, markers are acknowledged by hand)."""

from __future__ import annotations

import itertools

import pytest

from kafkapy.coordinator.txn import MarkerJob, Outcome, Prepared, TxnConfig, TxnCoordinator
from kafkapy.coordinator.txn.records import encode_key, encode_state
from kafkapy.coordinator.txn.states import VALID_PREVIOUS, IllegalTransition, TxnState
from kafkapy.protocol.errors import ErrorCode as E

S = TxnState
TID = "tx"
T0 = 1_000_000


class Driver:
    def __init__(self, **cfg) -> None:
        self.pids = itertools.count(1000)
        self.c = TxnCoordinator(TxnConfig(num_partitions=4, **cfg), lambda: next(self.pids))
        self.log: list[tuple[bytes, bytes | None]] = []
        for p in range(4):
            self.c.cache.begin_loading(p, 5)
            self.c.cache.complete_loading(p, 5, [])

    def md(self, tid=TID):
        return self.c.cache.get(tid).metadata

    def write(self, prepared, error=E.none):
        assert self.c.check_write(prepared) == E.none
        if error == E.none:
            self.log.append((encode_key(prepared.transactional_id), encode_state(prepared.transit)))
        return self.c.complete_write(prepared, error)

    def init(self, tid=TID, timeout=60_000, expected=None, now=T0):
        got = self.c.prepare_init_producer_id(tid, timeout, expected, now)
        if isinstance(got, E):
            return got
        if got.fenced:  # the ongoing transaction is aborted, the client retries
            err = self.write(got)
            if err == E.none:
                self.finish(got, commit=False, now=now)
            return err or E.concurrent_transactions
        err = self.write(got)
        return err if err else (got.transit.producer_id, got.transit.producer_epoch)

    def add(self, tps, tid=TID, pid=None, epoch=None, now=T0):
        md = self.md(tid)
        got = self.c.prepare_add_partitions(
            tid,
            md.producer_id if pid is None else pid,
            md.producer_epoch if epoch is None else epoch,
            tps,
            now,
        )
        return got if isinstance(got, E) else self.write(got)

    def end(self, commit, tid=TID, epoch=None, now=T0, markers=True):
        md = self.md(tid)
        epoch = md.producer_epoch if epoch is None else epoch
        got = self.c.prepare_end_txn(
            tid, md.producer_id, epoch, commit=commit, from_client=True, now_ms=now
        )
        if isinstance(got, E):
            return got
        err = self.write(got)
        if err:
            return err
        job = self.begin(got, commit, now)
        if isinstance(job, E):
            return job
        if markers:
            self.ack_all(job)
        return job

    def begin(self, prepared, commit, now):
        t = prepared.transit
        got = self.c.begin_markers(
            prepared.transactional_id,
            t.producer_id,
            t.producer_epoch,
            commit,
            prepared.coordinator_epoch,
            now,
        )
        if isinstance(got, E):
            return got
        entry, complete = got
        return MarkerJob.start(
            entry, commit, Prepared(prepared.transactional_id, entry.coordinator_epoch, complete)
        )

    def ack_all(self, job):
        for tp in sorted(job.remaining):
            assert job.on_marker_result(self.c, tp, E.none) == Outcome.WRITTEN
        assert job.finished
        assert self.write(job.complete) == E.none

    def finish(self, prepared, commit, now):
        job = self.begin(prepared, commit, now)
        self.ack_all(job)


def test_transition_table_is_kafkas():
    # Kafka 4.x: a transactions version 2 abort may follow Empty and the completed states
    assert VALID_PREVIOUS[S.PREPARE_ABORT] == {
        S.ONGOING,
        S.PREPARE_EPOCH_FENCE,
        S.EMPTY,
        S.COMPLETE_COMMIT,
        S.COMPLETE_ABORT,
    }
    assert VALID_PREVIOUS[S.COMPLETE_COMMIT] == {S.PREPARE_COMMIT}
    d = Driver()
    assert d.init() == (1000, 0)
    md = d.md()
    for target in (S.PREPARE_COMMIT, S.COMPLETE_ABORT, S.PREPARE_EPOCH_FENCE):
        with pytest.raises(IllegalTransition):
            md.prepare_abort_or_commit(target, T0)  # none may follow Empty
        md.pending_state = None


def test_init_allocates_then_bumps_the_epoch():
    d = Driver()
    assert d.init() == (1000, 0)
    assert d.init() == (1000, 1)
    assert d.md().state == S.EMPTY and d.md().last_producer_epoch == -1
    assert d.init("other") == (1001, 0)


def test_init_validation():
    d = Driver(max_timeout_ms=900_000)
    assert d.c.prepare_init_producer_id(TID, 900_001, None, T0) == E.invalid_transaction_timeout
    assert d.c.prepare_init_producer_id(TID, 0, None, T0) == E.invalid_transaction_timeout
    assert d.c.prepare_init_producer_id("", 1000, None, T0) == E.invalid_request
    d.c.cache.begin_loading(d.c.partition_for(TID), 6)
    assert d.c.prepare_init_producer_id(TID, 1000, None, T0) == E.coordinator_load_in_progress
    d.c.cache.unload(d.c.partition_for(TID))
    assert d.c.prepare_init_producer_id(TID, 1000, None, T0) == E.not_coordinator


def test_commit_flow_and_retries():
    d = Driver()
    d.init()
    assert d.add([("t", 0), ("t", 1)], now=T0 + 5) == E.none
    md = d.md()
    assert md.state == S.ONGOING and md.start_ms == T0 + 5
    assert d.add([("t", 1)]) == E.none and len(d.log) == 2  # already in: nothing written
    assert d.add([("u", 0)], now=T0 + 9) == E.none and md.start_ms == T0 + 5
    job = d.end(True, markers=False)
    assert md.state == S.PREPARE_COMMIT and md.pending_state == S.COMPLETE_COMMIT
    assert job.remaining == {("t", 0), ("t", 1), ("u", 0)}
    # while markers are being written, the id is busy
    assert d.c.prepare_init_producer_id(TID, 1000, None, T0) == E.concurrent_transactions
    assert d.add([("t", 0)]) == E.concurrent_transactions
    d.ack_all(job)
    assert md.state == S.COMPLETE_COMMIT and not md.partitions
    assert d.end(True) == E.none  # a retried commit
    assert d.end(False) == E.invalid_txn_state
    assert d.add([("t", 0)], now=T0 + 50) == E.none and md.start_ms == T0 + 50


def test_end_errors():
    d = Driver()
    d.init()
    assert d.end(True) == E.invalid_txn_state  # Empty
    d.add([("t", 0)])
    assert d.end(True, epoch=7) == E.producer_fenced
    md = d.md()
    assert d.c.prepare_end_txn(TID, 999, 0, commit=True, from_client=True, now_ms=T0) == (
        E.invalid_producer_id_mapping
    )
    assert d.c.prepare_end_txn("nope", 1000, 0, commit=True, from_client=True, now_ms=T0) == (
        E.invalid_producer_id_mapping
    )
    assert md.state == S.ONGOING


def test_add_partitions_errors():
    d = Driver()
    assert d.c.prepare_add_partitions(TID, 1, 0, [("t", 0)], T0) == E.invalid_producer_id_mapping
    d.init()
    assert d.add([("t", 0)], pid=5) == E.invalid_producer_id_mapping
    assert d.add([("t", 0)], epoch=3) == E.producer_fenced


def test_zombie_is_fenced_by_a_new_instance():
    d = Driver()
    assert d.init() == (1000, 0)
    d.add([("t", 0)])
    # a second instance with the same transactional id: the ongoing transaction is aborted
    assert d.init() == E.concurrent_transactions
    md = d.md()
    assert md.state == S.COMPLETE_ABORT and md.producer_epoch == 1
    assert d.init() == (1000, 2)
    # the zombie (epoch 0) is fenced everywhere
    assert d.add([("t", 1)], epoch=0) == E.producer_fenced
    assert d.end(True, epoch=0) == E.producer_fenced
    # the markers went out with the fencing epoch
    entries = [e for e in d.log if e[1] is not None]
    assert len(entries) >= 5


def test_failed_fence_write_does_not_bump_twice():
    d = Driver()
    d.init()
    d.add([("t", 0)])
    got = d.c.prepare_init_producer_id(TID, 60_000, None, T0)
    assert got.fenced and got.transit.producer_epoch == 1
    assert d.write(got, E.not_enough_replicas) == E.coordinator_not_available
    d.c.end_txn_write_failed(got)
    md = d.md()
    assert md.pending_state is None and md.state == S.ONGOING and md.has_failed_epoch_fence
    again = d.c.prepare_init_producer_id(TID, 60_000, None, T0)
    assert again.transit.producer_epoch == 1  # the epoch never handed out is reused


def test_recovering_producer_kip360():
    d = Driver()
    d.init()
    d.init()  # epoch 1
    assert d.init(expected=(1000, 1)) == (1000, 2)
    assert d.md().last_producer_epoch == 1
    assert d.init(expected=(1000, 1)) == (1000, 2)  # retry of an answered bump
    assert d.init(expected=(1000, 0)) == E.producer_fenced
    assert d.init(expected=(77, 2)) == E.producer_fenced


def test_exhausted_epoch_rotates_the_producer_id():
    d = Driver()
    d.init()
    d.md().producer_epoch = 32766
    assert d.init() == (1001, 0)


def test_write_failure_drops_the_transition():
    d = Driver()
    d.init()
    md = d.md()
    got = d.c.prepare_add_partitions(TID, md.producer_id, 0, [("t", 0)], T0)
    assert d.write(got, E.not_leader_or_follower) == E.not_coordinator
    assert md.state == S.EMPTY and md.pending_state is None and not md.partitions


def test_coordinator_epoch_change_during_the_write():
    d = Driver()
    d.init()
    md = d.md()
    got = d.c.prepare_add_partitions(TID, md.producer_id, 0, [("t", 0)], T0)
    p = d.c.partition_for(TID)
    d.c.cache.begin_loading(p, 6)
    d.c.cache.complete_loading(p, 6, d.log)
    assert d.c.check_write(got) == E.not_coordinator
    assert d.c.complete_write(got, E.none) == E.not_coordinator


def test_timeout_aborts_with_a_bumped_epoch():
    d = Driver()
    d.init(timeout=1000)
    d.add([("t", 0)], now=T0)
    assert d.c.timed_out(T0 + 1000) == []
    (got,) = d.c.timed_out(T0 + 1001)
    assert got.fenced and got.transit.state == S.PREPARE_ABORT and got.transit.producer_epoch == 1
    assert d.write(got) == E.none
    d.finish(got, commit=False, now=T0 + 1001)
    assert d.md().state == S.COMPLETE_ABORT
    assert d.end(True, epoch=0) == E.producer_fenced


def test_idle_ids_expire():
    d = Driver(id_expiration_ms=10_000)
    d.init(now=T0)
    d.init("busy", now=T0)
    d.add([("t", 0)], tid="busy", now=T0)
    assert d.c.expire_ids(T0 + 9_999) == {}
    expired = d.c.expire_ids(T0 + 10_000)
    [(p, [prep])] = expired.items()
    assert prep.transactional_id == TID and d.md().pending_state == S.DEAD
    d.c.complete_expiration(prep, E.none)
    assert d.c.cache.get(TID) is None and d.c.cache.get("busy") is not None
    assert d.c.describe(TID) == E.transactional_id_not_found


def test_load_finds_transactions_to_complete():
    d = Driver()
    d.init()
    d.add([("t", 0), ("u", 3)])
    d.end(True, markers=False)  # PrepareCommit written, no markers yet: then the broker dies
    p = d.c.partition_for(TID)
    fresh = TxnCoordinator(TxnConfig(num_partitions=4), lambda: 1)
    fresh.cache.begin_loading(p, 6)
    owned = fresh.cache.complete_loading(p, 6, d.log)
    md = owned.txns[TID]
    assert md.state == S.PREPARE_COMMIT and md.partitions == {("t", 0), ("u", 3)}
    assert fresh.cache.complete_loading(p, 6, d.log) is None  # stale: no longer loading


def test_marker_outcomes():
    d = Driver()
    d.init()
    d.add([("t", 0), ("t", 1), ("t", 2)])
    job = d.end(False, markers=False)
    assert job.on_marker_result(d.c, ("t", 0), E.not_leader_or_follower) == Outcome.RETRY
    assert job.on_marker_result(d.c, ("t", 0), E.unsupported_for_message_format) == Outcome.WRITTEN
    job.partition_gone(d.c, ("t", 1))
    assert job.remaining == {("t", 2)} and not job.finished
    assert job.on_marker_result(d.c, ("t", 2), E.transaction_coordinator_fenced) == Outcome.CANCEL
    assert job.cancelled and not job.finished


def test_markers_cancelled_when_leadership_moves():
    d = Driver()
    d.init()
    d.add([("t", 0)])
    job = d.end(True, markers=False)
    d.c.cache.unload(d.c.partition_for(TID))
    assert job.on_marker_result(d.c, ("t", 0), E.none) == Outcome.CANCEL


def test_verify_partitions():
    d = Driver()
    d.init()
    d.add([("t", 0)])
    md = d.md()
    assert d.c.verify_partitions(TID, md.producer_id, 0, [("t", 0), ("t", 1)]) == {
        ("t", 0): E.none,
        ("t", 1): E.transaction_abortable,
    }
    assert d.c.verify_partitions(TID, md.producer_id, 9, [("t", 0)]) == {
        ("t", 0): E.producer_fenced
    }
    assert d.c.verify_partitions("x", 1, 0, [("t", 0)]) == {("t", 0): E.invalid_producer_id_mapping}
    d.end(True, markers=False)
    assert d.c.verify_partitions(TID, md.producer_id, 0, [("t", 0)]) == {
        ("t", 0): E.concurrent_transactions
    }


def test_describe_and_list():
    d = Driver()
    d.init(now=T0)
    d.init("b", now=T0)
    d.add([("t", 0)], tid="b", now=T0 + 10)
    got = d.c.describe("b")
    assert got.state == S.ONGOING and got.partitions == {("t", 0)} and got.start_ms == T0 + 10
    err, txns, unknown = d.c.list_transactions(set(), {"Ongoing", "Bogus"}, -1, T0)
    assert err == E.none and [t.transactional_id for t in txns] == ["b"] and unknown == ["Bogus"]
    err, txns, _ = d.c.list_transactions({1000}, set(), -1, T0)
    assert [t.transactional_id for t in txns] == [TID]
    err, txns, _ = d.c.list_transactions(set(), {"Ongoing"}, 100, T0 + 50)
    assert txns == []  # younger than the duration filter
    d.c.cache.begin_loading(3, 9)
    assert d.c.list_transactions(set(), set(), -1, T0)[0] == E.coordinator_load_in_progress
