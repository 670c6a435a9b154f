"""Committed offsets of a group (sans-io): OffsetCommit, OffsetFetch and OffsetDelete.

Offsets live with their group (``group.offsets``: (topic, partition) -> ``OffsetAndMetadata``) in
either kind of group; a commit by a simple consumer or an admin client to an unknown group
creates an empty classic group to hold them. Each commit is one __consumer_offsets record per
partition (``records.offset_key``/``offset_value``), written before the offsets become visible;
a deletion is a tombstone. Who may commit is ``member_checks`` (generation or member epoch).
Expiry (offsets.retention.minutes) is ``offset_expiry``.

The API, one method per request:

- ``commit(group_id, generation_id, member_id, group_instance_id, offsets, now_ms, ...)``:
  error per partition;
- ``fetch(group_id, topics, require_stable, member_id, member_epoch)``: (group error, rows);
- ``delete(group_id, partitions, now_ms)``: (group error, error per partition).

Transactional commits (TxnOffsetCommit) are ``txn_offsets``: pending per producer until the
transaction's marker; a plain commit written after a pending one supersedes it, a tombstone
removes it (``TxnOffsetStore``), and the OffsetFetch handler reports partitions with pending
offsets as UNSTABLE_OFFSET_COMMIT when asked for stable offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import records as rec
from .classic import ClassicGroup, GroupState, OffsetAndMetadata
from .classic_rebalance import ClassicRebalance
from .consumer import ConsumerGroup
from .member_checks import check_classic_commit, check_consumer_commit
from .state import CoordinatorState, Records
from .streams import admin as streams_admin
from .streams.model import StreamsGroup

S = GroupState

TopicPartition = tuple[str, int]


@dataclass(slots=True)
class CommitOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


def offset_records(
    state: CoordinatorState,
    group_id: str,
    offsets: dict[TopicPartition, CommitOffset],
    now_ms: int,
    expire: int,
) -> tuple[dict[TopicPartition, int], Records, dict[TopicPartition, OffsetAndMetadata]]:
    """The records of a commit: (OFFSET_METADATA_TOO_LARGE for metadata above
    offset.metadata.max.bytes, the records, the offsets they hold)."""
    refused: dict[TopicPartition, int] = {}
    records: Records = []
    updates: dict[TopicPartition, OffsetAndMetadata] = {}
    for (topic, partition), c in offsets.items():
        metadata = c.metadata or ""
        if len(metadata.encode("utf-8")) > state.config.offset_metadata_max_bytes:
            refused[(topic, partition)] = E.offset_metadata_too_large
            continue
        om = OffsetAndMetadata(c.offset, c.leader_epoch, metadata, now_ms, expire)
        updates[(topic, partition)] = om
        value = rec.OffsetValue(om.offset, om.leader_epoch, metadata, now_ms, expire)
        records.append((rec.offset_key(group_id, topic, partition), rec.offset_value(value)))
    return refused, records, updates


@dataclass(slots=True)
class GroupOffsets:
    state: CoordinatorState
    rebalance: ClassicRebalance

    # ---- OffsetCommit --------------------------------------------------------------------------
    def commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: dict[TopicPartition, CommitOffset],
        now_ms: int,
        *,
        retention_ms: int = -1,
        api_version: int = 9,
    ) -> dict[TopicPartition, int]:
        """Commit offsets; return the error of each partition."""
        state = self.state

        def all_(error: int) -> dict[TopicPartition, int]:
            return dict.fromkeys(offsets, error)

        err = state.group_error(group_id, allow_empty=True)
        if err:
            return all_(err)
        group = state.groups.get(group_id)
        created = False
        refused: dict[TopicPartition, int] = {}
        if group is None:
            if generation_id >= 0:
                return all_(E.group_id_not_found if api_version >= 9 else E.illegal_generation)
            group = state.groups[group_id] = ClassicGroup(group_id, now_ms)
            created = True
        elif isinstance(group, ConsumerGroup):
            err = check_consumer_commit(group, generation_id, member_id, api_version)
            if err:
                return all_(err)
        elif isinstance(group, StreamsGroup):
            checked = streams_admin.check_commit(
                group, generation_id, member_id, api_version, group_instance_id, list(offsets)
            )
            if isinstance(checked, int):
                if checked:
                    return all_(checked)
            else:  # a member at an older epoch: each partition its own answer
                refused = {tp: e for tp, e in checked.items() if e}
                offsets = {tp: c for tp, c in offsets.items() if tp not in refused}
        elif isinstance(group, ClassicGroup):
            err = check_classic_commit(group, generation_id, member_id, group_instance_id)
            if err:
                return all_(err)
            classic_member = group.members.get(member_id)
            if classic_member is not None and generation_id >= 0:
                self.rebalance.schedule_heartbeat(group, classic_member, now_ms)
        expire = now_ms + retention_ms if retention_ms >= 0 else -1
        result, records, updates = offset_records(state, group_id, offsets, now_ms, expire)
        err = state.append(group_id, records, now_ms)
        if err:
            if created:
                state.groups.pop(group_id, None)
            for tp in updates:
                result[tp] = err
            return {**result, **refused}
        group.offsets.update(updates)
        state.txn_offsets.supersede(group_id, updates)
        for tp in updates:
            result[tp] = E.none
        return {**result, **refused}

    # ---- OffsetFetch ---------------------------------------------------------------------------
    def fetch(
        self,
        group_id: str,
        topics: list[tuple[str, list[int]]] | None,
        require_stable: bool = False,
        member_id: str | None = None,
        member_epoch: int = -1,
    ) -> tuple[int, list[tuple[str, int, OffsetAndMetadata | None]]]:
        """(group error, [(topic, partition, committed or None)]); topics None means all.

        ``require_stable`` is answered by the handler (``unstable_offsets``: partitions with a
        pending transactional commit). ``member_id``/``member_epoch`` (OffsetFetch v9)
        are checked for consumer groups, as Kafka does: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH."""
        err = self.state.group_error(group_id, allow_empty=True)
        if err:
            return err, []
        group = self.state.groups.get(group_id)
        if isinstance(group, ConsumerGroup) and not (member_epoch < 0 and member_id is None):
            member = group.members.get(member_id or "")
            if member is None:
                return E.unknown_member_id, []
            if member.member_epoch != member_epoch:
                classic = member.classic is not None
                return (E.illegal_generation if classic else E.stale_member_epoch), []
        if isinstance(group, StreamsGroup):
            err = streams_admin.check_fetch(group, member_id, member_epoch)
            if err:
                return err, []
        if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
            committed = {}
        else:
            committed = group.offsets
        if topics is None:
            return E.none, [(t, p, om) for (t, p), om in sorted(committed.items())]
        return E.none, [(t, p, committed.get((t, p))) for t, parts in topics for p in parts]

    # ---- OffsetDelete --------------------------------------------------------------------------
    def delete(
        self, group_id: str, partitions: list[TopicPartition], now_ms: int
    ) -> tuple[int, dict[TopicPartition, int]]:
        """Delete the offsets of partitions the group does not subscribe to
        (GROUP_SUBSCRIBED_TO_TOPIC otherwise); a classic group of another protocol type than
        "consumer" must be empty (NON_EMPTY_GROUP)."""
        state = self.state
        err = state.group_error(group_id)
        if err:
            return err, {}
        group = state.groups.get(group_id)
        if group is None or (isinstance(group, ClassicGroup) and group.is_in(S.DEAD)):
            return E.group_id_not_found, {}
        if isinstance(group, ConsumerGroup):
            subscribed = group.subscribed_topic_names(state.regex_topics)

            def is_subscribed(topic: str) -> bool:
                return topic in subscribed
        elif isinstance(group, StreamsGroup):
            is_subscribed = group.is_subscribed_to
        else:
            if not group.is_in(S.EMPTY) and group.protocol_type != "consumer":
                return E.non_empty_group, {}
            is_subscribed = group.is_subscribed_to
        result: dict[TopicPartition, int] = {}
        records: Records = []
        for topic, partition in partitions:
            if is_subscribed(topic):
                result[(topic, partition)] = E.group_subscribed_to_topic
                continue
            result[(topic, partition)] = E.none
            if (topic, partition) in group.offsets:
                records.append((rec.offset_key(group_id, topic, partition), None))
        err = state.append(group_id, records, now_ms)
        if err:
            return err, {}
        for tp, e in result.items():
            if e == E.none and group.offsets.pop(tp, None) is not None:
                state.txn_offsets.remove(group_id, [tp])
        return E.none, result
