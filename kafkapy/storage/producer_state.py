"""Idempotent and transactional producer state of one partition (Kafka's ProducerStateManager).

Per producer id: the current epoch, the metadata of its last five batches (first/last sequence
and offset: a retried batch gets its original offsets, gaps are OUT_OF_ORDER_SEQUENCE_NUMBER,
zombies INVALID_PRODUCER_EPOCH), the coordinator epoch of the last marker it saw, and the first
offset of its open transaction (-1 when none).

Transactions: a producer's first transactional batch opens a transaction at its offset; its
commit or abort marker (a control batch) closes it. The partition keeps the open transactions
(``ongoing``, by first offset) and the closed ones whose marker is not yet below the high
watermark (``unreplicated``): the first unstable offset is the smallest first offset of either,
and the last stable offset is that bounded by the high watermark. Closing an aborted transaction
yields a ``CompletedTxn`` the log records in its aborted-transaction index.

KIP-890 part 1: before a producer's first transactional write to the partition, the leader asks
the coordinator whether the partition is in the transaction; ``start_verification`` hands out a
guard (a unique object) the append must present, so a marker written between the question and
the append (or a stale answer) cannot let data in outside the transaction.

Three origins, as Kafka's: client appends are checked in full (``check``), coordinator markers
for epoch and coordinator epoch (``check_marker``), replicated and recovered batches are applied
without checks (``update`` / ``update_marker``). The state is rebuilt from the log when a log
opens, starting from the latest producer snapshot (storage/producer_snapshot.py). Producers
idle for producer.id.expiration.ms with no open transaction are forgotten (``remove_expired``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkapy.protocol.control_batch import EndTxnMarker
from kafkapy.protocol.record_batch import NO_SEQUENCE, TRANSACTIONAL_BIT, BatchHeader
from kafkapy.storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)

MAX_CACHED_BATCHES = 5
INT32_MAX = 2**31 - 1
NO_OFFSET = -1

# A verification guard that lets a transactional append through without KIP-890 verification:
# transaction.partition.verification.enable=false, or a caller that verified by other means.
SKIP_VERIFICATION = object()

# Kafka accepts any first sequence from a producer id it does not know (its state may have
# been removed by retention). Set True to demand sequence 0 instead.
STRICT_NEW_PRODUCER_SEQUENCE = False


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int = -1
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))
    last_timestamp: int = -1  # max timestamp of the producer's last batch (DescribeProducers)
    coordinator_epoch: int = -1  # of the last marker written for this producer
    current_txn_first_offset: int = NO_OFFSET  # first offset of its open transaction

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else NO_OFFSET

    def find_duplicate(self, h: BatchHeader) -> BatchMetadata | None:
        if h.producer_epoch != self.epoch:
            return None
        last_seq = h.last_sequence
        for b in self.batches:
            if b.first_seq == h.base_sequence and b.last_seq == last_seq:
                return b
        return None

    def bump_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()


@dataclass(slots=True)
class TxnMetadata:
    """A transaction on this partition: open (last_offset -1) or closed by the marker at
    last_offset."""

    producer_id: int
    first_offset: int
    last_offset: int = NO_OFFSET


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset
    aborted: bool


@dataclass(slots=True)
class VerificationState:
    """KIP-890: a verification in progress (or done) for a producer's next transaction."""

    guard: object
    lowest_sequence: int
    epoch: int

    def note(self, sequence: int, epoch: int) -> None:
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:
            self.epoch = epoch
            self.lowest_sequence = sequence


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """Producer entries keyed by producer id, and the partition's transactions."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        # open transactions by first offset; insertion order is offset order (appends are in
        # offset order; loads insert sorted), so the first key is the smallest
        self.ongoing: dict[int, TxnMetadata] = {}
        # closed transactions whose marker may not be replicated yet, by first offset
        self.unreplicated: dict[int, TxnMetadata] = {}
        self.verifications: dict[int, VerificationState] = {}

    # ---- client appends ------------------------------------------------------------------

    def check(
        self,
        headers: Sequence[BatchHeader],
        verification_guard: object | None = None,
        coordinator: bool = False,
    ) -> BatchMetadata | None:
        """Validate a client append before it is written. Returns the original batch's
        metadata when one batch is a retry (the whole append is then a duplicate).

        A transactional batch of a producer with no open transaction here needs the guard
        ``start_verification`` handed out (or ``SKIP_VERIFICATION``), else INVALID_TXN_STATE.
        A ``coordinator`` append (Kafka's AppendOrigin.COORDINATOR: a group coordinator writing
        a producer's transactional offset commit) has no sequence to check and is never a
        duplicate; its epoch and transaction are checked as a client's."""
        # pid -> (epoch, last seq, transaction open) within the append
        pending: dict[int, tuple[int, int, bool]] = {}
        for h in headers:
            pid = h.producer_id
            if pid < 0:
                continue
            entry = self.producers.get(pid)
            if entry is not None and pid not in pending and not coordinator:
                dup = entry.find_duplicate(h)
                if dup is not None:
                    return dup
            if pid in pending:
                cur_epoch, cur_last, in_txn = pending[pid]
            elif entry is not None:
                cur_epoch, cur_last = entry.epoch, entry.last_seq
                in_txn = entry.current_txn_first_offset >= 0
            else:
                cur_epoch, cur_last, in_txn = -1, NO_SEQUENCE, False
            transactional = bool(h.attributes & TRANSACTIONAL_BIT)
            # a transaction open at an older epoch is not this batch's (KIP-890 part 2: the
            # epoch is bumped per transaction, the batch waits for the old one's marker)
            in_this_txn = in_txn and (pid in pending or h.producer_epoch == cur_epoch)
            if (
                transactional
                and not in_this_txn
                and verification_guard is not SKIP_VERIFICATION
            ):
                state = self.verifications.get(pid)
                if state is None or state.guard is not verification_guard:
                    raise InvalidTxnStateError("Record was not part of an ongoing transaction")
            if h.producer_epoch < cur_epoch:
                raise InvalidProducerEpochError(
                    f"producer {pid} epoch {h.producer_epoch} is older than {cur_epoch}"
                )
            if not coordinator:
                self._check_sequence(pid, h, cur_epoch, cur_last)
            if in_txn and not transactional:
                raise InvalidTxnStateError(
                    f"Expected transactional write from producer {pid}: its transaction is open"
                )
            pending[pid] = (h.producer_epoch, h.last_sequence, in_txn or transactional)
        return None

    def _check_sequence(self, pid: int, h: BatchHeader, cur_epoch: int, cur_last: int) -> None:
        seq = h.base_sequence
        state = self.verifications.get(pid)
        if state is not None and seq > state.lowest_sequence:
            raise OutOfOrderSequenceError(
                f"producer {pid}: sequence {seq} after the earliest verified sequence "
                f"{state.lowest_sequence}"
            )
        if h.producer_epoch != cur_epoch:
            if seq != 0 and (cur_epoch != -1 or STRICT_NEW_PRODUCER_SEQUENCE):
                raise OutOfOrderSequenceError(
                    f"producer {pid}: new epoch {h.producer_epoch} must start at sequence 0"
                )
        elif cur_last == NO_SEQUENCE:
            if seq != 0:
                raise OutOfOrderSequenceError(f"producer {pid}: expected sequence 0")
        elif not in_sequence(cur_last, seq):
            raise OutOfOrderSequenceError(f"producer {pid}: sequence {seq} after {cur_last}")

    def has_ongoing_txn(self, producer_id: int, epoch: int | None = None) -> bool:
        """Whether the producer has a transaction open here (at ``epoch``, when given)."""
        entry = self.producers.get(producer_id)
        return (
            entry is not None
            and entry.current_txn_first_offset >= 0
            and (epoch is None or entry.epoch == epoch)
        )

    def start_verification(self, producer_id: int, sequence: int, epoch: int) -> object | None:
        """The guard a transactional append must present after the coordinator verified the
        partition (None: the producer's transaction is open here at that epoch, no verification
        needed; a transaction open at an older epoch is the previous one, whose marker has not
        landed yet under transactions version 2)."""
        if self.has_ongoing_txn(producer_id, epoch):
            return None
        state = self.verifications.get(producer_id)
        if state is None:
            state = self.verifications[producer_id] = VerificationState(object(), sequence, epoch)
        state.note(sequence, epoch)
        return state.guard

    # ---- coordinator markers -------------------------------------------------------------

    def check_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        transaction_version: int = 0,
    ) -> None:
        """A marker from the coordinator: its producer epoch must not be older than the one
        seen (INVALID_PRODUCER_EPOCH), nor its coordinator epoch
        (TRANSACTION_COORDINATOR_FENCED). Under transactions version 2 (KIP-890 part 2) the
        coordinator bumped the epoch when the transaction ended, so a marker closing a
        transaction open here must carry an epoch above that transaction's data."""
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        open_txn = entry.current_txn_first_offset >= 0
        if producer_epoch < entry.epoch or (
            transaction_version >= 2 and open_txn and producer_epoch <= entry.epoch
        ):
            raise InvalidProducerEpochError(
                f"marker epoch {producer_epoch} of producer {producer_id} is older than "
                f"{entry.epoch}"
                + (" (transactions version 2 needs a bumped epoch)" if transaction_version >= 2
                   else "")
            )
        if entry.coordinator_epoch > coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"Invalid coordinator epoch for producerId {producer_id}: {coordinator_epoch} "
                f"(zombie), {entry.coordinator_epoch} (current)"
            )

    # ---- applying appended batches -------------------------------------------------------

    def _entry(self, pid: int) -> ProducerEntry:
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(pid)
        return entry

    def update(self, h: BatchHeader, first_offset: int) -> None:
        """Record an appended data batch whose first offset is ``first_offset``."""
        pid = h.producer_id
        if pid < 0:
            return
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(pid)
        if h.producer_epoch != entry.epoch:
            entry.epoch = h.producer_epoch
            entry.batches.clear()
        entry.last_timestamp = h.max_timestamp
        if h.attributes & TRANSACTIONAL_BIT:
            self.verifications.pop(pid, None)
            if entry.current_txn_first_offset < 0:
                entry.current_txn_first_offset = first_offset
                self.ongoing[first_offset] = TxnMetadata(pid, first_offset)
        if h.is_control or h.base_sequence == NO_SEQUENCE:
            return
        entry.batches.append(
            BatchMetadata(
                h.base_sequence, h.last_sequence, first_offset, first_offset + h.last_offset_delta
            )
        )

    def update_marker(
        self, h: BatchHeader, offset: int, marker: EndTxnMarker | None
    ) -> CompletedTxn | None:
        """Record an appended control batch at ``offset``. Returns the transaction it closed
        (None for a marker of a producer with nothing open, or an emptied control batch)."""
        entry = self._entry(h.producer_id)
        self.verifications.pop(h.producer_id, None)
        if marker is None:
            return None
        first = entry.current_txn_first_offset
        completed = None
        if first >= 0:
            completed = CompletedTxn(h.producer_id, first, offset, not marker.committed)
        entry.bump_epoch(h.producer_epoch)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.current_txn_first_offset = NO_OFFSET
        entry.last_timestamp = h.max_timestamp
        return completed

    def last_stable_offset_of(self, completed: CompletedTxn) -> int:
        """The LSO recorded with an aborted transaction in the index: the first offset of the
        earliest other open transaction, else just past the marker."""
        for txn in self.ongoing.values():
            if txn.producer_id != completed.producer_id:
                return txn.first_offset
        return completed.last_offset + 1

    def complete_txn(self, completed: CompletedTxn) -> None:
        """Move a closed transaction from ``ongoing`` to ``unreplicated``."""
        txn = self.ongoing.pop(completed.first_offset, None)
        if txn is None:
            txn = TxnMetadata(completed.producer_id, completed.first_offset)
        txn.last_offset = completed.last_offset
        self.unreplicated[completed.first_offset] = txn

    # ---- stability -----------------------------------------------------------------------

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """The first offset of the earliest transaction that is open, or closed by a marker not
        yet below ``high_watermark``; None when there is none. Closed transactions whose marker
        is below the high watermark are forgotten here (the high watermark only moves forward
        except on truncation, which rebuilds the state)."""
        unreplicated = self.unreplicated
        if unreplicated:
            for first in [k for k, t in unreplicated.items() if t.last_offset < high_watermark]:
                del unreplicated[first]
        best = None
        if self.ongoing:
            best = next(iter(self.ongoing))
        if unreplicated:
            low = min(unreplicated)
            if best is None or low < best:
                best = low
        return best

    def first_undecided_offset(self) -> int | None:
        return next(iter(self.ongoing)) if self.ongoing else None

    def on_log_start_offset(self, log_start_offset: int) -> None:
        for first in [k for k, t in self.unreplicated.items() if t.last_offset < log_start_offset]:
            del self.unreplicated[first]

    # ---- expiration ----------------------------------------------------------------------

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Forget the producers idle for ``expiration_ms`` (producer.id.expiration.ms: no batch
        or marker with a timestamp within it) that have no open transaction here, as Kafka's
        removeExpiredProducers; returns their ids. A later batch of such a producer is taken
        as a new producer's."""
        gone = [
            pid
            for pid, e in self.producers.items()
            if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= expiration_ms
        ]
        for pid in gone:
            del self.producers[pid]
            self.verifications.pop(pid, None)
        return gone

    # ---- whole-state operations ----------------------------------------------------------

    def clear(self) -> None:
        self.producers.clear()
        self.ongoing.clear()
        self.unreplicated.clear()

    def load_entries(self, entries: Iterable[ProducerEntry]) -> None:
        """Replace the state with snapshot entries (their open transactions become ongoing)."""
        self.clear()
        opened = []
        for e in entries:
            self.producers[e.producer_id] = e
            if e.current_txn_first_offset >= 0:
                opened.append(TxnMetadata(e.producer_id, e.current_txn_first_offset))
        for txn in sorted(opened, key=lambda t: t.first_offset):
            self.ongoing[txn.first_offset] = txn

    def rebuild(self, headers: Iterable[BatchHeader]) -> None:
        """Replace the state with what the given (already offset-stamped) data batches imply
        (tests and tools; logs replay control batches through ``update_marker``)."""
        self.clear()
        for h in headers:
            if h.producer_id >= 0 and not h.is_control:
                self.update(h, h.base_offset)
