"""SyncGroup (key 14), versions 0-5.

The leader sends the assignment of every member; each member's answer waits until the leader's
assignment is stored in __consumer_offsets, then carries that member's part (members the leader
left out get an empty assignment; entries for members not in the group are ignored). In a Stable
group the current assignment is returned at once. Errors: UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID (v3+ static members), ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (also while
the coordinator is loading: the client rejoins), INCONSISTENT_GROUP_PROTOCOL (v5 protocol
type/name mismatch), NOT_COORDINATOR. protocol_type/protocol_name in the answer from v5.
A member of the classic protocol in a consumer-protocol (KIP-848) group gets its server-side
assignment at once (REBALANCE_IN_PROGRESS while the group epoch is ahead of its own: it rejoins).
ZooKeeper mode: the answer waits until the group's __consumer_offsets writes reached the ISR
(offsets.commit.timeout.ms); if not, COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR, and the group
rebalances again (group_service). Requires READ on the group (GROUP_AUTHORIZATION_FAILED
otherwise).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.group.classic import SyncResult

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, group_denied, service


@api("SyncGroup")
async def handle(ctx: RequestContext, request: Any) -> Any:
    if group_denied(ctx, request.group_id):
        return build(ctx.R.SyncGroupResponse, throttle_time=THROTTLE_NONE,
                     error_code=GROUP_DENIED, protocol_type=None, protocol_name=None,
                     assignment=b"")
    svc = service(ctx)
    assignments = {a.member_id: bytes(a.assignment) for a in request.assignments}
    pending = svc.coordinator.sync_group(
        request.group_id,
        request.generation_id,
        request.member_id,
        getattr(request, "group_instance_id", None),
        assignments,
        now_ms(),
        protocol_type=getattr(request, "protocol_type", None),
        protocol_name=getattr(request, "protocol_name", None),
    )
    result = await svc.wait(pending)
    if result.error == 0:
        err = await svc.replicated(request.group_id)
        if err:
            svc.coordinator.assignment_not_replicated(
                request.group_id, request.generation_id, request.member_id, err, now_ms()
            )
            svc.kick()
            result = SyncResult(err)
    return build(
        ctx.R.SyncGroupResponse,
        throttle_time=THROTTLE_NONE,
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
