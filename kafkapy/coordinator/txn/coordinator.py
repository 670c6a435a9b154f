"""The transaction coordinator's decisions (Kafka's TransactionCoordinator), without I/O.

Each operation validates a request against the cached metadata and either answers at once with
an error code (``ErrorCode.none`` when nothing needs writing) or returns a ``Prepared`` transit
that the server writes to __transaction_state (acks=all) and then hands back to
``complete_write``, which takes it only if this broker still coordinates the id under the same
coordinator epoch. The server composes the steps (kafkapy.server.coordinator.txn_service):

- InitProducerId: ``prepare_init_producer_id``; write; answer the transit's producer id and
  epoch. An id with a transaction Ongoing is fenced instead: the epoch is bumped and the
  transaction aborted (``Prepared.fenced`` carries the abort), and the client is told
  CONCURRENT_TRANSACTIONS so that it retries and bumps again.
- AddPartitionsToTxn / AddOffsetsToTxn: ``prepare_add_partitions``; write.
- EndTxn: ``prepare_end_txn``; write PrepareCommit/PrepareAbort; ``begin_markers`` (answer the
  client) then markers (coordinator.txn.markers) and the CompleteCommit/CompleteAbort write.
  Version 2 clients (EndTxn v5+, KIP-890 part 2) are decided by coordinator.txn.end_txn_v2: an
  epoch bump per transaction, answered with ``producer_after_end``.
- timers: ``timed_out`` transactions are fenced and aborted like an InitProducerId would;
  ``expire_ids`` finds idle ids whose tombstones the server writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from kafkapy.coordinator.group.state import append_error_to_response_error
from kafkapy.protocol.errors import ErrorCode

from .cache import Entry, TxnCache
from .end_txn_v2 import continued_with, prepare_end_txn_v2
from .metadata import (
    NO_PRODUCER_EPOCH,
    TV_0,
    TV_2,
    TopicPartition,
    TxnMetadata,
    TxnTransit,
    epoch_exhausted,
)
from .states import EXPIRATION_ALLOWED, IllegalTransition, TxnState

log = logging.getLogger("kafkapy.coordinator.txn")

S = TxnState


@dataclass(slots=True)
class TxnConfig:
    num_partitions: int = 50
    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms
    id_expiration_ms: int = 604_800_000  # transactional.id.expiration.ms
    abort_interval_ms: int = 10_000  # transaction.abort.timed.out.transaction.cleanup.interval.ms
    remove_expired_interval_ms: int = 3_600_000  # ...remove.expired.transaction.cleanup...


@dataclass(frozen=True, slots=True)
class Prepared:
    """A transition to write to the id's __transaction_state partition."""

    transactional_id: str
    coordinator_epoch: int
    transit: TxnTransit
    fenced: bool = False  # the write is the abort of a fenced (epoch-bumped) transaction


@dataclass(frozen=True, slots=True)
class ListedTxn:
    transactional_id: str
    producer_id: int
    state: TxnState


@dataclass(frozen=True, slots=True)
class DescribedTxn:
    producer_id: int
    producer_epoch: int
    state: TxnState | None
    timeout_ms: int
    start_ms: int  # -1: no transaction started
    partitions: frozenset[TopicPartition]
    error: ErrorCode = ErrorCode.none


def append_error_to_response(error: ErrorCode) -> ErrorCode:
    """What the client is told for a failed __transaction_state append: Kafka's mapping, the
    same as for __consumer_offsets (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT ->
    COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR; ...)."""
    return ErrorCode(append_error_to_response_error(int(error)))


