"""What the other group APIs do with a streams group (sans-io): StreamsGroupDescribe, and the
checks OffsetCommit and OffsetFetch make of a streams group member (Kafka 4.4's
StreamsGroup.validateOffsetCommit and validateOffsetFetch).

A commit with a negative member epoch is an admin client's, allowed while the group is empty;
otherwise the member must exist (UNKNOWN_MEMBER_ID), commit with OffsetCommit v9 or later
(UNSUPPORTED_VERSION), and with its current epoch or, for each partition, an epoch no older than
the one at which it got the task reading that partition (STALE_MEMBER_EPOCH). A fetch naming a
member must name its current epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode as E

from ..state import CoordinatorState
from .assignor import NAME as ASSIGNOR
from .model import StreamsGroup, TasksTuple


@dataclass(slots=True)
class StreamsDescription:
    error: int
    group_id: str
    message: str | None = None
    group: StreamsGroup | None = None
    assignor: str | None = None
    targets: dict[str, TasksTuple] = field(default_factory=dict)


def describe(state: CoordinatorState, group_id: str) -> StreamsDescription:
    if not group_id:
        return StreamsDescription(E.invalid_group_id, group_id)
    err = state.partition_error(group_id)
    if err:
        return StreamsDescription(err, group_id)
    group = state.groups.get(group_id)
    if group is None:
        return StreamsDescription(E.group_id_not_found, group_id, f"Group {group_id} not found.")
    if not isinstance(group, StreamsGroup):
        return StreamsDescription(
            E.group_id_not_found, group_id, f"Group {group_id} is not a streams group."
        )
    return StreamsDescription(
        E.none, group_id, group=group, assignor=ASSIGNOR, targets=group.target
    )


def check_commit(
    group: StreamsGroup,
    member_epoch: int,
    member_id: str,
    api_version: int,
    instance_id: str | None,
    partitions: list[tuple[str, int]],
    *,
    transactional: bool = False,
) -> dict[tuple[str, int], int] | int:
    """The error of the whole commit (an int), or each partition's error (a dict)."""
    if member_epoch < 0 and not group.members:
        return E.none
    if transactional and member_epoch == -1 and not member_id and instance_id is None:
        return E.none
    member = group.members.get(member_id)
    if member is None:
        return E.unknown_member_id
    if not transactional and api_version < 9:
        return E.unsupported_version
    if member_epoch == member.member_epoch:
        return E.none
    if member_epoch > member.member_epoch or group.topology is None:
        return E.stale_member_epoch
    sources = group.topology.source_topic_map()
    out: dict[tuple[str, int], int] = {}
    for topic, partition in partitions:
        sub = sources.get(topic)
        epoch = None if sub is None else member.active_epochs.get((sub.subtopology_id, partition))
        ok = epoch is not None and member_epoch >= epoch
        out[(topic, partition)] = E.none if ok else E.stale_member_epoch
    return out


def check_fetch(group: StreamsGroup, member_id: str | None, member_epoch: int) -> int:
    if member_id is None and member_epoch < 0:
        return E.none
    member = group.members.get(member_id or "")
    if member is None:
        return E.unknown_member_id
    if member.member_epoch != member_epoch:
        return E.stale_member_epoch
    return E.none
