"""Helpers shared by the group APIs (not an API itself): the group service, client identity,
millisecond conversions, the topic-existence filter Kafka applies before the coordinator, the
group authorization check (READ for membership and commits, DESCRIBE to look, DELETE to delete:
GROUP_AUTHORIZATION_FAILED otherwise, before anything else about the group is examined), and the
parts OffsetCommit and TxnOffsetCommit share (requested offsets, the replication wait, the
per-partition answer)."""

from __future__ import annotations

import datetime
from types import SimpleNamespace
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..security.authorization import GROUP, READ, AclOperation, authorize

_MS = datetime.timedelta(milliseconds=1)


def service(ctx: Any) -> Any:
    return ctx.broker.groups


def coordinator(ctx: Any) -> Any:
    return ctx.broker.groups.coordinator


def ms(value: datetime.timedelta | int | None, default: int = -1) -> int:
    if value is None:
        return default
    if isinstance(value, datetime.timedelta):
        return value // _MS
    return int(value)


def client_host(ctx: Any) -> str:
    """As Kafka reports it (InetAddress.toString): "/127.0.0.1"."""
    host = ctx.peer.rsplit(":", 1)[0] if ":" in ctx.peer else ctx.peer
    return "/" + host.strip("[]")


def client_id(ctx: Any) -> str:
    return ctx.header.client_id or ""


def partition_exists(ctx: Any, topic: str, partition: int) -> bool:
    info = ctx.broker.topics.get(topic)
    return info is not None and partition in info.partitions


UNKNOWN_TOPIC = ErrorCode.unknown_topic_or_partition

GROUP_DENIED = ErrorCode.group_authorization_failed
TOPIC_DENIED = ErrorCode.topic_authorization_failed


def group_denied(ctx: Any, group_id: str, operation: AclOperation = READ) -> bool:
    """True when the request may not perform ``operation`` on the group."""
    return not authorize(ctx, operation, GROUP, group_id)


def requested_offsets(
    ctx: Any, group_id: str, topics: Any, denied: int | None = None
) -> tuple[dict, dict]:
    """(offsets to commit as CommitOffset, errors of the partitions that are not committed).

    As Kafka, in this order: ``denied`` (an error for the whole request found by the caller),
    READ on the group (GROUP_AUTHORIZATION_FAILED on every partition), READ on each topic
    (TOPIC_AUTHORIZATION_FAILED on its partitions), then UNKNOWN_TOPIC_OR_PARTITION.
    """
    from kafkapy.coordinator.group.offsets import CommitOffset

    from ..security.authorization import TOPIC, authorized_names

    if denied is None and group_denied(ctx, group_id):
        denied = GROUP_DENIED
    names = () if denied is not None else (t.name for t in topics)
    allowed = authorized_names(ctx, READ, TOPIC, names)
    offsets: dict[tuple[str, int], CommitOffset] = {}
    errors: dict[tuple[str, int], int] = {}
    for t in topics:
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if denied is not None:
                errors[tp] = denied
                continue
            if t.name not in allowed:
                errors[tp] = TOPIC_DENIED
                continue
            if not partition_exists(ctx, t.name, p.partition_index):
                errors[tp] = UNKNOWN_TOPIC
                continue
            offsets[tp] = CommitOffset(
                p.committed_offset,
                getattr(p, "committed_leader_epoch", -1),
                p.committed_metadata,
            )
    return offsets, errors


async def replicated_results(svc: Any, group_id: str, results: dict) -> dict:
    """The answers once what was written reached the ISR (the write's error where it did not)."""
    svc.kick()
    if any(e == 0 for e in results.values()):
        err = await svc.replicated(group_id)
        if err:
            return {tp: e or err for tp, e in results.items()}
    return results


def partition_errors(topic_cls: Any, partition_cls: Any, topics: Any, errors: dict) -> tuple:
    """The per-topic, per-partition error answer in the request's order."""
    from ..responses import build

    return tuple(
        build(
            topic_cls,
            name=t.name,
            partitions=tuple(
                build(
                    partition_cls,
                    partition_index=p.partition_index,
                    error_code=errors[(t.name, p.partition_index)],
                )
                for p in t.partitions
            ),
        )
        for t in topics
    )


def topic_names_by_id(ctx: Any, topics: Any) -> list[str | None]:
    """Topics named by id (OffsetCommit v10+, TxnOffsetCommit v6+): the name of each request
    topic's id, None where the id is unknown."""
    by_id = ctx.broker.topics.get_by_id
    infos = [by_id(t.topic_id) if t.topic_id is not None else None for t in topics]
    return [info.name if info is not None else None for info in infos]


def named_topics(ctx: Any, request_topics: Any, by_id: bool) -> tuple[list[str | None], Any]:
    """(each topic's name by its id, the request's topics that have a name) for a request that
    names topics by id; ([], the topics) for one that names them by name."""
    if not by_id:
        return [], request_topics
    names = topic_names_by_id(ctx, request_topics)
    topics = [
        SimpleNamespace(name=name, partitions=t.partitions)
        for t, name in zip(request_topics, names, strict=True)
        if name is not None
    ]
    return names, topics


def by_id_response(
    topic_cls: Any,
    partition_cls: Any,
    request_topics: Any,
    names: list[str | None],
    errors: dict,
    unknown_error: int,
) -> tuple:
    """The per-topic answer with topics named by id: those whose id is unknown first (with
    ``unknown_error``), then the others in the request's order, as Kafka's response builder adds
    errors before merging the coordinator's results."""
    from ..responses import build

    order = sorted(range(len(names)), key=lambda i: names[i] is not None)
    return tuple(
        build(
            topic_cls,
            topic_id=request_topics[i].topic_id,
            partitions=tuple(
                build(
                    partition_cls,
                    partition_index=p.partition_index,
                    error_code=unknown_error
                    if names[i] is None
                    else errors[(names[i], p.partition_index)],
                )
                for p in request_topics[i].partitions
            ),
        )
        for i in order
    )


def share_listed(share: Any, states: set[str] | None, types: set[str] | None) -> list:
    """ListGroups' rows of the share groups (KIP-932), filtered as the other groups are."""
    from kafkapy.coordinator.group.admin import ListedGroup
    from kafkapy.coordinator.share.groups import GROUP_TYPE, PROTOCOL_TYPE

    lowered = {s.lower() for s in states} if states else None
    if types and GROUP_TYPE not in {t.lower() for t in types}:
        return []
    return [
        ListedGroup(g.group_id, PROTOCOL_TYPE, g.state, GROUP_TYPE)
        for g in share.listed()
        if lowered is None or g.state.lower() in lowered
    ]
