"""ConsumerGroupDescribe (key 69), versions 0-1.

Per group of the consumer protocol: state (Empty, Assigning, Reconciling, Stable), group epoch,
assignment epoch, the assignor in use (the one most members ask for, else the first of
group.consumer.assignors), and each member's ids, client id and host, subscription (names and
regex), member epoch, current assignment and target assignment (topic id, name, partitions);
member_type from v1: 1 for a member of the consumer protocol, 0 for a member that still uses the
classic protocol in a group being migrated (its subscription is the one of its JoinGroup).
GROUP_ID_NOT_FOUND for a group that does not exist or is a classic group, INVALID_GROUP_ID for an
empty id, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. Authorized operations are not computed
(Kafka's "not requested").

Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED for it); when asked, a
described group carries its authorized operations.
"""

from __future__ import annotations

from typing import Any

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, GROUP, NOT_REQUESTED, authorized_operations
from .group_common import GROUP_DENIED, coordinator, group_denied

CLASSIC_MEMBER = 0
CONSUMER_MEMBER = 1


def _assignment(R, topics, a):
    rows = []
    for t, ps in sorted(a.items(), key=lambda kv: str(kv[0])):
        if ps:
            rows.append(
                build(
                    R.TopicPartitions,
                    topic_id=t,
                    topic_name=topics.name_of(t) or "",
                    partitions=tuple(sorted(ps)),
                )
            )
    return build(R.Assignment, topic_partitions=tuple(rows))


@api("ConsumerGroupDescribe")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    c = coordinator(ctx)
    out = []
    with_ops = request.include_authorized_operations
    for gid in request.group_ids:
        if group_denied(ctx, gid, DESCRIBE):
            out.append(
                build(R.DescribedGroup, error_code=GROUP_DENIED, error_message=None, group_id=gid,
                      group_state="", group_epoch=0, assignment_epoch=0, assignor_name="",
                      members=(), authorized_operations=NOT_REQUESTED)
            )
            continue
        d = c.consumer_group_describe(gid)
        g = d.group
        if g is None:
            out.append(
                build(
                    R.DescribedGroup,
                    error_code=d.error,
                    error_message=d.message,
                    group_id=gid,
                    group_state="Dead",
                    group_epoch=-1,
                    assignment_epoch=-1,
                    assignor_name="",
                    members=(),
                    authorized_operations=NOT_REQUESTED,
                )
            )
            continue
        members = tuple(
            build(
                R.Member,
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=tuple(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=_assignment(R, c.topics, m.assigned),
                target_assignment=_assignment(R, c.topics, d.targets.get(m.member_id, {})),
                member_type=CLASSIC_MEMBER if m.classic is not None else CONSUMER_MEMBER,
            )
            for m in g.members.values()
        )
        out.append(
            build(
                R.DescribedGroup,
                error_code=d.error,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=d.assignor,
                members=members,
                authorized_operations=authorized_operations(ctx, GROUP, gid)
                if with_ops and not d.error
                else NOT_REQUESTED,
            )
        )
    return build(R.ConsumerGroupDescribeResponse, throttle_time=THROTTLE_NONE, groups=tuple(out))
