"""Loading a __consumer_offsets partition (sans-io): replay its records and start serving its
groups.

A partition this broker comes to lead is first marked loading (its groups answer
COORDINATOR_LOAD_IN_PROGRESS), then its records are replayed in log order: the last value of
each key wins and a tombstone removes it. A group is of the kind of its last metadata record
(GroupMetadata: classic; ConsumerGroupMetadata: consumer); offsets are attached to their group,
or to an empty classic group created for them. Loaded members' sessions start at load time.
Records of kinds this broker does not know are skipped (counted in one log line), undecodable
ones too (one warning each).

Offsets committed in transactions (``txn_offsets``) come in transactional batches: a record is
then ``(key, value, producer id, None)`` and a transaction marker ``(None, None, producer id,
committed)``. A producer's offsets stay pending until its marker: a commit applies those not
superseded by a later plain commit of the same partition, an abort drops them; offsets still
pending at the end of the log are loaded as pending.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import records as rec
from .classic import ClassicGroup, ClassicMember, GroupState, OffsetAndMetadata
from .classic_rebalance import ClassicRebalance
from .consumer import ClassicMetadata, ConsumerGroup, ConsumerMember, MemberState
from .consumer_sessions import ConsumerSessions
from .offset_expiry import OffsetExpiry
from .state import CoordinatorState

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")


@dataclass(slots=True)
class PartitionLoader:
    state: CoordinatorState
    rebalance: ClassicRebalance
    sessions: ConsumerSessions
    expiry: OffsetExpiry

    def begin_loading(self, partitions: Iterable[int]) -> None:
        self.state.loading.update(partitions)

    def add_empty_partitions(self, partitions: Iterable[int], now_ms: int) -> None:
        """Partitions just created: nothing to load."""
        for p in partitions:
            self.state.loading.discard(p)
            self.state.owned.add(p)
        self.expiry.ensure_timer(now_ms)

    def load_partition(self, partition: int, records: Iterable[tuple], now_ms: int) -> None:
        """Replay a partition's records (in log order) and start serving its groups. Each item
        is ``(key, value)``, or ``(key, value, producer id, marker)`` from transactional batches
        (see the module docstring)."""
        state = self.state
        metas: dict[str, rec.GroupValue | None] = {}
        offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata]] = {}
        offsets_at: dict[tuple[str, tuple[str, int]], int] = {}  # position of the plain offset
        pending: dict[int, dict[tuple[str, tuple[str, int]], tuple[int, OffsetAndMetadata]]] = {}
        modern: dict[str, dict] = {}
        kind_at: dict[str, tuple[int, str]] = {}  # group -> (position, kind) of its last metadata
        skipped = 0
        for pos, item in enumerate(records):
            key_bytes, value_bytes = item[0], item[1]
            producer_id = item[2] if len(item) > 2 else -1
            if len(item) > 3 and item[3] is not None:  # a transaction marker
                ended = pending.pop(producer_id, {})
                if item[3]:
                    for (gid, tp), (at, om) in ended.items():
                        if offsets_at.get((gid, tp), -1) < at:
                            offsets.setdefault(gid, {})[tp] = om
                            offsets_at[(gid, tp)] = at
                continue
            try:
                key = rec.decode_key(key_bytes)
                if key is None:
                    skipped += 1
                elif isinstance(key, rec.ConsumerKey):
                    value = (
                        None
                        if value_bytes is None
                        else rec.decode_consumer_value(key.kind, value_bytes)
                    )
                    recs = modern.setdefault(key.group, {})
                    if key.member_id is None:
                        recs[key.kind] = value
                    else:
                        recs.setdefault(key.kind, {})[key.member_id] = value
                    if key.kind == rec.GROUP_EPOCH and value is not None:
                        kind_at[key.group] = (pos, "consumer")
                elif isinstance(key, rec.OffsetKey):
                    group_offsets = offsets.setdefault(key.group, {})
                    tp = (key.topic, key.partition)
                    gtp = (key.group, tp)
                    om = None
                    if value_bytes is not None:
                        v = rec.decode_offset_value(value_bytes)
                        om = OffsetAndMetadata(
                            v.offset,
                            v.leader_epoch,
                            v.metadata,
                            v.commit_timestamp,
                            v.expire_timestamp,
                        )
                    if producer_id >= 0:  # in a transaction: pending until its marker
                        if om is None:
                            pending.setdefault(producer_id, {}).pop(gtp, None)
                        else:
                            pending.setdefault(producer_id, {})[gtp] = (pos, om)
                    elif om is None:
                        group_offsets.pop(tp, None)
                        offsets_at.pop(gtp, None)
                        for entries in pending.values():  # a tombstone removes pending ones
                            entries.pop(gtp, None)
                    else:
                        group_offsets[tp] = om
                        offsets_at[gtp] = pos
                else:
                    metas[key.group] = (
                        None if value_bytes is None else rec.decode_group_value(value_bytes)
                    )
                    if value_bytes is not None:
                        kind_at[key.group] = (pos, "classic")
            except rec.RecordFormatError as e:
                skipped += 1
                log.warning("skipping undecodable record partition=%d error=%s", partition, e)
        if skipped:
            log.info("skipped %d records of other kinds partition=%d", skipped, partition)
        for gid, value in metas.items():
            if value is not None and kind_at.get(gid, (0, "classic"))[1] == "classic":
                state.groups[gid] = classic_group_from_record(gid, value, now_ms)
        for gid, cgroup in consumer_groups_from_records(modern).items():
            if kind_at.get(gid, (0, "consumer"))[1] == "consumer":
                state.groups[gid] = cgroup
                self.sessions.start_group(cgroup, now_ms)
        for gid, tps in offsets.items():
            if not tps:
                continue
            group = state.groups.get(gid)
            if group is None:
                group = state.groups[gid] = ClassicGroup(gid, now_ms)
            group.offsets.update(tps)
        for producer_id, entries in pending.items():
            for (gid, tp), (at, om) in entries.items():
                if gid not in state.groups:
                    state.groups[gid] = ClassicGroup(gid, now_ms)
                later_plain = offsets_at.get((gid, tp), -1) > at
                state.txn_offsets.add(gid, producer_id, tp, om, superseded=later_plain)
        state.loading.discard(partition)
        state.owned.add(partition)
        for group in state.groups.values():
            if isinstance(group, ClassicGroup) and state.partition_for(group.group_id) == partition:
                for member in group.members.values():
                    self.rebalance.schedule_heartbeat(group, member, now_ms)
        self.expiry.ensure_timer(now_ms)


def classic_group_from_record(gid: str, v: rec.GroupValue, now_ms: int) -> ClassicGroup:
    """A classic group as its GroupMetadata record left it: Stable with members, else Empty."""
    group = ClassicGroup(gid, now_ms, S.STABLE if v.members else S.EMPTY)
    group.state_timestamp = v.current_state_timestamp if v.current_state_timestamp >= 0 else -1
    group.generation_id = v.generation
    group.protocol_type = v.protocol_type or None
    group.protocol_name = v.protocol
    for m in v.members:
        member = ClassicMember(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
            m.session_timeout,
            v.protocol_type,
            [(v.protocol or "", m.subscription)],
            m.assignment,
        )
        group.add(member)
    group.protocol_type = v.protocol_type or None
    group.leader_id = v.leader if v.leader in group.members else group.leader_id
    return group


def consumer_groups_from_records(items: dict[str, dict[str, Any]]) -> dict[str, ConsumerGroup]:
    """Build groups from the latest value of each of their records (tombstones removed)."""
    out: dict[str, ConsumerGroup] = {}
    for gid, recs in items.items():
        epoch = recs.get(rec.GROUP_EPOCH)
        if epoch is None:
            continue
        group = ConsumerGroup(gid)
        group.group_epoch = epoch["epoch"]
        target_meta = recs.get(rec.TARGET_EPOCH)
        group.assignment_epoch = target_meta["assignment_epoch"] if target_meta else 0
        pmeta = recs.get(rec.PARTITION_METADATA)
        if pmeta:
            group.subscription_metadata = {
                t["topic_name"]: (t["topic_id"], t["num_partitions"]) for t in pmeta["topics"]
            }
        for mid, v in recs.get(rec.TARGET_MEMBER, {}).items():
            if v is not None:
                group.target[mid] = rec.assignment_from(v["topic_partitions"])
        currents = recs.get(rec.CURRENT_ASSIGNMENT, {})
        for mid, v in recs.get(rec.MEMBER_METADATA, {}).items():
            if v is None:
                continue
            member = ConsumerMember(
                mid,
                instance_id=v["instance_id"],
                rack_id=v["rack_id"],
                client_id=v["client_id"],
                client_host=v["client_host"],
                subscribed_topic_names=tuple(v["subscribed_topic_names"]),
                subscribed_topic_regex=v["subscribed_topic_regex"],
                server_assignor=v["server_assignor"],
                rebalance_timeout_ms=v["rebalance_timeout_ms"],
                classic=_classic_from_record(v.get("classic_member_metadata")),
            )
            c = currents.get(mid)
            if c is not None:
                member.member_epoch = c["member_epoch"]
                member.previous_member_epoch = c["previous_member_epoch"]
                try:
                    member.state = MemberState(c["state"])
                except ValueError:
                    member.state = MemberState.UNKNOWN
                member.assigned = rec.assignment_from(c["assigned_partitions"])
                member.pending_revocation = rec.assignment_from(c["partitions_pending_revocation"])
            group.put_member(member)
        group.target = {mid: a for mid, a in group.target.items() if mid in group.members}
        out[gid] = group
    return out


def _classic_from_record(v: dict | None) -> ClassicMetadata | None:
    if v is None:
        return None
    protocols = tuple((p["name"], p["metadata"] or b"") for p in v["supported_protocols"] or ())
    if not protocols:
        return None
    return ClassicMetadata(v["session_timeout_ms"], protocols)
