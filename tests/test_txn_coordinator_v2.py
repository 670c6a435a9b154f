"""Transactions version 2 (KIP-890 part 2) in the sans-io transaction coordinator: an epoch bump
per transaction, retries told apart from the next transaction by the epoch, aborts without a
started transaction, the producer id rotated when the epoch is exhausted, and the coordinator's
own aborts (timeout, fencing InitProducerId) of version 2 transactions. The driver is
tests/test_txn_coordinator.py's."""

from __future__ import annotations

from kafkapy.coordinator.txn import Prepared
from kafkapy.coordinator.txn.metadata import MAX_EPOCH, TV_2
from kafkapy.coordinator.txn.records import decode_state
from kafkapy.coordinator.txn.states import TxnState
from kafkapy.protocol.errors import ErrorCode as E

from .test_txn_coordinator import T0, TID, Driver

S = TxnState


def add_v2(d: Driver, tps, epoch=None):
    md = d.md()
    got = d.c.prepare_add_partitions(
        TID, md.producer_id, md.producer_epoch if epoch is None else epoch, tps, T0, TV_2
    )
    return got if isinstance(got, E) else d.write(got)


def end_v2(d: Driver, commit: bool, epoch: int, pid=None, markers=True):
    """EndTxn v5: (error, the producer id and epoch answered)."""
    md = d.md()
    got = d.c.prepare_end_txn(
        TID,
        md.producer_id if pid is None else pid,
        epoch,
        commit=commit,
        from_client=True,
        now_ms=T0,
        client_transaction_version=TV_2,
    )
    if isinstance(got, E):
        return (got, *d.c.producer_after_end(TID)) if got == E.none else (got, -1, -1)
    err = d.write(got)
    assert err == E.none
    job = d.begin(got, commit, T0)
    assert not isinstance(job, E)
    answer = d.c.producer_after_end(TID)
    if markers:
        assert job.producer_epoch == answer[1] or answer[1] == 0  # markers carry the bump
        d.ack_all(job)
    return (E.none, *answer)


def test_every_commit_and_abort_bumps_the_epoch():
    d = Driver()
    assert d.init() == (1000, 0)
    assert add_v2(d, [("t", 0)]) == E.none
    assert d.md().client_transaction_version == TV_2
    assert end_v2(d, True, 0) == (E.none, 1000, 1)
    assert d.md().state == S.COMPLETE_COMMIT and d.md().producer_epoch == 1
    # the next transaction runs at epoch 1; the old epoch is fenced
    assert add_v2(d, [("t", 1)], epoch=0) == E.producer_fenced
    assert add_v2(d, [("t", 1)]) == E.none
    assert end_v2(d, False, 1) == (E.none, 1000, 2)
    assert d.md().state == S.COMPLETE_ABORT


def test_a_retry_is_answered_with_the_bumped_epoch_and_the_same_epoch_is_the_next_end():
    d = Driver()
    d.init()
    add_v2(d, [("t", 0)])
    assert end_v2(d, True, 0) == (E.none, 1000, 1)
    assert end_v2(d, True, 0) == (E.none, 1000, 1)  # a retry: already committed
    assert end_v2(d, False, 0)[0] == E.invalid_txn_state  # a retry the other way
    # epoch 1 on CompleteCommit is the next transaction: a commit with nothing added is invalid,
    # an abort is allowed (the client does not know whether a partition was added)
    assert end_v2(d, True, 1)[0] == E.invalid_txn_state
    assert end_v2(d, False, 1) == (E.none, 1000, 2)
    assert end_v2(d, True, 5)[0] == E.producer_fenced


def test_a_retry_while_the_markers_are_written_is_concurrent():
    d = Driver()
    d.init()
    add_v2(d, [("t", 0)])
    assert end_v2(d, True, 0, markers=False) == (E.none, 1000, 1)
    assert d.md().state == S.PREPARE_COMMIT
    assert end_v2(d, True, 0)[0] == E.concurrent_transactions
    # the next transaction's EndTxn (the bumped epoch) while the markers are written: retry
    # (CompleteCommit is pending; Kafka 4.4 checks that before the epoch)
    assert end_v2(d, False, 1)[0] == E.concurrent_transactions
    assert end_v2(d, True, 7)[0] == E.concurrent_transactions


def test_abort_of_an_empty_id_writes_prepare_abort_with_no_partitions():
    d = Driver()
    d.init()
    assert end_v2(d, False, 0) == (E.none, 1000, 1)
    assert d.md().state == S.COMPLETE_ABORT and not d.md().partitions
    assert end_v2(d, True, 1)[0] == E.invalid_txn_state


def test_version_1_clients_keep_their_protocol():
    d = Driver()
    d.init()
    assert d.add([("t", 0)]) == E.none
    d.end(True)
    md = d.md()
    assert (md.state, md.producer_epoch, md.client_transaction_version) == (S.COMPLETE_COMMIT, 0, 0)
    assert d.end(False) == E.invalid_txn_state  # no abort without a transaction in version 1
    assert d.end(True) == E.none  # a retried commit


def test_an_exhausted_epoch_moves_to_a_new_producer_id_at_epoch_0():
    d = Driver()
    d.init()
    d.md().producer_epoch = MAX_EPOCH - 1  # the last epoch a client may use
    add_v2(d, [("t", 0)])
    assert end_v2(d, True, MAX_EPOCH - 1) == (E.none, 1001, 0)
    prepare_commit = decode_state(TID, d.log[-2][1])
    complete_commit = decode_state(TID, d.log[-1][1])
    assert prepare_commit is not None and complete_commit is not None
    # the markers close the old id's transaction at epoch 32767; the new id follows at 0
    assert (prepare_commit.producer_id, prepare_commit.producer_epoch) == (1000, MAX_EPOCH)
    assert prepare_commit.next_producer_id == 1001
    assert (complete_commit.producer_id, complete_commit.producer_epoch) == (1001, 0)
    assert complete_commit.last_producer_id == 1000
    md = d.md()
    assert (md.producer_id, md.producer_epoch, md.last_producer_id) == (1001, 0, 1000)
    assert md.next_producer_id == -1
    # a retry with the old id and its last epoch is answered with the new ones
    assert end_v2(d, True, MAX_EPOCH - 1, pid=1000) == (E.none, 1001, 0)
    add_v2(d, [("t", 0)])
    assert end_v2(d, True, 0) == (E.none, 1001, 1)


def test_the_timeout_abort_of_a_version_2_transaction_bumps_once():
    d = Driver()
    d.init()
    add_v2(d, [("t", 0)])
    aborts = d.c.timed_out(T0 + 3_600_000)
    assert len(aborts) == 1
    prepared: Prepared = aborts[0]
    assert prepared.fenced and prepared.transit.producer_epoch == 1
    assert prepared.transit.state == S.PREPARE_ABORT
    assert d.write(prepared) == E.none
    d.finish(prepared, commit=False, now=T0)
    assert d.md().state == S.COMPLETE_ABORT and d.md().producer_epoch == 1
    # the producer's commit at its old epoch looks like a retry of an EndTxn that ended the
    # other way (Kafka's retryOnEpochBump): refused, never committed
    assert end_v2(d, True, 0)[0] == E.invalid_txn_state
    assert d.md().state == S.COMPLETE_ABORT
