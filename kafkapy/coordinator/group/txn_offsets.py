"""Offsets committed inside a transaction (TxnOffsetCommit, KIP-98/KIP-447), sans-io.

A transactional producer commits a group's offsets with TxnOffsetCommit after AddOffsetsToTxn
put the group's __consumer_offsets partition in its transaction. The commit is validated as an
OffsetCommit is, with the transactional variant of the member checks (KIP-447: generation and
member id fence zombies of a consumer group; a commit without them is allowed), written as the
usual offset records in a *transactional* batch of the producer (so the transaction's marker on
that partition decides, on every replica and after every restart, whether they count), and held
as *pending* offsets of that producer: invisible to OffsetFetch, which answers
UNSTABLE_OFFSET_COMMIT for them when asked for stable offsets (require_stable).

When the marker is written on the group's partition (``complete``, the group hook), a commit
makes them the group's committed offsets, an abort drops them. As in Kafka, whichever record
came later on the log wins: a plain OffsetCommit written after a pending transactional one
*supersedes* it (the commit marker then leaves the plain offset in place), and a tombstone
(OffsetDelete, DeleteGroups) removes pending offsets of its partition. Loading replays the same
rules in log order (``loading``). Offsets with a pending transactional commit do not expire and
keep their group alive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .classic import ClassicGroup
from .consumer import ConsumerGroup
from .member_checks import check_classic_commit, check_consumer_commit
from .offsets import offset_records
from .state import CoordinatorState
from .streams import admin as streams_admin
from .streams.model import StreamsGroup
from .txn_store import TxnAppend, TxnOffsetStore

# TxnOffsetCommit v6+ (KIP-1319) answers GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH, which older
# versions answer as ILLEGAL_GENERATION
KIP_1319_ERRORS_FROM = 6

TopicPartition = tuple[str, int]


@dataclass(slots=True)
class GroupTxnOffsets:
    state: CoordinatorState

    @property
    def store(self) -> TxnOffsetStore:
        return self.state.txn_offsets

    def commit(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: dict[TopicPartition, Any],
        now_ms: int,
        *,
        verification_guard: Any = None,
        api_version: int = 4,
    ) -> dict[TopicPartition, int]:
        """Validate and write a transactional commit (``offsets`` holds CommitOffset values);
        the error of each partition."""
        state = self.state

        def all_(error: int) -> dict[TopicPartition, int]:
            return dict.fromkeys(offsets, error)

        err = state.group_error(group_id)
        if err:
            return all_(err)
        group = state.groups.get(group_id)
        created = False
        if group is None and generation_id >= 0:  # a member's commit to a group that is not
            return all_(
                E.group_id_not_found
                if api_version >= KIP_1319_ERRORS_FROM
                else E.illegal_generation
            )
        if group is None:  # Kafka creates an empty (simple) group to hold the offsets
            group = state.groups[group_id] = ClassicGroup(group_id, now_ms)
            created = True
        if isinstance(group, ConsumerGroup):
            err = check_consumer_commit(
                group, generation_id, member_id, api_version, group_instance_id, transactional=True
            )
            if err == E.stale_member_epoch and api_version < KIP_1319_ERRORS_FROM:
                err = E.illegal_generation
        elif isinstance(group, StreamsGroup):
            checked = streams_admin.check_commit(
                group, generation_id, member_id, 9, group_instance_id, [], transactional=True
            )
            err = checked if isinstance(checked, int) else E.none
            if err == E.stale_member_epoch and api_version < KIP_1319_ERRORS_FROM:
                err = E.illegal_generation
        else:
            err = check_classic_commit(
                group, generation_id, member_id, group_instance_id, transactional=True
            )
        if err:
            if created:
                state.groups.pop(group_id, None)
            return all_(err)
        result, records, updates = offset_records(state, group_id, offsets, now_ms, -1)
        txn = TxnAppend(producer_id, producer_epoch, verification_guard)
        err = state.append(group_id, records, now_ms, txn=txn) if records else E.none
        if err:
            if created:
                state.groups.pop(group_id, None)
            return {**result, **dict.fromkeys(updates, err)}
        for tp, om in updates.items():
            self.store.add(group_id, producer_id, tp, om)
        return {**result, **dict.fromkeys(updates, E.none)}

    def complete(self, partition: int, producer_id: int, committed: bool) -> int:
        """The producer's transaction marker is on __consumer_offsets ``partition``: its pending
        offsets of the groups there become committed, or are dropped. Returns how many offsets
        were applied."""
        state = self.state
        applied = 0
        for gid in sorted(self.store.groups_of.get(producer_id, ())):
            if state.partition_for(gid) != partition:
                continue
            pending = self.store.take(gid, producer_id)
            group = state.groups.get(gid)
            if not committed or group is None:
                continue
            for tp, po in pending.items():
                if not po.superseded:
                    group.offsets[tp] = po.offset
                    applied += 1
        return applied

    def unstable_offsets(self, group_id: str) -> set[TopicPartition]:
        return self.store.unstable(group_id)
