"""DescribeGroups (key 15), versions 0-6.

Per group: state (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead), protocol type,
protocol (only when Stable) and members with client id, client host, group.instance.id (v4+), and
when Stable their metadata for the chosen protocol and their assignment. A group that does not
exist is reported as Dead with no error before v6 and GROUP_ID_NOT_FOUND from v6, as Kafka 4.0
does; a consumer-protocol (KIP-848) group is not a classic group and is reported the same way
("Group X is not a classic group.", as Kafka 4.0), also while some of its members still use the
classic protocol after an online upgrade (ConsumerGroupDescribe shows them). The empty group id
is described as any other (Kafka 3.9's ZooKeeper-mode coordinator). Authorized
operations (v3+) are not computed (Kafka's "not requested" value).

Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED for it); when asked
(v3+), a described group carries its authorized operations.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, GROUP, NOT_REQUESTED, authorized_operations
from .group_common import GROUP_DENIED, coordinator, group_denied


@api("DescribeGroups")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    out = []
    with_ops = getattr(request, "include_authorized_operations", False)
    for gid in request.groups:
        if group_denied(ctx, gid, DESCRIBE):
            out.append(
                build(R.DescribedGroup, error_code=GROUP_DENIED, error_message=None, group_id=gid,
                      group_state="", protocol_type="", protocol_data="", members=(),
                      authorized_operations=NOT_REQUESTED)
            )
            continue
        d = coordinator(ctx).describe_group(gid)
        if gid in coordinator(ctx).share.groups and d.error == ErrorCode.group_id_not_found:
            d.message = f"Group {gid} is not a classic group."
        error = d.error
        message = None
        if error == ErrorCode.group_id_not_found:
            if ctx.version < 6:
                error = ErrorCode.none
            else:
                message = d.message or f"Group {gid} not found."
        out.append(
            build(
                R.DescribedGroup,
                error_code=error,
                error_message=message,
                group_id=gid,
                group_state=d.state,
                protocol_type=d.protocol_type,
                protocol_data=d.protocol_data,
                members=tuple(
                    build(
                        R.DescribedGroupMember,
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in d.members
                ),
                authorized_operations=authorized_operations(ctx, GROUP, gid)
                if with_ops and error == ErrorCode.none
                else NOT_REQUESTED,
            )
        )
    return build(R.DescribeGroupsResponse, throttle_time=THROTTLE_NONE, groups=tuple(out))
