"""ShareGroupDescribe (key 77), version 1.

Per share group: state (Empty, Stable), group epoch, assignment epoch, the assignor ("simple"),
and each member's id, rack, epoch, client id and host, subscribed topic names and assignment
(topic id, name, partitions). GROUP_ID_NOT_FOUND for an unknown id or a group of another type,
INVALID_GROUP_ID for an empty id, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.

Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED for it, listed first, as
Kafka answers); when asked, a described group carries its authorized operations.
"""

from __future__ import annotations

from typing import Any

from kafkapy.coordinator.share.groups import ASSIGNOR
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, GROUP, NOT_REQUESTED, authorized_operations
from .group_common import GROUP_DENIED, coordinator, group_denied


def _assignment(R: Any, topics: Any, a: Any) -> Any:
    return build(
        R.Assignment,
        topic_partitions=tuple(
            build(R.TopicPartitions, topic_id=t, topic_name=topics.name_of(t) or "",
                  partitions=tuple(sorted(ps)))
            for t, ps in sorted(a.items(), key=lambda kv: str(kv[0]))
            if ps
        ),
    )


def _failed(R: Any, gid: str, code: int, message: str | None) -> Any:
    return build(
        R.DescribedGroup, error_code=code, error_message=message, group_id=gid,
        group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=(),
        authorized_operations=NOT_REQUESTED,
    )


@api("ShareGroupDescribe")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    c = coordinator(ctx)
    denied = []
    out = []
    for gid in request.group_ids:
        if group_denied(ctx, gid, DESCRIBE):
            denied.append(
                build(R.DescribedGroup, error_code=GROUP_DENIED, error_message=None,
                      group_id=gid, group_state="", group_epoch=0, assignment_epoch=0,
                      assignor_name="", members=(), authorized_operations=NOT_REQUESTED)
            )
            continue
        err, message, g = c.share.describe(gid)
        if g is None:
            out.append(_failed(R, gid, err, message))
            continue
        members = tuple(
            build(
                R.Member,
                member_id=m.member_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=tuple(sorted(set(m.subscribed_topic_names))),
                assignment=_assignment(R, c.topics, m.assigned),
            )
            for m in g.members.values()
        )
        out.append(
            build(
                R.DescribedGroup,
                error_code=ErrorCode.none,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=ASSIGNOR,
                members=members,
                authorized_operations=authorized_operations(ctx, GROUP, gid)
                if request.include_authorized_operations
                else NOT_REQUESTED,
            )
        )
    return build(
        R.ShareGroupDescribeResponse, throttle_time=THROTTLE_NONE, groups=tuple(denied + out)
    )
