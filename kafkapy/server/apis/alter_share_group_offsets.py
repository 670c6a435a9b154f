"""AlterShareGroupOffsets (key 91), version 0: set the start offset of share-partitions of a
share group without members (KIP-932; ``kafka-share-groups.sh --reset-offsets``). Each
share-partition starts again at the offset given, nothing in flight, its state written to
__share_group_state; a group that does not exist is created empty.

Errors: top level GROUP_AUTHORIZATION_FAILED (READ on the group), INVALID_GROUP_ID,
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (a group of another type),
NON_EMPTY_GROUP (it has members); per partition TOPIC_AUTHORIZATION_FAILED (READ on the topic),
UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST for a negative offset.
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import READ, TOPIC, authorized_names
from .group_common import GROUP_DENIED, group_denied, service
from .share_common import manager


@api("AlterShareGroupOffsets")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R

    def answer(code: int, message: str | None = None, topics: Any = ()) -> Any:
        return build(R.AlterShareGroupOffsetsResponse, throttle_time=THROTTLE_NONE,
                     error_code=ErrorCode(code), error_message=message, responses=tuple(topics))

    gid = request.group_id
    if group_denied(ctx, gid):
        return answer(GROUP_DENIED)
    svc = service(ctx)
    err, message, group = svc.coordinator.share.admin_group(gid, create=True)
    if err:
        return answer(err, message)
    if group.members:
        return answer(ErrorCode.non_empty_group, "The group is not empty.")
    mgr = manager(ctx)
    await mgr.ensure_loaded()
    topics = ctx.broker.topics
    allowed = authorized_names(ctx, READ, TOPIC, {t.topic_name for t in request.topics})
    now = now_ms()
    out = []
    for t in request.topics:
        info = topics.get(t.topic_name)
        rows = []
        for p in t.partitions:
            code: int = ErrorCode.none
            msg = None
            if t.topic_name not in allowed:
                code = ErrorCode.topic_authorization_failed
            elif info is None or p.partition_index not in info.partitions:
                code = ErrorCode.unknown_topic_or_partition
            elif p.start_offset < 0:
                code, msg = ErrorCode.invalid_request, "The start offset must not be negative."
            elif not mgr.reset_start((gid, info.topic_id, p.partition_index), p.start_offset, now):
                code = ErrorCode.coordinator_not_available
            rows.append(build(R.AlterShareGroupOffsetsResponsePartition,
                              partition_index=p.partition_index, error_code=ErrorCode(code),
                              error_message=msg))
        out.append(build(R.AlterShareGroupOffsetsResponseTopic, topic_name=t.topic_name,
                         topic_id=info.topic_id if info is not None else None,
                         partitions=tuple(rows)))
    return answer(ErrorCode.none, None, out)
