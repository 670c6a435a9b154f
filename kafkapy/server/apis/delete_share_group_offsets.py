"""DeleteShareGroupOffsets (key 92), version 0: forget the share-partition state of topics of a
share group without members (KIP-932; ``kafka-share-groups.sh --delete-offsets``): tombstones in
__share_group_state, and the group starts those partitions again by share.auto.offset.reset.

Errors: top level GROUP_AUTHORIZATION_FAILED (DELETE on the group), INVALID_GROUP_ID,
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (no such share group),
NON_EMPTY_GROUP; per topic TOPIC_AUTHORIZATION_FAILED (READ on the topic),
UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DELETE, READ, TOPIC, authorized_names
from .group_common import GROUP_DENIED, group_denied, service
from .share_common import manager


@api("DeleteShareGroupOffsets")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R

    def answer(code: int, message: str | None = None, topics: Any = ()) -> Any:
        return build(R.DeleteShareGroupOffsetsResponse, throttle_time=THROTTLE_NONE,
                     error_code=ErrorCode(code), error_message=message, responses=tuple(topics))

    gid = request.group_id
    if group_denied(ctx, gid, DELETE):
        return answer(GROUP_DENIED)
    err, message, group = service(ctx).coordinator.share.admin_group(gid)
    if err:
        return answer(err, message)
    if group is None:
        return answer(ErrorCode.group_id_not_found, f"Group {gid} not found.")
    if group.members:
        return answer(ErrorCode.non_empty_group, "The group is not empty.")
    mgr = manager(ctx)
    await mgr.ensure_loaded()
    states = mgr.group_states(gid)
    topics = ctx.broker.topics
    allowed = authorized_names(ctx, READ, TOPIC, {t.topic_name for t in request.topics})
    now = now_ms()
    out = []
    for t in request.topics:
        info = topics.get(t.topic_name)
        code: int = ErrorCode.none
        if t.topic_name not in allowed:
            code = ErrorCode.topic_authorization_failed
        elif info is None:
            code = ErrorCode.unknown_topic_or_partition
        else:
            for key in [k for k in states if k[1] == info.topic_id]:
                mgr.delete_state(key, now)
        out.append(build(R.DeleteShareGroupOffsetsResponseTopic, topic_name=t.topic_name,
                         topic_id=info.topic_id if info is not None else None,
                         error_code=ErrorCode(code), error_message=None))
    return answer(ErrorCode.none, None, out)
