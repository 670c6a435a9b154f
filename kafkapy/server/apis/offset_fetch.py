"""OffsetFetch (key 9), versions 1-9.

The committed offset, leader epoch (v5+) and metadata of each requested partition; -1 (and
empty metadata) where nothing is committed, including for groups that do not exist. A null
topic list (v2+) returns every committed partition of the group. v1 reports group errors on each
partition; v2-7 also as a top-level error; v8+ asks for several groups at once, each with its own
error. require_stable (v7+): a partition with an offset committed in a transaction that has not
ended yet answers UNSTABLE_OFFSET_COMMIT (offset -1); the client retries. v9 carries a member id
and epoch per group: for a consumer-protocol group they must name a member at its current epoch
(UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH), unless both are absent (-1, null: admin clients).
Errors: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_GROUP_ID.
"""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..responses import THROTTLE_NONE, build
from .group_common import coordinator


def _fetch(ctx, group_id, topics, require_stable, member_id=None, member_epoch=-1):
    """(group error, rows, partitions to answer UNSTABLE_OFFSET_COMMIT)."""
    wanted = None if topics is None else [(t.name, list(t.partition_indexes)) for t in topics]
    c = coordinator(ctx)
    err, rows = c.fetch_offsets(
        group_id, wanted, require_stable, member_id=member_id, member_epoch=member_epoch
    )
    unstable = c.unstable_offsets(group_id) if require_stable and not err else set()
    return err, rows, unstable


def _topics(ctx, names, fetched, topic_cls, part_cls):
    group_error, rows, unstable = fetched
    by_topic: dict[str, list] = {}
    for topic, partition, om in rows:
        if (topic, partition) in unstable:
            om, error = None, ErrorCode.unstable_offset_commit
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
    return tuple(build(topic_cls, name=n, partitions=tuple(ps)) for n, ps in by_topic.items())


@api("OffsetFetch")
async def handle(ctx, request):
    R = ctx.R
    if ctx.version >= 8:
        groups = []
        for g in request.groups:
            fetched = _fetch(
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
                        fetched,
                        R.OffsetFetchResponseTopics,
                        R.OffsetFetchResponsePartitions,
                    ),
                    error_code=fetched[0],
                )
            )
        return build(R.OffsetFetchResponse, throttle_time=THROTTLE_NONE, groups=tuple(groups))
    require_stable = getattr(request, "require_stable", False)
    fetched = _fetch(ctx, request.group_id, request.topics, require_stable)
    return build(
        R.OffsetFetchResponse,
        throttle_time=THROTTLE_NONE,
        topics=_topics(
            ctx,
            request.topics,
            fetched,
            R.OffsetFetchResponseTopic,
            R.OffsetFetchResponsePartition,
        ),
        error_code=fetched[0],
    )
