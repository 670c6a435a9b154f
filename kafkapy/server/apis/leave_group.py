"""LeaveGroup (key 13), versions 0-5.

v0-2 name one member id; v3+ a batch of members, each by member id and/or group.instance.id,
answered one by one (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID when the instance id belongs to
another member id). Leaving triggers a rebalance of the remaining members. An unknown group
answers UNKNOWN_MEMBER_ID for each member (top-level for v0-2). Group-level errors:
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, INVALID_GROUP_ID.
In a consumer-protocol (KIP-848) group, members of the classic protocol leave it this way (the
group epoch is bumped); its members of the consumer protocol are UNKNOWN_MEMBER_ID here.
ZooKeeper mode: the answer waits until what leaving wrote reached the ISR of the group's
__consumer_offsets partition, else COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR (group_service).
Requires READ on the group (a top-level GROUP_AUTHORIZATION_FAILED otherwise).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, group_denied, service


@api("LeaveGroup")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return build(R.LeaveGroupResponse, throttle_time=THROTTLE_NONE, error_code=GROUP_DENIED,
                     members=())
    svc = service(ctx)
    if ctx.version < 3:
        members = [(request.member_id, None)]
    else:
        members = [(m.member_id, m.group_instance_id) for m in request.members]
    error, errors = svc.coordinator.leave_group(request.group_id, members, now_ms())
    svc.kick()
    if error == ErrorCode.none and any(e == 0 for e in errors):
        error = await svc.replicated(request.group_id)
    if ctx.version < 3:
        if error == ErrorCode.none and errors:
            error = errors[0]
        return build(R.LeaveGroupResponse, throttle_time=THROTTLE_NONE, error_code=error)
    responses = tuple(
        build(R.MemberResponse, member_id=mid, group_instance_id=iid, error_code=err)
        for (mid, iid), err in zip(members, errors, strict=False)
    )
    return build(
        R.LeaveGroupResponse, throttle_time=THROTTLE_NONE, error_code=error, members=responses
    )
