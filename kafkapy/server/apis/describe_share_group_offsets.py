"""DescribeShareGroupOffsets (key 90), versions 0-1: the share-partition start offsets of share
groups (KIP-932), with the lag from v1 (records between the start offset and the high watermark
not yet acknowledged or archived).

Per group: the topics asked for (null: every share-partition the group has a state for), each
partition with its start offset and leader epoch; start offset -1 (and lag -1) for a partition
the group has not started consuming, one that does not exist, or a group of another type (Kafka
asks its share coordinator and answers NONE for them). Group errors: INVALID_GROUP_ID,
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, GROUP_AUTHORIZATION_FAILED without DESCRIBE on
the group; a partition of a topic without DESCRIBE answers TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TOPIC, authorized_names
from .group_common import GROUP_DENIED, coordinator, group_denied
from .share_common import manager


def _group(ctx: Any, R: Any, g: Any) -> Any:
    def failed(code: int, message: str | None = None) -> Any:
        return build(R.DescribeShareGroupOffsetsResponseGroup, group_id=g.group_id, topics=(),
                     error_code=ErrorCode(code), error_message=message)

    if group_denied(ctx, g.group_id, DESCRIBE):
        return failed(GROUP_DENIED)
    err, message, _group = coordinator(ctx).share.admin_group(g.group_id)
    if err and err != ErrorCode.group_id_not_found:  # another group type: no share state
        return failed(err, message)
    mgr = manager(ctx)
    states = mgr.group_states(g.group_id)
    topics = ctx.broker.topics
    wanted: list[tuple[str, list[int]]] = []
    if g.topics is None:
        by_name: dict[str, list[int]] = {}
        for (_, tid, p) in sorted(states, key=lambda k: (str(k[1]), k[2])):
            info = topics.get_by_id(tid)
            if info is not None:
                by_name.setdefault(info.name, []).append(p)
        wanted = sorted(by_name.items())
    else:
        wanted = [(t.topic_name, list(t.partitions)) for t in g.topics]
    allowed = authorized_names(ctx, DESCRIBE, TOPIC, {name for name, _ in wanted})
    out = []
    for name, partitions in wanted:
        info = topics.get(name)
        rows = []
        for p in partitions:
            code: int = ErrorCode.none
            start, lag, epoch = -1, -1, -1
            if name not in allowed:
                code = ErrorCode.topic_authorization_failed
            elif info is None or p not in info.partitions:
                pass  # no share state there: start offset -1, as Kafka answers it
            else:
                sp = states.get((g.group_id, info.topic_id, p))
                st = info.states.get(p)
                epoch = st.leader_epoch if st is not None else 0
                plog = topics.log(name, p)
                if sp is not None:
                    start = sp.start_offset
                    lag = sp.lag(plog.high_watermark) if plog is not None else -1
            rows.append(build(R.DescribeShareGroupOffsetsResponsePartition, partition_index=p,
                              start_offset=start, leader_epoch=epoch, lag=lag,
                              error_code=ErrorCode(code), error_message=None))
        out.append(build(R.DescribeShareGroupOffsetsResponseTopic, topic_name=name,
                         topic_id=info.topic_id if info is not None else None,
                         partitions=tuple(rows)))
    return build(R.DescribeShareGroupOffsetsResponseGroup, group_id=g.group_id,
                 topics=tuple(out), error_code=ErrorCode.none, error_message=None)


@api("DescribeShareGroupOffsets")
async def handle(ctx: RequestContext, request: Any) -> Any:
    await manager(ctx).ensure_loaded()
    R = ctx.R
    return build(R.DescribeShareGroupOffsetsResponse, throttle_time=THROTTLE_NONE,
                 groups=tuple(_group(ctx, R, g) for g in request.groups))
