"""DescribeGroups (key 15), versions 0-6.

Per group: state (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead), protocol type,
protocol (only when Stable) and members with client id, client host, group.instance.id (v4+), and
when Stable their metadata for the chosen protocol and their assignment. A group that does not
exist is reported as Dead with no error before v6 and GROUP_ID_NOT_FOUND from v6, as Kafka 4.0
does; a consumer-protocol (KIP-848) group is not a classic group and is reported the same way
("Group X is not a classic group.", as Kafka 4.0), also while some of its members still use the
classic protocol after an online upgrade (ConsumerGroupDescribe shows them). Authorized
operations (v3+) are not computed (Kafka's "not requested" value).
"""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..responses import THROTTLE_NONE, build
from .group_common import coordinator

NOT_REQUESTED = -2147483648


@api("DescribeGroups")
async def handle(ctx, request):
    R = ctx.R
    out = []
    for gid in request.groups:
        d = coordinator(ctx).describe_group(gid)
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
                authorized_operations=NOT_REQUESTED,
            )
        )
    return build(R.DescribeGroupsResponse, throttle_time=THROTTLE_NONE, groups=tuple(out))
