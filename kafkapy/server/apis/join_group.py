"""JoinGroup (key 11), versions 0-9 (Kafka 4.4 still serves v0 and v1).

Classic group membership, as Kafka's coordinator does it (kafkapy.coordinator.group): a first
join without a member id gets MEMBER_ID_REQUIRED and a new id (v4+, KIP-394), then joins with
it; the answer waits until the join phase completes (all members rejoined, the rebalance timeout,
or group.initial.rebalance.delay.ms for a new group). The leader's answer lists every member's
metadata for the chosen protocol (the one every member supports, by vote); others get none.
Static members (group.instance.id, v5+) rejoining a Stable group get their member id replaced and
no rebalance. Errors: INVALID_GROUP_ID, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
INVALID_SESSION_TIMEOUT (outside group.min/max.session.timeout.ms), INCONSISTENT_GROUP_PROTOCOL,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED. protocol_type and protocol_name in
the answer from v7, skip_assignment from v9 (always false for classic groups). v0 has no
rebalance timeout: the session timeout serves as both, as in Kafka.

A JoinGroup to a non-empty consumer-protocol (KIP-848) group joins it as a member that keeps the
classic protocol (online migration, kafkapy.coordinator.group.classic_members): its subscription
is read from its metadata, the server-side assignor assigns, and the answer comes at once with the
member epoch as generation and no leader (no client-side assignment); UNKNOWN_SERVER_ERROR for
metadata that is not the 'consumer' embedded protocol.

Requires READ on the group (GROUP_AUTHORIZATION_FAILED otherwise).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.group.classic import JoinRequest

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, client_host, client_id, group_denied, ms, service


@api("JoinGroup")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return build(
            R.JoinGroupResponse, throttle_time=THROTTLE_NONE, error_code=GROUP_DENIED,
            generation_id=-1, protocol_type=None,
            protocol_name=None if ctx.version >= 7 else "", leader="", skip_assignment=False,
            member_id="", members=(),
        )
    svc = service(ctx)
    session = ms(request.session_timeout)
    rebalance = ms(getattr(request, "rebalance_timeout", None), session)
    r = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        protocol_type=request.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance if rebalance >= 0 else session,
        group_instance_id=getattr(request, "group_instance_id", None),
        client_id=client_id(ctx),
        client_host=client_host(ctx),
        require_known_member_id=ctx.version >= 4,
        reason=getattr(request, "reason", None),
    )
    result = await svc.wait(svc.coordinator.join_group(r, now_ms()))
    members = tuple(
        build(R.JoinGroupResponseMember, member_id=mid, group_instance_id=iid, metadata=meta)
        for mid, iid, meta in result.members
    )
    return build(
        R.JoinGroupResponse,
        throttle_time=THROTTLE_NONE,
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name
        if result.protocol_name is not None or ctx.version >= 7
        else "",
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=members,
    )
