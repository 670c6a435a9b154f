"""EndTxn under transactions version 2 (KIP-890 part 2), the part of Kafka's
TransactionCoordinator.endTransaction that applies to clients of EndTxn v5+, without I/O.

A version 2 client starts no transaction explicitly (its partitions are added by the partition
leaders and the group coordinator), so:

- every PrepareCommit/PrepareAbort bumps the producer epoch; the client continues with the bumped
  epoch that EndTxn v5 answers, and the markers carry it, so that a late write of the finished
  transaction (older epoch) is refused by the partition: the defence against hanging
  transactions;
- a retry is recognised by the epoch the coordinator bumped since the request's (or, after an
  exhausted epoch was replaced by a new producer id, by the previous id and epoch 32766); the
  same epoch on a completed transaction is the *next* transaction's EndTxn;
- an abort needs no started transaction: from Empty, CompleteCommit or CompleteAbort it writes
  PrepareAbort with no partitions (the client did not know whether a partition was added);
- when the epoch is exhausted a new producer id is reserved with the PrepareCommit/PrepareAbort
  and taken with epoch 0 by CompleteCommit/CompleteAbort.

The coordinator's own aborts (the transaction timeout, a fencing InitProducerId) of a version 2
transaction come here too (``from_client`` False, with the PrepareEpochFence pending): the abort's
own epoch bump fences the producer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkapy.protocol.errors import ErrorCode

from .metadata import MAX_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TV_2, TxnMetadata, TxnTransit
from .states import TxnState

log = logging.getLogger("kafkapy.coordinator.txn")

S = TxnState


def _invalid_state(md: TxnMetadata, commit: bool) -> ErrorCode:
    log.debug(
        "transactional.id=%s state=%s end=%s (transactions version 2): invalid",
        md.transactional_id,
        md.state.display_name,
        "commit" if commit else "abort",
    )
    return ErrorCode.invalid_txn_state


def _valid_epoch(md: TxnMetadata, producer_epoch: int, from_client: bool, fencing: bool,
                 retry_on_bump: bool, retry_on_overflow: bool) -> bool:
    if fencing:
        return not from_client or producer_epoch == md.producer_epoch
    if md.state in (S.ONGOING, S.EMPTY, S.DEAD, S.PREPARE_EPOCH_FENCE):
        return producer_epoch == md.producer_epoch
    if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return retry_on_bump
    # CompleteCommit, CompleteAbort: a retry, or the EndTxn of the next transaction
    return retry_on_bump or retry_on_overflow or producer_epoch == md.producer_epoch


def prepare_end_txn_v2(
    md: TxnMetadata,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    from_client: bool,
    now_ms: int,
    allocate_producer_id: Callable[[], int],
) -> TxnTransit | ErrorCode:
    """The PrepareCommit/PrepareAbort transit to write, ErrorCode.none for a retry of an EndTxn
    already done, or the error to answer."""
    fencing = md.pending_state == S.PREPARE_EPOCH_FENCE
    retry_on_overflow = (
        not fencing
        and md.last_producer_id == producer_id
        and producer_epoch == MAX_EPOCH - 1
        and md.producer_epoch == 0
    )
    retry_on_bump = not fencing and md.producer_epoch == producer_epoch + 1
    retry = retry_on_bump or retry_on_overflow
    # a transition in progress first (Kafka 4.4's order): while the markers of the previous
    # transaction are written (CompleteCommit/CompleteAbort pending), the client's next EndTxn
    # at the bumped epoch is told to retry, not fenced
    if md.pending_state is not None and not fencing:
        return ErrorCode.concurrent_transactions
    if md.producer_id != producer_id and not retry_on_overflow:
        return ErrorCode.invalid_producer_id_mapping
    if not _valid_epoch(md, producer_epoch, from_client, fencing, retry_on_bump,
                        retry_on_overflow):
        return ErrorCode.producer_fenced

    def prepare(target: TxnState) -> TxnTransit:
        next_pid = NO_PRODUCER_ID
        if not fencing and md.epoch_exhausted:
            next_pid = allocate_producer_id()
        if fencing:
            md.pending_state = None  # the abort's own epoch bump fences the producer
        return md.prepare_abort_or_commit(target, now_ms, TV_2, next_pid)

    state = md.state
    if state == S.ONGOING:
        if fencing and commit:
            return ErrorCode.concurrent_transactions
        return prepare(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT)
    if state == S.COMPLETE_COMMIT:
        if commit:
            return ErrorCode.none if retry else _invalid_state(md, commit)
        return _invalid_state(md, commit) if retry else prepare(S.PREPARE_ABORT)
    if state == S.COMPLETE_ABORT:
        if commit:
            return _invalid_state(md, commit)
        return ErrorCode.none if retry else prepare(S.PREPARE_ABORT)
    if state == S.PREPARE_COMMIT:
        return ErrorCode.concurrent_transactions if commit else _invalid_state(md, commit)
    if state == S.PREPARE_ABORT:
        return ErrorCode.concurrent_transactions if not commit else _invalid_state(md, commit)
    if state == S.EMPTY and not commit:
        return prepare(S.PREPARE_ABORT)
    return _invalid_state(md, commit)  # commit of Empty, or Dead


def continued_with(md: TxnMetadata | None) -> tuple[int, int]:
    """The producer id and epoch the client continues with after its EndTxn: the bumped epoch,
    or the next producer id with epoch 0 while an exhausted epoch is being replaced."""
    if md is None:
        return NO_PRODUCER_ID, NO_PRODUCER_EPOCH
    if md.next_producer_id != NO_PRODUCER_ID:
        return md.next_producer_id, 0
    return md.producer_id, md.producer_epoch