class TxnCoordinator:
    def __init__(self, config: TxnConfig, allocate_producer_id: Callable[[], int]) -> None:
        self.config = config
        self.cache = TxnCache(config.num_partitions)
        self._allocate = allocate_producer_id

    def partition_for(self, transactional_id: str) -> int:
        return self.cache.partition_for(transactional_id)

    # -- InitProducerId -------------------------------------------------------------------------
    def prepare_init_producer_id(
        self,
        transactional_id: str,
        timeout_ms: int,
        expected: tuple[int, int] | None,
        now_ms: int,
    ) -> Prepared | ErrorCode:
        """``expected`` is the (producer id, epoch) a recovering producer passes (KIP-360)."""
        if transactional_id == "":
            return ErrorCode.invalid_request
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return ErrorCode.invalid_transaction_timeout
        got = self.cache.get(transactional_id)
        if isinstance(got, ErrorCode):
            return got
        if got is None:
            pid = self._allocate()
            fresh = TxnMetadata(transactional_id, pid, timeout_ms=timeout_ms, last_update_ms=now_ms)
            got = self.cache.put_if_absent(fresh)
            if isinstance(got, ErrorCode):
                return got
        md = got.metadata
        if md.pending_state is not None:
            return ErrorCode.concurrent_transactions
        if expected is not None and not (
            md.producer_epoch == NO_PRODUCER_EPOCH
            or expected[0] == md.producer_id
            or (expected[0] == md.last_producer_id and epoch_exhausted(expected[1]))
        ):
            return ErrorCode.producer_fenced
        state = md.state
        if state in (S.PREPARE_ABORT, S.PREPARE_COMMIT):
            return ErrorCode.concurrent_transactions
        if state in (S.COMPLETE_ABORT, S.COMPLETE_COMMIT, S.EMPTY):
            if md.epoch_exhausted and (expected is None or expected[1] == md.producer_epoch):
                transit = md.prepare_producer_id_rotation(
                    self._allocate(), timeout_ms, now_ms, expected is not None
                )
            else:
                got_transit = md.prepare_increment_epoch(
                    timeout_ms, None if expected is None else expected[1], now_ms
                )
                if isinstance(got_transit, ErrorCode):
                    return got_transit
                transit = got_transit
            return Prepared(transactional_id, got.coordinator_epoch, transit)
        if state == S.ONGOING:
            # fence the current producer: bump the epoch and abort its transaction; the client
            # gets CONCURRENT_TRANSACTIONS and retries, which bumps the epoch once more
            return self._fence_and_abort(got, now_ms)
        raise IllegalTransition(f"{transactional_id} found in state {state.display_name}")

    def _fence_and_abort(self, entry: Entry, now_ms: int) -> Prepared | ErrorCode:
        """Bump the epoch of an Ongoing transaction's producer and prepare its abort (the
        PrepareEpochFence pending state lasts only within this call)."""
        fence = entry.metadata.prepare_fence_epoch()
        got = self.prepare_end_txn(
            entry.metadata.transactional_id,
            fence.producer_id,
            fence.producer_epoch,
            commit=False,
            from_client=False,
            now_ms=now_ms,
            client_transaction_version=entry.metadata.client_transaction_version,
        )
        if isinstance(got, ErrorCode):
            entry.metadata.abandon_transition()
        return got

    # -- AddPartitionsToTxn, AddOffsetsToTxn ------------------------------------------------------
    def _producer_entry(
        self, transactional_id: str, producer_id: int, producer_epoch: int
    ) -> Entry | ErrorCode:
        """The id's entry if the producer is its current one; else the error to answer."""
        got = self.cache.get(transactional_id)
        if got is None:
            return ErrorCode.invalid_producer_id_mapping
        if isinstance(got, ErrorCode):
            return got
        if got.metadata.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if got.metadata.producer_epoch != producer_epoch:
            return ErrorCode.producer_fenced
        return got

    def prepare_add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        now_ms: int,
        client_transaction_version: int = TV_0,
    ) -> Prepared | ErrorCode:
        """Add to the producer's transaction (starting it); version 2 when a partition leader
        adds for a Produce v12+ or the group coordinator for a TxnOffsetCommit v5+."""
        if not transactional_id:
            return ErrorCode.invalid_request
        got = self._producer_entry(transactional_id, producer_id, producer_epoch)
        if isinstance(got, ErrorCode):
            return got
        md = got.metadata
        added = frozenset(partitions)
        if md.pending_state is not None or md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return ErrorCode.concurrent_transactions
        if md.state == S.ONGOING and added <= md.partitions:
            return ErrorCode.none  # already in the transaction: nothing to write
        return Prepared(
            transactional_id,
            got.coordinator_epoch,
            md.prepare_add_partitions(added, now_ms, client_transaction_version),
        )

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """KIP-890 verification (AddPartitionsToTxn v4+ with verify_only): is each partition in
        the producer's ongoing transaction? TRANSACTION_ABORTABLE for those that are not."""
        tps = list(partitions)
        if not transactional_id:
            return dict.fromkeys(tps, ErrorCode.invalid_request)
        got = self._producer_entry(transactional_id, producer_id, producer_epoch)
        if isinstance(got, ErrorCode):
            return dict.fromkeys(tps, got)
        md = got.metadata
        if md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return dict.fromkeys(tps, ErrorCode.concurrent_transactions)
        return {
            tp: ErrorCode.none if tp in md.partitions else ErrorCode.transaction_abortable
            for tp in tps
        }

    # -- EndTxn ---------------------------------------------------------------------------------
    def prepare_end_txn(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        *,
        commit: bool,
        from_client: bool,
        now_ms: int,
        client_transaction_version: int = TV_0,
    ) -> Prepared | ErrorCode:
        """PrepareCommit or PrepareAbort; ErrorCode.none when the transaction already ended the
        same way (a retried EndTxn). Version 2 clients (EndTxn v5+) get an epoch bump per
        transaction (coordinator.txn.end_txn_v2)."""
        if not transactional_id:
            return ErrorCode.invalid_request
        got = self.cache.get(transactional_id)
        if got is None:
            return ErrorCode.invalid_producer_id_mapping
        if isinstance(got, ErrorCode):
            return got
        md = got.metadata
        fencing = md.pending_state == S.PREPARE_EPOCH_FENCE
        if client_transaction_version >= TV_2:
            got_v2 = prepare_end_txn_v2(
                md, producer_id, producer_epoch, commit, from_client, now_ms, self._allocate
            )
            if isinstance(got_v2, ErrorCode):
                return got_v2
            return Prepared(transactional_id, got.coordinator_epoch, got_v2, fenced=fencing)
        if md.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        # clients must match the epoch; the coordinator's own aborts come with a bumped one
        if (from_client and producer_epoch != md.producer_epoch) or (
            producer_epoch < md.producer_epoch
        ):
            return ErrorCode.producer_fenced
        if md.pending_state is not None and not fencing:
            return ErrorCode.concurrent_transactions
        state = md.state
        if state == S.ONGOING:
            target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
            if fencing:
                if commit:
                    return ErrorCode.concurrent_transactions
                # the fence is taken in memory at once (its epoch is never handed out unless
                # the abort is written; see TxnMetadata.has_failed_epoch_fence)
                md.pending_state = None
                md.producer_epoch = producer_epoch
                md.last_producer_epoch = NO_PRODUCER_EPOCH
            transit = md.prepare_abort_or_commit(target, now_ms, TV_0)
            return Prepared(transactional_id, got.coordinator_epoch, transit, fenced=fencing)
        if state == S.COMPLETE_COMMIT:
            return ErrorCode.none if commit else self._invalid_state(md, commit)
        if state == S.COMPLETE_ABORT:
            return ErrorCode.none if not commit else self._invalid_state(md, commit)
        if state == S.PREPARE_COMMIT:
            return ErrorCode.concurrent_transactions if commit else self._invalid_state(md, commit)
        if state == S.PREPARE_ABORT:
            return (
                ErrorCode.concurrent_transactions if not commit else self._invalid_state(md, commit)
            )
        if state == S.EMPTY:
            return self._invalid_state(md, commit)
        raise IllegalTransition(f"{transactional_id} found in state {state.display_name}")

    def producer_after_end(self, transactional_id: str) -> tuple[int, int]:
        """The producer id and epoch an EndTxn v5 answer carries (end_txn_v2.continued_with)."""
        got = self.cache.get(transactional_id)
        return continued_with(got.metadata if isinstance(got, Entry) else None)

    @staticmethod
    def _invalid_state(md: TxnMetadata, commit: bool) -> ErrorCode:
        log.debug(
            "transactional.id=%s state=%s end=%s: invalid",
            md.transactional_id,
            md.state.display_name,
            "commit" if commit else "abort",
        )
        return ErrorCode.invalid_txn_state

    def begin_markers(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        now_ms: int,
    ) -> tuple[Entry, TxnTransit] | ErrorCode:
        """After PrepareCommit/PrepareAbort was written: the entry whose partitions get markers
        and the CompleteCommit/CompleteAbort transit to write once they all have one."""
        got = self.cache.get(transactional_id)
        if got is None:
            raise IllegalTransition(f"{transactional_id}: owned but not cached")
        if isinstance(got, ErrorCode):
            return got
        if got.coordinator_epoch != coordinator_epoch:
            return ErrorCode.not_coordinator
        md = got.metadata
        if md.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if md.producer_epoch != producer_epoch:
            return ErrorCode.producer_fenced
        if md.pending_state is not None:
            return ErrorCode.concurrent_transactions
        expected = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        if md.state != expected:
            return self._invalid_state(md, commit)
        return got, md.prepare_complete(now_ms)

    def end_txn_write_failed(self, prepared: Prepared) -> None:
        """The abort of a fenced transaction was not written: its bumped epoch, already taken in
        memory but never returned, must not be bumped again by the next fence."""
        if not prepared.fenced:
            return
        got = self.cache.get(prepared.transactional_id)
        if isinstance(got, Entry) and got.coordinator_epoch == prepared.coordinator_epoch:
            got.metadata.has_failed_epoch_fence = True
            log.warning(
                "transactional.id=%s fence to epoch %d not written",
                prepared.transactional_id,
                prepared.transit.producer_epoch,
            )

    # -- the write path ---------------------------------------------------------------------------
    def check_write(self, prepared: Prepared) -> ErrorCode:
        """Right before appending: still the coordinator of the id, under the same epoch?"""
        got = self.cache.get(prepared.transactional_id)
        if isinstance(got, ErrorCode):
            return got
        if got is None or got.coordinator_epoch != prepared.coordinator_epoch:
            return ErrorCode.not_coordinator
        return ErrorCode.none

    def complete_write(
        self,
        prepared: Prepared,
        append_error: ErrorCode,
        *,
        retry_on: Collection[ErrorCode] = (),
    ) -> ErrorCode:
        """The append of ``prepared`` finished (replicated, or failed with ``append_error``):
        take the transition, or drop it (unless the answer is in ``retry_on``: the caller
        writes it again). Returns the error to answer."""
        error = append_error_to_response(ErrorCode(append_error))
        got = self.cache.get(prepared.transactional_id)
        if error == ErrorCode.none:
            if isinstance(got, ErrorCode):
                return got
            if got is None or got.coordinator_epoch != prepared.coordinator_epoch:
                return ErrorCode.not_coordinator
            got.metadata.complete_transition(prepared.transit)
            return ErrorCode.none
        if isinstance(got, Entry) and got.coordinator_epoch == prepared.coordinator_epoch:
            if error not in retry_on:
                got.metadata.abandon_transition()
        return error

    # -- DescribeTransactions, ListTransactions ---------------------------------------------------
    def describe(self, transactional_id: str) -> DescribedTxn | ErrorCode:
        if not transactional_id:
            return ErrorCode.invalid_request
        got = self.cache.get(transactional_id)
        if isinstance(got, ErrorCode):
            return got
        if got is None or got.metadata.state == S.DEAD:
            return ErrorCode.transactional_id_not_found
        md = got.metadata
        return DescribedTxn(
            md.producer_id,
            md.producer_epoch,
            md.state,
            md.timeout_ms,
            md.start_ms,
            frozenset(md.partitions),
        )

    def list_transactions(
        self,
        producer_ids: set[int],
        state_names: set[str],
        duration_ms: int,
        now_ms: int,
    ) -> tuple[ErrorCode, list[ListedTxn], list[str]]:
        """(error, transactions, unknown state filters), filtered as Kafka filters them."""
        if self.cache.loading:
            return ErrorCode.coordinator_load_in_progress, [], []
        states = {TxnState.from_name(n) for n in state_names} - {None}
        unknown = sorted(n for n in state_names if TxnState.from_name(n) is None)
        out = []
        for _, entry in self.cache.entries():
            md = entry.metadata
            if md.state == S.DEAD:
                continue
            if producer_ids and md.producer_id not in producer_ids:
                continue
            if state_names and md.state not in states:
                continue
            if duration_ms >= 0 and now_ms - md.start_ms <= duration_ms:
                continue
            out.append(ListedTxn(md.transactional_id, md.producer_id, md.state))
        return ErrorCode.none, out, unknown

    # -- timers ---------------------------------------------------------------------------------
    def timed_out(self, now_ms: int) -> list[Prepared]:
        """Fence and abort every Ongoing transaction older than its timeout (Kafka's
        abortTimedOutTransactions): the PrepareAbort writes to make, with bumped epochs."""
        out = []
        for _, entry in self.cache.entries():
            md = entry.metadata
            if md.pending_state is not None or md.state != S.ONGOING:
                continue
            if md.start_ms + md.timeout_ms >= now_ms:
                continue
            got = self._fence_and_abort(entry, now_ms)
            if isinstance(got, Prepared):
                log.info(
                    "aborting transactional.id=%s producer.id=%d: transaction timed out",
                    md.transactional_id,
                    md.producer_id,
                )
                out.append(got)
        return out

    def expire_ids(self, now_ms: int) -> dict[int, list[Prepared]]:
        """Idle ids past transactional.id.expiration.ms, per partition: their tombstones are
        written, then ``complete_expiration`` removes them."""
        horizon = now_ms - self.config.id_expiration_ms
        out: dict[int, list[Prepared]] = {}
        for p, entry in self.cache.entries():
            md = entry.metadata
            if (
                md.pending_state is None
                and md.state in EXPIRATION_ALLOWED
                and md.last_update_ms <= horizon
            ):
                transit = md.prepare_dead()
                out.setdefault(p, []).append(
                    Prepared(md.transactional_id, entry.coordinator_epoch, transit)
                )
        return out

    def complete_expiration(self, prepared: Prepared, append_error: ErrorCode) -> None:
        got = self.cache.get(prepared.transactional_id)
        if not isinstance(got, Entry):
            return
        md = got.metadata
        if (
            append_error == ErrorCode.none
            and got.coordinator_epoch == prepared.coordinator_epoch
            and md.pending_state == S.DEAD
            and md.producer_epoch == prepared.transit.producer_epoch
        ):
            self.cache.remove(prepared.transactional_id)
            log.info("expired transactional.id=%s", prepared.transactional_id)
        else:
            md.abandon_transition()
