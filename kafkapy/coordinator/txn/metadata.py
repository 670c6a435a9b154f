"""The state of one transactional id, and its transitions in two steps (Kafka's
TransactionMetadata).

A change is first *prepared*: a ``TxnTransit`` (the whole target state) is computed and the
metadata's ``pending_state`` set, which blocks every other transition meanwhile (requests then
get CONCURRENT_TRANSACTIONS). The transit is written to __transaction_state; only once the write
is replicated is it *completed* (``complete_transition``), which checks it against the current
state as Kafka does (same producer id and epoch unless the transition may bump them, partitions
only growing while Ongoing, ...). A failed write drops the pending state instead
(``abandon_transition``), so the metadata never shows what the log does not hold.

Transactions version 2 (KIP-890 part 2): a transition carries the client's transaction version
(``client_transaction_version``: 2 for EndTxn v5+, TxnOffsetCommit v5+, Produce v12+ partition
adds). Under version 2 PrepareCommit/PrepareAbort bump the producer epoch (the markers carry the
bumped epoch, and the client continues with it: EndTxn v5 answers it), and an abort may start from
Empty, CompleteCommit or CompleteAbort (a version 2 client aborts without knowing whether a
partition was added). When the epoch is exhausted, the PrepareCommit/PrepareAbort reserves a new
producer id (``next_producer_id``) that CompleteCommit/CompleteAbort takes with epoch 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

from kafkapy.protocol.errors import ErrorCode

from .states import IN_PROGRESS, IllegalTransition, TxnState, check_transition

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_EPOCH = 32767
TV_0 = 0  # clients of the version 1 protocol (AddPartitionsToTxn, EndTxn up to v4)
TV_2 = 2  # KIP-890 part 2: an epoch bump per transaction, implicit partition adds

TopicPartition = tuple[str, int]


def epoch_exhausted(epoch: int) -> bool:
    """No client may use Short.MaxValue, so the coordinator can always fence once more."""
    return epoch >= MAX_EPOCH - 1


@dataclass(frozen=True, slots=True)
class TxnTransit:
    """The target of a prepared transition: what is written to the log and then taken."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    start_ms: int
    last_update_ms: int
    client_transaction_version: int = TV_0
    next_producer_id: int = NO_PRODUCER_ID  # version 2, epoch exhausted: the id that follows


