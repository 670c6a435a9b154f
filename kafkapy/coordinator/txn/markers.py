"""The bookkeeping of one transaction's markers (Kafka's TransactionMarkerChannelManager and
its completion handler, without the network).

After PrepareCommit/PrepareAbort is written, a ``MarkerJob`` tracks the partitions that still
need a marker: the metadata's partition set shrinks as leaders confirm them. Each answer from a
partition leader is classified by ``on_marker_result``: written (the partition is done), retry
(the leader moved, is not in sync yet, timed out: look it up again), or cancel (this broker no
longer coordinates the id, its coordinator epoch changed, or the leader saw a newer producer or
coordinator epoch: the transaction belongs to someone else now). Once no partition is left the
job's ``complete`` transition (CompleteCommit/CompleteAbort) is written.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode

from .cache import Entry
from .coordinator import Prepared, TxnCoordinator
from .metadata import TopicPartition, TxnMetadata

log = logging.getLogger("kafkapy.coordinator.txn")


class Outcome(enum.Enum):
    WRITTEN = "written"
    RETRY = "retry"
    CANCEL = "cancel"


RETRIABLE = frozenset(
    {
        ErrorCode.unknown_topic_or_partition,
        ErrorCode.not_leader_or_follower,
        ErrorCode.not_enough_replicas,
        ErrorCode.not_enough_replicas_after_append,
        ErrorCode.request_timed_out,
        ErrorCode.kafka_storage_error,
        ErrorCode.coordinator_load_in_progress,
    }
)
FENCED = frozenset({ErrorCode.invalid_producer_epoch, ErrorCode.transaction_coordinator_fenced})
# the partition cannot hold the transaction's data at all: nothing to mark
SKIPPED = frozenset({ErrorCode.unsupported_for_message_format, ErrorCode.unsupported_version})


@dataclass(slots=True)
class MarkerJob:
    transactional_id: str
    coordinator_epoch: int
    producer_id: int
    producer_epoch: int
    commit: bool
    metadata: TxnMetadata
    complete: Prepared
    cancelled: bool = False
    transaction_version: int = 0  # the client's: 2 makes the leaders check the bumped epoch

    @classmethod
    def start(cls, entry: Entry, commit: bool, complete: Prepared) -> MarkerJob:
        md = entry.metadata
        return cls(
            md.transactional_id,
            entry.coordinator_epoch,
            md.producer_id,
            md.producer_epoch,
            commit,
            md,
            complete,
            transaction_version=md.client_transaction_version,
        )

    @property
    def remaining(self) -> set[TopicPartition]:
        return set(self.metadata.partitions)

    @property
    def finished(self) -> bool:
        """Every marker written: the completion can be written."""
        return not self.cancelled and not self.metadata.partitions

    def still_coordinated(self, coordinator: TxnCoordinator) -> bool:
        """False (and the job cancelled) once another coordinator (epoch) owns the id."""
        got = coordinator.cache.get(self.transactional_id)
        if not isinstance(got, Entry) or got.coordinator_epoch != self.coordinator_epoch:
            self.cancelled = True
        return not self.cancelled

    def on_marker_result(
        self, coordinator: TxnCoordinator, tp: TopicPartition, error: ErrorCode
    ) -> Outcome:
        if self.cancelled or not self.still_coordinated(coordinator):
            return Outcome.CANCEL
        if error == ErrorCode.none or error in SKIPPED:
            if error != ErrorCode.none:
                log.info(
                    "transactional.id=%s marker for %s-%d not written (%s): partition skipped",
                    self.transactional_id,
                    *tp,
                    ErrorCode(error).name,
                )
            self.metadata.remove_partition(tp)
            return Outcome.WRITTEN
        if error in FENCED:
            log.info(
                "transactional.id=%s marker for %s-%d refused (%s): no more markers sent",
                self.transactional_id,
                *tp,
                ErrorCode(error).name,
            )
            self.cancelled = True
            return Outcome.CANCEL
        if error not in RETRIABLE:
            log.warning(
                "transactional.id=%s marker for %s-%d failed with unexpected %s; retrying",
                self.transactional_id,
                *tp,
                ErrorCode(error).name,
            )
        return Outcome.RETRY

    def partition_gone(self, coordinator: TxnCoordinator, tp: TopicPartition) -> None:
        """The partition has no leader endpoint because it no longer exists: no marker."""
        if self.still_coordinated(coordinator):
            log.info(
                "transactional.id=%s: %s-%d no longer exists, no marker needed",
                self.transactional_id,
                *tp,
            )
            self.metadata.remove_partition(tp)
