"""ShareGroupHeartbeat (key 76), version 1: a share group member (KIP-932) joins (epoch 0, with
its subscribed topic names), heartbeats, changes its subscription, or leaves (epoch -1).

The coordinator (kafkapy.coordinator.share.groups) bumps the group epoch on membership or
subscription changes and assigns with the ``simple`` assignor at once; the answer carries the
member epoch, the heartbeat interval (share.heartbeat.interval.ms) and, on a join or when it
changed, the member's assignment (topic ids and partitions).

Errors: INVALID_REQUEST (Kafka's messages), GROUP_ID_NOT_FOUND (no such share group for epoch
!= 0, or the id of another group type), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
GROUP_MAX_SIZE_REACHED (group.share.max.size), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.share.groups import ShareHeartbeat
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, client_host, client_id, group_denied, service


def _error(R: Any, code: int, message: str | None = None) -> Any:
    return build(
        R.ShareGroupHeartbeatResponse, throttle_time=THROTTLE_NONE, error_code=code,
        error_message=message, member_id=None, member_epoch=0,
        heartbeat_interval=datetime.timedelta(0), assignment=None,
    )


@api("ShareGroupHeartbeat")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return _error(R, GROUP_DENIED)
    svc = service(ctx)
    names = request.subscribed_topic_names
    result = svc.coordinator.share.heartbeat(
        ShareHeartbeat(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            rack_id=request.rack_id,
            subscribed_topic_names=None if names is None else tuple(names),
            client_id=client_id(ctx),
            client_host=client_host(ctx),
        ),
        now_ms(),
    )
    svc.kick()
    if result.error:
        return _error(R, result.error, result.message)
    assignment = None
    if result.assignment is not None:
        assignment = build(
            R.Assignment,
            topic_partitions=tuple(
                build(R.TopicPartitions, topic_id=t, partitions=tuple(sorted(ps)))
                for t, ps in sorted(result.assignment.items(), key=lambda kv: str(kv[0]))
                if ps
            ),
        )
    return build(
        R.ShareGroupHeartbeatResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        error_message=None,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
        assignment=assignment,
    )
