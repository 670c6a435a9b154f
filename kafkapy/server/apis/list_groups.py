"""ListGroups (key 16), versions 0-5.

Every group of the __consumer_offsets partitions this broker leads, with its protocol type,
state (v4+) and type (v5+: "classic", or "consumer" for KIP-848 groups, whose states are Empty,
Assigning, Reconciling, Stable; a group migrated online between the protocols is listed with its
current type, protocol type "consumer" either way; "share" for share groups, KIP-932, in states
Empty and Stable, protocol type "share"). states_filter (v4+, case-insensitive) and
types_filter (v5+) narrow the list; empty filters mean all. COORDINATOR_LOAD_IN_PROGRESS while
partitions are still loading (with the groups already loaded).

Authorization: with DESCRIBE on the cluster every group is listed, otherwise only the groups
the request may DESCRIBE, as Kafka does.
"""

from __future__ import annotations

from typing import Any

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, GROUP, authorize_cluster, authorized_names
from .group_common import coordinator, share_listed


@api("ListGroups")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    states = set(getattr(request, "states_filter", ()) or ()) or None
    types = set(getattr(request, "types_filter", ()) or ()) or None
    error, groups = coordinator(ctx).list_groups(states, types)
    groups += share_listed(coordinator(ctx).share, states, types)
    if ctx.broker.authorizer is not None and not authorize_cluster(ctx, DESCRIBE):
        allowed = authorized_names(ctx, DESCRIBE, GROUP, (g.group_id for g in groups))
        groups = [g for g in groups if g.group_id in allowed]
    return build(
        R.ListGroupsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=error,
        groups=tuple(
            build(
                R.ListedGroup,
                group_id=g.group_id,
                protocol_type=g.protocol_type,
                group_state=g.state,
                group_type=g.group_type,
            )
            for g in groups
        ),
    )
