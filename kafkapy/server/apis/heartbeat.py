"""Heartbeat (key 12), versions 0-4.

Keeps a member of a classic group alive for another session timeout. NONE in a Stable or
CompletingRebalance group, REBALANCE_IN_PROGRESS while a rebalance is being prepared (the member
rejoins), ILLEGAL_GENERATION for another generation, UNKNOWN_MEMBER_ID for a member (or group)
that is not there, FENCED_INSTANCE_ID for a replaced static member (v3+), NOT_COORDINATOR; while
the coordinator is loading the answer is NONE, as Kafka does.

For a member of the classic protocol in a consumer-protocol (KIP-848) group: REBALANCE_IN_PROGRESS
when it must rejoin to move towards its target assignment (the group epoch moved on, it has
partitions to revoke, or the partitions it waited for were released), ILLEGAL_GENERATION when the
generation is not its member epoch; members of the consumer protocol are UNKNOWN_MEMBER_ID here.
Requires READ on the group (GROUP_AUTHORIZATION_FAILED otherwise).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, group_denied, service


@api("Heartbeat")
async def handle(ctx: RequestContext, request: Any) -> Any:
    if group_denied(ctx, request.group_id):
        return build(ctx.R.HeartbeatResponse, throttle_time=THROTTLE_NONE, error_code=GROUP_DENIED)
    svc = service(ctx)
    error = svc.coordinator.heartbeat(
        request.group_id,
        request.generation_id,
        request.member_id,
        getattr(request, "group_instance_id", None),
        now_ms(),
    )
    svc.kick()
    return build(ctx.R.HeartbeatResponse, throttle_time=THROTTLE_NONE, error_code=error)
