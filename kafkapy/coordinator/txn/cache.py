"""Which transactional ids this coordinator serves: the __transaction_state partitions it leads
(with their coordinator epoch, the partition's leader epoch) and their loaded metadata.

A partition is *loading* from the moment leadership is gained until its records are replayed
(requests get COORDINATOR_LOAD_IN_PROGRESS), then *owned*; a partition neither loading nor owned
answers NOT_COORDINATOR. A load only takes effect if the partition is still loading at the same
coordinator epoch when it completes (leadership may have moved meanwhile), as in Kafka's
TransactionStateManager.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kafkapy.coordinator.group.partitioning import partition_for
from kafkapy.protocol.errors import ErrorCode

from .metadata import TxnMetadata
from .records import RecordFormatError, decode_key, decode_state

log = logging.getLogger("kafkapy.coordinator.txn")


@dataclass(slots=True)
class OwnedPartition:
    coordinator_epoch: int
    txns: dict[str, TxnMetadata] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Entry:
    """A transactional id's metadata with the coordinator epoch it was read under."""

    coordinator_epoch: int
    metadata: TxnMetadata


class TxnCache:
    def __init__(self, num_partitions: int) -> None:
        self.num_partitions = num_partitions
        self.owned: dict[int, OwnedPartition] = {}
        self.loading: dict[int, int] = {}  # partition -> coordinator epoch being loaded

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    # -- lookups --------------------------------------------------------------------------------
    def get(self, transactional_id: str) -> Entry | ErrorCode | None:
        """The id's entry; None if this coordinator owns its partition but has no such id; an
        error (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR) when it cannot tell."""
        p = self.partition_for(transactional_id)
        if p in self.loading:
            return ErrorCode.coordinator_load_in_progress
        owned = self.owned.get(p)
        if owned is None:
            return ErrorCode.not_coordinator
        md = owned.txns.get(transactional_id)
        return None if md is None else Entry(owned.coordinator_epoch, md)

    def put_if_absent(self, md: TxnMetadata) -> Entry | ErrorCode:
        got = self.get(md.transactional_id)
        if got is not None:
            return got
        owned = self.owned[self.partition_for(md.transactional_id)]
        owned.txns[md.transactional_id] = md
        return Entry(owned.coordinator_epoch, md)

    def remove(self, transactional_id: str) -> None:
        owned = self.owned.get(self.partition_for(transactional_id))
        if owned is not None:
            owned.txns.pop(transactional_id, None)

    def entries(self) -> Iterator[tuple[int, Entry]]:
        """(partition, entry) of every loaded id."""
        for p, owned in list(self.owned.items()):
            for md in list(owned.txns.values()):
                yield p, Entry(owned.coordinator_epoch, md)

    def coordinator_epoch(self, partition: int) -> int | None:
        owned = self.owned.get(partition)
        return None if owned is None else owned.coordinator_epoch

    # -- leadership -------------------------------------------------------------------------------
    def begin_loading(self, partition: int, coordinator_epoch: int) -> None:
        self.owned.pop(partition, None)
        self.loading[partition] = coordinator_epoch

    def complete_loading(
        self,
        partition: int,
        coordinator_epoch: int,
        records: Iterable[tuple[bytes, bytes | None]],
    ) -> OwnedPartition | None:
        """Replay a partition's records (oldest first: the last value per id wins, a tombstone
        removes it); None if the load is stale (leadership changed meanwhile)."""
        if self.loading.get(partition) != coordinator_epoch:
            return None
        txns: dict[str, TxnMetadata] = {}
        for key, value in records:
            try:
                txn_id = decode_key(key)
                if txn_id is None:
                    continue  # a key version this broker does not know: skipped, as Kafka does
                md = decode_state(txn_id, value)
            except RecordFormatError as e:
                log.warning("skipping undecodable record partition=%d error=%s", partition, e)
                continue
            if md is None:
                txns.pop(txn_id, None)
            else:
                txns[txn_id] = md
        del self.loading[partition]
        owned = self.owned[partition] = OwnedPartition(coordinator_epoch, txns)
        return owned

    def unload(self, partition: int) -> None:
        self.loading.pop(partition, None)
        self.owned.pop(partition, None)
