"""OffsetFetch (key 9), versions 1-10.

The committed offset, leader epoch (v5+) and metadata of each requested partition; -1 (and
empty metadata) where nothing is committed, including for groups that do not exist. A null
topic list (v2+) returns every committed partition of the group. v1 reports group errors on each
partition; v2-7 also as a top-level error; v8+ asks for several groups at once, each with its own
error. require_stable (v7+): a partition with an offset committed in a transaction that has not
ended yet answers UNSTABLE_OFFSET_COMMIT (offset -1); the client retries. v9 carries a member id
and epoch per group: for a consumer-protocol group they must name a member at its current epoch
(UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH), unless both are absent (-1, null: admin clients).
Errors: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. The empty group id is served as any other,
as Kafka 3.9's ZooKeeper-mode coordinator does ("for backwards compatibility").

Authorization: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED for it) and on each topic:
asked-for topics the request may not describe get TOPIC_AUTHORIZATION_FAILED on their partitions,
and a request for all of a group's offsets leaves those topics out.

From v10 topics are named by id (request and response): each asked-for id is resolved to its topic
once, an unknown id answers UNKNOWN_TOPIC_ID (offset -1) on its partitions; a request for all of a
group's offsets names each topic by its current id and leaves out topics that no longer exist.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TOPIC, authorized_names
from .group_common import GROUP_DENIED, TOPIC_DENIED, coordinator, group_denied

TOPIC_IDS_FROM = 10
UNSTABLE = object()  # a row's offset while a transaction that committed it has not ended


def _fetch(ctx, group_id, topics, require_stable, member_id=None, member_epoch=-1):
    """(group error, rows, topics denied): rows are (topic, partition, committed or None, or
    TOPIC_DENIED, or UNSTABLE when require_stable and a transactional commit is pending)."""
    err, rows, denied = _fetch_rows(ctx, group_id, topics, require_stable, member_id, member_epoch)
    if require_stable and not err:
        unstable = coordinator(ctx).unstable_offsets(group_id)
        if unstable:
            rows = [(t, p, UNSTABLE if (t, p) in unstable else om) for t, p, om in rows]
    return err, rows, denied


def _fetch_rows(ctx, group_id, topics, require_stable, member_id, member_epoch):
    if group_denied(ctx, group_id, DESCRIBE):
        return GROUP_DENIED, [], []
    if topics is None:
        err, rows = coordinator(ctx).fetch_offsets(
            group_id, None, require_stable, member_id=member_id, member_epoch=member_epoch
        )
        if ctx.broker.authorizer is not None and not err:
            allowed = authorized_names(ctx, DESCRIBE, TOPIC, {r[0] for r in rows})
            rows = [r for r in rows if r[0] in allowed]
        return err, rows, []
    allowed = authorized_names(ctx, DESCRIBE, TOPIC, (t.name for t in topics))
    denied = [t for t in topics if t.name not in allowed]
    wanted = [(t.name, list(t.partition_indexes)) for t in topics if t.name in allowed]
    err, rows = coordinator(ctx).fetch_offsets(
        group_id, wanted, require_stable, member_id=member_id, member_epoch=member_epoch
    )
    if not err:
        rows = list(rows) + [(t.name, p, TOPIC_DENIED) for t in denied for p in t.partition_indexes]
    return err, rows, denied


def _unknown_id_topic(topic, topic_cls, part_cls):
    """v10+: the answer for a requested topic id that names no topic."""
    parts = tuple(
        build(
            part_cls,
            partition_index=p,
            committed_offset=-1,
            committed_leader_epoch=-1,
            metadata="",
            error_code=ErrorCode.unknown_topic_id,
        )
        for p in topic.partition_indexes
    )
    return build(topic_cls, topic_id=topic.topic_id, partitions=parts)


def _group_by_id(ctx, g, require_stable, topic_cls, part_cls):
    """v10+: one group's (error, topics), topics named by id."""
    topics_by_name = ctx.broker.topics
    member = (getattr(g, "member_id", None), getattr(g, "member_epoch", -1))
    if g.topics is None:
        err, rows, _ = _fetch(ctx, g.group_id, None, require_stable, *member)
        ids = {}
        for name in {r[0] for r in rows}:
            info = topics_by_name.get(name)
            if info is not None:
                ids[name] = info.topic_id
        return err, _topics(ctx, None, rows, err, topic_cls, part_cls, ids)
    resolved = [
        (t, topics_by_name.get_by_id(t.topic_id) if t.topic_id is not None else None)
        for t in g.topics
    ]
    named = [
        SimpleNamespace(name=info.name, partition_indexes=t.partition_indexes)
        for t, info in resolved
        if info is not None
    ]
    err, rows, _ = _fetch(ctx, g.group_id, named, require_stable, *member)
    ids = {info.name: info.topic_id for _t, info in resolved if info is not None}
    answer = _topics(ctx, named, rows, err, topic_cls, part_cls, ids)
    if not err:
        unknown = [t for t, info in resolved if info is None]
        answer += tuple(_unknown_id_topic(t, topic_cls, part_cls) for t in unknown)
    return err, answer


