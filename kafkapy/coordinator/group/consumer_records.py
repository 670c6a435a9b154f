"""The __consumer_offsets records of a consumer-protocol (KIP-848) group, built from the in-memory
group and members (``consumer``) with the codec of ``records``.

A group is several records, each keyed by the group (and the member where it says so): the group
epoch, the subscribed topics' metadata, each member's subscription (with, for a member using the
classic protocol, its session timeout and JoinGroup protocols), the target assignment (its epoch,
then one record per member) and each member's current assignment. Deleting a member or a group
writes a tombstone for each of its keys, member records before group records.
"""

from __future__ import annotations

import uuid

from . import records as rec
from .consumer import Assignment, ConsumerGroup, ConsumerMember

Record = tuple[bytes, bytes | None]


def member_record(group_id: str, m: ConsumerMember) -> Record:
    """The member's subscription and identity (ConsumerGroupMemberMetadataValue)."""
    classic = None
    if m.classic is not None:
        classic = {
            "session_timeout_ms": m.classic.session_timeout_ms,
            "supported_protocols": [
                {"name": name, "metadata": metadata} for name, metadata in m.classic.protocols
            ],
        }
    return (
        rec.consumer_key(rec.MEMBER_METADATA, group_id, m.member_id),
        rec.consumer_value(
            rec.MEMBER_METADATA,
            {
                "instance_id": m.instance_id,
                "rack_id": m.rack_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex,
                "rebalance_timeout_ms": m.rebalance_timeout_ms,
                "server_assignor": m.server_assignor,
                "classic_member_metadata": classic,
            },
        ),
    )


def current_record(group_id: str, m: ConsumerMember) -> Record:
    return (
        rec.consumer_key(rec.CURRENT_ASSIGNMENT, group_id, m.member_id),
        rec.consumer_value(
            rec.CURRENT_ASSIGNMENT,
            {
                "member_epoch": m.member_epoch,
                "previous_member_epoch": m.previous_member_epoch,
                "state": int(m.state),
                "assigned_partitions": rec.topic_partitions(m.assigned),
                "partitions_pending_revocation": rec.topic_partitions(m.pending_revocation),
            },
        ),
    )


def target_record(group_id: str, member_id: str, a: Assignment) -> Record:
    return (
        rec.consumer_key(rec.TARGET_MEMBER, group_id, member_id),
        rec.consumer_value(rec.TARGET_MEMBER, {"topic_partitions": rec.topic_partitions(a)}),
    )


def target_epoch_record(group_id: str, epoch: int) -> Record:
    return (
        rec.consumer_key(rec.TARGET_EPOCH, group_id),
        rec.consumer_value(rec.TARGET_EPOCH, {"assignment_epoch": epoch}),
    )


def epoch_record(group_id: str, epoch: int) -> Record:
    return (
        rec.consumer_key(rec.GROUP_EPOCH, group_id),
        rec.consumer_value(rec.GROUP_EPOCH, {"epoch": epoch}),
    )


def partition_metadata_record(group_id: str, meta: dict[str, tuple[uuid.UUID, int]]) -> Record:
    return (
        rec.consumer_key(rec.PARTITION_METADATA, group_id),
        rec.consumer_value(
            rec.PARTITION_METADATA,
            {
                "topics": [
                    {
                        "topic_id": tid,
                        "topic_name": name,
                        "num_partitions": n,
                        "partition_metadata": [],
                    }
                    for name, (tid, n) in sorted(meta.items())
                ]
            },
        ),
    )


def member_tombstones(group_id: str, member_id: str) -> list[Record]:
    return [(rec.consumer_key(kind, group_id, member_id), None) for kind in rec.MEMBER_KINDS]


def group_tombstones(group: ConsumerGroup) -> list[Record]:
    out: list[Record] = []
    for mid in group.members:
        out += member_tombstones(group.group_id, mid)
    out += [(rec.consumer_key(kind, group.group_id), None) for kind in rec.GROUP_KINDS]
    return out


def creation_records(group: ConsumerGroup) -> list[Record]:
    """Everything a group built in memory (a converted classic group) needs on the log, in
    Kafka's order: member subscriptions, group epoch, target assignment and its epoch, current
    assignments."""
    gid = group.group_id
    out = [member_record(gid, m) for m in group.members.values()]
    out.append(epoch_record(gid, group.group_epoch))
    out += [target_record(gid, mid, group.target.get(mid, {})) for mid in group.members]
    out.append(target_epoch_record(gid, group.assignment_epoch))
    out += [current_record(gid, m) for m in group.members.values()]
    return out