@dataclass(slots=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    last_producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    timeout_ms: int = 60_000
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    pending_state: TxnState | None = None
    # a fence whose write failed: the bumped epoch was never returned, do not bump again
    has_failed_epoch_fence: bool = False
    client_transaction_version: int = TV_0
    next_producer_id: int = NO_PRODUCER_ID

    @property
    def epoch_bump_per_transaction(self) -> bool:
        """Transactions version 2: PrepareCommit/PrepareAbort bump the epoch."""
        return self.client_transaction_version >= TV_2

    # -- queries --------------------------------------------------------------------------------
    @property
    def epoch_exhausted(self) -> bool:
        return epoch_exhausted(self.producer_epoch)

    @property
    def in_progress(self) -> bool:
        return self.state in IN_PROGRESS

    def snapshot(self) -> TxnTransit:
        """The current state as a transit (for completing a transaction loaded from the log)."""
        return TxnTransit(
            self.producer_id,
            self.last_producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            self.state,
            frozenset(self.partitions),
            self.start_ms,
            self.last_update_ms,
            self.client_transaction_version,
            self.next_producer_id,
        )

    # -- preparing transitions --------------------------------------------------------------------
    def _prepare(
        self,
        state: TxnState,
        producer_id: int,
        epoch: int,
        last_epoch: int,
        timeout_ms: int,
        partitions: frozenset[TopicPartition],
        start_ms: int,
        now_ms: int,
        client_transaction_version: int | None = None,
        next_producer_id: int = NO_PRODUCER_ID,
    ) -> TxnTransit:
        if self.pending_state is not None:
            raise IllegalTransition(
                f"{self.transactional_id}: preparing {state.display_name} while "
                f"{self.pending_state.display_name} is pending"
            )
        if producer_id < 0:
            raise IllegalTransition(f"illegal producer id {producer_id}")
        if state != TxnState.DEAD and epoch < 0:
            raise IllegalTransition(f"illegal producer epoch {epoch}")
        check_transition(self.state, state)
        self.pending_state = state
        return TxnTransit(
            producer_id,
            self.producer_id,
            epoch,
            last_epoch,
            timeout_ms,
            state,
            partitions,
            start_ms,
            now_ms,
            self.client_transaction_version
            if client_transaction_version is None
            else client_transaction_version,
            next_producer_id,
        )

    def prepare_fence_epoch(self) -> TxnTransit:
        """Bump the epoch to fence the current producer before aborting its transaction (an
        InitProducerId of another instance, or the transaction timeout). The bump is skipped when
        an earlier fence failed to be written: that epoch was never handed out."""
        if self.producer_epoch >= MAX_EPOCH:
            raise IllegalTransition("cannot fence a producer at the maximum epoch")
        epoch = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare(
            TxnState.PREPARE_EPOCH_FENCE,
            self.producer_id,
            epoch,
            NO_PRODUCER_EPOCH,
            self.timeout_ms,
            frozenset(self.partitions),
            self.start_ms,
            self.last_update_ms,
        )

    def prepare_increment_epoch(
        self, timeout_ms: int, expected_epoch: int | None, now_ms: int
    ) -> TxnTransit | ErrorCode:
        """InitProducerId on an id with no transaction in progress. Without an expected epoch the
        epoch is bumped and the last epoch forgotten; with one (KIP-360: a producer recovering
        from an error passes its id and epoch) the epoch is bumped when it is current, a retry of
        an answered bump gets the current epoch again, anything else is fenced."""
        if self.epoch_exhausted:
            raise IllegalTransition(f"producer id {self.producer_id} has no epochs left")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            return ErrorCode.producer_fenced
        return self._prepare(
            TxnState.EMPTY, self.producer_id, epoch, last, timeout_ms, frozenset(), -1, now_ms
        )

    def prepare_producer_id_rotation(
        self, producer_id: int, timeout_ms: int, now_ms: int, record_last_epoch: bool
    ) -> TxnTransit:
        """A new producer id with epoch 0, when the epochs of the current one are exhausted."""
        if self.in_progress:
            raise IllegalTransition("cannot rotate the producer id during a transaction")
        last = self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH
        return self._prepare(
            TxnState.EMPTY, producer_id, 0, last, timeout_ms, frozenset(), -1, now_ms
        )

    def _prepare_same_producer(
        self,
        state: TxnState,
        partitions: frozenset[TopicPartition],
        start_ms: int,
        now_ms: int,
        client_transaction_version: int | None = None,
    ) -> TxnTransit:
        """A transition that keeps the producer id, epochs and timeout."""
        return self._prepare(
            state,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.timeout_ms,
            partitions,
            start_ms,
            now_ms,
            client_transaction_version,
        )

    def prepare_add_partitions(
        self,
        added: frozenset[TopicPartition] | set[TopicPartition],
        now_ms: int,
        client_transaction_version: int = TV_0,
    ) -> TxnTransit:
        """Ongoing with ``added``; the transaction starts now unless it was already Ongoing."""
        starting = self.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
        return self._prepare_same_producer(
            TxnState.ONGOING,
            frozenset(self.partitions | set(added)),
            now_ms if starting else self.start_ms,
            now_ms,
            client_transaction_version,
        )

    def prepare_abort_or_commit(
        self,
        state: TxnState,
        now_ms: int,
        client_transaction_version: int | None = None,
        next_producer_id: int = NO_PRODUCER_ID,
    ) -> TxnTransit:
        """PrepareCommit or PrepareAbort. Under transactions version 2 the epoch is bumped (the
        caller has reserved ``next_producer_id`` when it is exhausted), and an abort with no
        transaction started (Empty, CompleteCommit, CompleteAbort) starts now."""
        tv = self.client_transaction_version if client_transaction_version is None else (
            client_transaction_version
        )
        epoch, last = self.producer_epoch, self.last_producer_epoch
        if tv >= TV_2:
            epoch, last = self.producer_epoch + 1, self.producer_epoch
        start = self.start_ms if self.state == TxnState.ONGOING else now_ms
        return self._prepare(
            state,
            self.producer_id,
            epoch,
            last,
            self.timeout_ms,
            frozenset(self.partitions),
            start,
            now_ms,
            tv,
            next_producer_id,
        )

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        """CompleteCommit or CompleteAbort once every marker is written; under transactions
        version 2 with the epoch exhausted, the reserved next producer id with epoch 0."""
        state = (
            TxnState.COMPLETE_COMMIT
            if self.state == TxnState.PREPARE_COMMIT
            else TxnState.COMPLETE_ABORT
        )
        self.has_failed_epoch_fence = False
        if self.next_producer_id != NO_PRODUCER_ID:
            return self._prepare(
                state,
                self.next_producer_id,
                0,
                self.last_producer_epoch,
                self.timeout_ms,
                frozenset(),
                self.start_ms,
                now_ms,
            )
        return self._prepare_same_producer(state, frozenset(), self.start_ms, now_ms)

    def prepare_dead(self) -> TxnTransit:
        return self._prepare_same_producer(
            TxnState.DEAD, frozenset(), self.start_ms, self.last_update_ms
        )

    # -- completing ---------------------------------------------------------------------------
    def complete_transition(self, t: TxnTransit) -> None:
        """Take the transit once its record is replicated; checks it as Kafka does."""
        target = self.pending_state
        if target is None or target != t.state:
            self._fail(t)
        same_producer = (
            t.producer_epoch == self.producer_epoch and t.producer_id == self.producer_id
        )
        if target == TxnState.EMPTY:
            bump = t.producer_epoch == self.producer_epoch + 1 or (
                t.producer_epoch == 0 and t.producer_id != self.producer_id
            )
            if (
                (t.producer_epoch != self.producer_epoch and not bump)
                or t.partitions
                or t.start_ms != -1
            ):
                self._fail(t)
            self.timeout_ms = t.timeout_ms
            self.producer_epoch = t.producer_epoch
            self.last_producer_epoch = t.last_producer_epoch
            self.producer_id = t.producer_id
            self.last_producer_id = t.last_producer_id
        elif target == TxnState.ONGOING:
            if (
                not same_producer
                or not self.partitions <= t.partitions
                or t.timeout_ms != self.timeout_ms
            ):
                self._fail(t)
            self.start_ms = t.start_ms
            self.partitions |= t.partitions
            self.client_transaction_version = t.client_transaction_version
        elif target in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            tv2 = t.client_transaction_version >= TV_2
            empty_abort = (
                tv2
                and target == TxnState.PREPARE_ABORT
                and self.state != TxnState.ONGOING
            )
            valid_epoch = (
                t.producer_id == self.producer_id
                and t.producer_epoch == self.producer_epoch + 1
                if tv2
                else same_producer
            )
            if (
                not valid_epoch
                or set(self.partitions) != set(t.partitions)
                or t.timeout_ms != self.timeout_ms
                or (t.start_ms != self.start_ms and not empty_abort)
            ):
                self._fail(t)
            if tv2:
                self.producer_epoch = t.producer_epoch
                self.last_producer_epoch = t.last_producer_epoch
                self.next_producer_id = t.next_producer_id
                self.start_ms = t.start_ms
            self.client_transaction_version = t.client_transaction_version
        elif target in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            rotated = (
                self.next_producer_id != NO_PRODUCER_ID
                and t.producer_id == self.next_producer_id
                and t.producer_epoch == 0
            )
            if (
                not (same_producer or rotated)
                or t.timeout_ms != self.timeout_ms
                or t.start_ms == -1
            ):
                self._fail(t)
            if rotated:
                self.last_producer_id = self.producer_id
                self.producer_id = t.producer_id
                self.producer_epoch = 0
            self.next_producer_id = NO_PRODUCER_ID
            self.start_ms = t.start_ms
            self.partitions.clear()
        else:  # PrepareEpochFence and Dead are never completed (see states.py)
            self._fail(t)
        self.last_update_ms = t.last_update_ms
        self.pending_state = None
        self.state = target

    def abandon_transition(self) -> None:
        """The write of the prepared transit failed: nothing changes."""
        self.pending_state = None

    def remove_partition(self, tp: TopicPartition) -> None:
        """A marker was written to ``tp`` (or it no longer exists)."""
        if self.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise IllegalTransition(
                f"{self.transactional_id}: removing {tp} in state {self.state.display_name}"
            )
        self.partitions.discard(tp)

    def _fail(self, t: TxnTransit) -> NoReturn:
        raise IllegalTransition(
            f"{self.transactional_id}: transition to {t} does not follow {self} "
            f"(pending {self.pending_state})"
        )
