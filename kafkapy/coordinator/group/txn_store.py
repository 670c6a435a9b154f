"""The pending transactional offsets of the groups this coordinator serves (see txn_offsets):
group -> producer id -> partition -> offset, with the index of groups per producer that the
transaction markers are routed by, and what a later plain commit or tombstone does to them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .classic import OffsetAndMetadata

TopicPartition = tuple[str, int]


@dataclass(slots=True)
class PendingOffset:
    offset: OffsetAndMetadata
    superseded: bool = False  # a plain commit of the partition was written after it


@dataclass(frozen=True, slots=True)
class TxnAppend:
    """How a transactional commit's batch is written: the producer's id and epoch, and the
    server's KIP-890 verification guard for it (opaque here)."""

    producer_id: int
    producer_epoch: int
    verification_guard: Any = None


@dataclass(slots=True)
class TxnOffsetStore:
    """Pending transactional offsets: group -> producer id -> partition -> offset."""

    pending: dict[str, dict[int, dict[TopicPartition, PendingOffset]]] = field(default_factory=dict)
    groups_of: dict[int, set[str]] = field(default_factory=dict)  # producer id -> groups

    def add(
        self,
        group_id: str,
        producer_id: int,
        tp: TopicPartition,
        om: OffsetAndMetadata,
        superseded: bool = False,
    ) -> None:
        by_tp = self.pending.setdefault(group_id, {}).setdefault(producer_id, {})
        by_tp[tp] = PendingOffset(om, superseded)
        self.groups_of.setdefault(producer_id, set()).add(group_id)

    def unstable(self, group_id: str) -> set[TopicPartition]:
        """Partitions of the group with a pending transactional commit."""
        return {tp for by_tp in self.pending.get(group_id, {}).values() for tp in by_tp}

    def supersede(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        """A plain commit of ``tps`` was written after the pending ones."""
        tps = set(tps)
        for by_tp in self.pending.get(group_id, {}).values():
            for tp in tps & by_tp.keys():
                by_tp[tp].superseded = True

    def remove(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        """Tombstones of ``tps`` were written: their pending offsets are gone too."""
        tps = set(tps)
        for by_tp in self.pending.get(group_id, {}).values():
            for tp in tps:
                by_tp.pop(tp, None)

    def take(self, group_id: str, producer_id: int) -> dict[TopicPartition, PendingOffset]:
        """The producer's pending offsets of the group, forgotten."""
        by_producer = self.pending.get(group_id, {})
        got = by_producer.pop(producer_id, {})
        if not by_producer:
            self.pending.pop(group_id, None)
        groups = self.groups_of.get(producer_id)
        if groups is not None:
            groups.discard(group_id)
            if not groups:
                del self.groups_of[producer_id]
        return got

    def drop_groups(self, group_ids: Iterable[str]) -> None:
        """Forget the groups (their partition's leadership moved, or they were deleted)."""
        for gid in list(group_ids):
            for pid in list(self.pending.get(gid, {})):
                self.take(gid, pid)