def _topics(ctx, names, rows, group_error, topic_cls, part_cls, ids=None):
    """The answer's topics; ``ids`` (v10+) names them by id, leaving out those without one."""
    by_topic: dict[str, list] = {}
    for topic, partition, om in rows:
        if om is TOPIC_DENIED:
            error, om = TOPIC_DENIED, None
        elif om is UNSTABLE:
            error, om = ErrorCode.unstable_offset_commit, None
        else:
            error = group_error if ctx.version < 2 else ErrorCode.none
        by_topic.setdefault(topic, []).append(
            build(
                part_cls,
                partition_index=partition,
                committed_offset=om.offset if om else -1,
                committed_leader_epoch=om.leader_epoch if om else -1,
                metadata=om.metadata if om else "",
                error_code=error,
            )
        )
    if group_error and ctx.version < 2 and names is not None:
        for t in names:
            by_topic[t.name] = [
                build(
                    part_cls,
                    partition_index=p,
                    committed_offset=-1,
                    committed_leader_epoch=-1,
                    metadata="",
                    error_code=group_error,
                )
                for p in t.partition_indexes
            ]
    if ids is not None:
        return tuple(
            build(topic_cls, topic_id=ids[n], partitions=tuple(ps))
            for n, ps in by_topic.items()
            if n in ids
        )
    return tuple(build(topic_cls, name=n, partitions=tuple(ps)) for n, ps in by_topic.items())


@api("OffsetFetch")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if ctx.version >= TOPIC_IDS_FROM:
        groups = []
        for g in request.groups:
            err, topics = _group_by_id(
                ctx,
                g,
                request.require_stable,
                R.OffsetFetchResponseTopics,
                R.OffsetFetchResponsePartitions,
            )
            groups.append(
                build(
                    R.OffsetFetchResponseGroup, group_id=g.group_id, topics=topics, error_code=err
                )
            )
        return build(R.OffsetFetchResponse, throttle_time=THROTTLE_NONE, groups=tuple(groups))
    if ctx.version >= 8:
        groups = []
        for g in request.groups:
            err, rows, _ = _fetch(
                ctx,
                g.group_id,
                g.topics,
                request.require_stable,
                getattr(g, "member_id", None),
                getattr(g, "member_epoch", -1),
            )
            groups.append(
                build(
                    R.OffsetFetchResponseGroup,
                    group_id=g.group_id,
                    topics=_topics(
                        ctx,
                        g.topics,
                        rows,
                        err,
                        R.OffsetFetchResponseTopics,
                        R.OffsetFetchResponsePartitions,
                    ),
                    error_code=err,
                )
            )
        return build(R.OffsetFetchResponse, throttle_time=THROTTLE_NONE, groups=tuple(groups))
    require_stable = getattr(request, "require_stable", False)
    err, rows, _ = _fetch(ctx, request.group_id, request.topics, require_stable)
    return build(
        R.OffsetFetchResponse,
        throttle_time=THROTTLE_NONE,
        topics=_topics(
            ctx,
            request.topics,
            rows,
            err,
            R.OffsetFetchResponseTopic,
            R.OffsetFetchResponsePartition,
        ),
        error_code=err,
    )
