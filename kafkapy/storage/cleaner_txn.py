"""What the log cleaner knows about transactions while it walks a log (Kafka's
CleanedTransactionMetadata), sans-io.

The cleaner never goes past the last stable offset, so every transaction it meets is decided;
the aborted ones are known in advance from the ``.txnindex`` files. Walking batches in offset
order:

- a transactional data batch of a producer whose aborted transaction has started is *aborted*:
  its records go, whatever their keys (and never enter the offset map); the batch is remembered
  as seen for that transaction;
- a transactional data batch of any other producer belongs to a committed transaction: it is
  cleaned like any batch, and the transaction is remembered as seen;
- an ABORT marker is kept while the cleaner saw batches of its transaction in this pass (their
  empty shells may remain as a producer's last batch): the cleaned segment's ``.txnindex`` then
  gets the transaction's entry again. Otherwise it may go;
- a COMMIT marker may go when no batch of its transaction was seen in this pass;
- a marker that may go is first stamped with a delete horizon (now + delete.retention.ms, as
  for tombstones) and removed by a later cleaning once that has passed, so a consumer that
  already read the transaction's data still sees the marker. An emptied control batch ends
  nothing and may go.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from kafkapy.protocol.control_batch import ABORT, COMMIT, control_type_of
from kafkapy.protocol.record_batch import BatchHeader, RecordBatchError, decode_records
from kafkapy.storage.txn_index import AbortedTxn


@dataclass
class _AbortedSeen:
    txn: AbortedTxn
    last_seen_batch: int | None = None


@dataclass
class CleanedTxnState:
    """Transactions met by one cleaner walk; ``retained`` collects the aborted-transaction
    entries the cleaned output keeps (reset per cleaned segment by the caller)."""

    aborted: list[tuple[int, int, AbortedTxn]] = field(default_factory=list)  # a heap
    ongoing_aborted: dict[int, _AbortedSeen] = field(default_factory=dict)
    ongoing_committed: set[int] = field(default_factory=set)
    retained: list[AbortedTxn] = field(default_factory=list)

    @classmethod
    def of(cls, aborted: list[AbortedTxn]) -> CleanedTxnState:
        state = cls()
        state.aborted = [(t.first_offset, i, t) for i, t in enumerate(aborted)]
        heapq.heapify(state.aborted)
        return state

    def _consume_up_to(self, offset: int) -> None:
        while self.aborted and self.aborted[0][0] <= offset:
            _, _, txn = heapq.heappop(self.aborted)
            self.ongoing_aborted.setdefault(txn.producer_id, _AbortedSeen(txn))

    def on_batch(self, h: BatchHeader) -> bool:
        """A data batch: True when it belongs to an aborted transaction (discardable)."""
        self._consume_up_to(h.last_offset)
        if not h.is_transactional:
            return False
        seen = self.ongoing_aborted.get(h.producer_id)
        if seen is not None:
            seen.last_seen_batch = h.last_offset
            return True
        self.ongoing_committed.add(h.producer_id)
        return False

    def on_control_batch(self, h: BatchHeader, data: bytes) -> bool:
        """A control batch: True when it may be discarded (subject to its delete horizon)."""
        self._consume_up_to(h.last_offset)
        if h.records_count == 0:
            return True  # emptied by an earlier cleaning
        try:
            records = decode_records(data)
            ctype = control_type_of(records[0].key) if records else None
        except RecordBatchError:
            return False  # unreadable: keep it, as Kafka keeps unknown control types
        if ctype == ABORT:
            seen = self.ongoing_aborted.pop(h.producer_id, None)
            if seen is not None and seen.last_seen_batch is not None:
                self.retained.append(seen.txn)
                return False
            return True
        if ctype == COMMIT:
            if h.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(h.producer_id)
                return False
            return True
        return False
