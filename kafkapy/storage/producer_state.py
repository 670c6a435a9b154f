"""Idempotent-producer state of one partition (Kafka's ProducerStateManager, reduced).

Per producer id: the current epoch and the metadata of its last five batches (first/last
sequence and offset), enough to answer a retried batch with its original offsets and to
reject gaps (OUT_OF_ORDER_SEQUENCE_NUMBER) and zombies (INVALID_PRODUCER_EPOCH). The state is
rebuilt from batch headers when a log opens, so it survives restarts and kill -9 alike.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkapy.protocol.record_batch import NO_SEQUENCE, BatchHeader
from kafkapy.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError

MAX_CACHED_BATCHES = 5
INT32_MAX = 2**31 - 1

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

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def find_duplicate(self, h: BatchHeader) -> BatchMetadata | None:
        if h.producer_epoch != self.epoch:
            return None
        last_seq = h.last_sequence
        for b in self.batches:
            if b.first_seq == h.base_sequence and b.last_seq == last_seq:
                return b
        return None


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """Producer entries keyed by producer id."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def check(self, headers: Sequence[BatchHeader]) -> BatchMetadata | None:
        """Validate a client append before it is written. Returns the original batch's
        metadata when one batch is a retry (the whole append is then a duplicate)."""
        pending: dict[int, tuple[int, int]] = {}  # pid -> (epoch, last seq) within the append
        for h in headers:
            pid = h.producer_id
            if pid < 0:
                continue
            entry = self.producers.get(pid)
            if entry is not None and pid not in pending:
                dup = entry.find_duplicate(h)
                if dup is not None:
                    return dup
            if pid in pending:
                cur_epoch, cur_last = pending[pid]
            elif entry is not None:
                cur_epoch, cur_last = entry.epoch, entry.last_seq
            else:
                cur_epoch, cur_last = -1, NO_SEQUENCE
            if h.producer_epoch < cur_epoch:
                raise InvalidProducerEpochError(
                    f"producer {pid} epoch {h.producer_epoch} is older than {cur_epoch}"
                )
            seq = h.base_sequence
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
            pending[pid] = (h.producer_epoch, h.last_sequence)
        return None

    def update(self, h: BatchHeader, first_offset: int) -> None:
        """Record an appended batch whose first offset is ``first_offset``."""
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
        if h.is_control or h.base_sequence == NO_SEQUENCE:
            return
        entry.batches.append(
            BatchMetadata(
                h.base_sequence, h.last_sequence, first_offset, first_offset + h.last_offset_delta
            )
        )

    def rebuild(self, headers: Iterable[BatchHeader]) -> None:
        """Replace the state with what the given (already offset-stamped) batches imply."""
        self.producers.clear()
        for h in headers:
            if h.producer_id >= 0:
                self.update(h, h.base_offset)
