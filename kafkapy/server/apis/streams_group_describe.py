"""StreamsGroupDescribe (key 89), versions 0-1.

Per streams group (KIP-1071): state (Empty, NotReady, Assigning, Reconciling, Stable), group
epoch, assignment epoch, the topology (configured: internal topics with their decided partition
counts, once the topology is ready; else as the members sent it), and each member's ids, client
id and host, process id, endpoint, client tags, topology epoch, task offsets, current and target
assignment (active, standby and warm-up tasks); ``is_classic`` is always false. v1 adds the
topology description (status NOT_REQUESTED when not asked for, NOT_STORED otherwise: kafkapy
has no topology description plugin, as Kafka 4.4 without
group.streams.topology.description.plugin.class) and the assignor's name ("sticky").
GROUP_ID_NOT_FOUND for a group that does not exist or is not a streams group, INVALID_GROUP_ID
for an empty id, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.

Authorization: DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED for it); when asked, a
described group carries its authorized operations.
"""

from __future__ import annotations

from typing import Any

from kafkapy.coordinator.group.streams.configure import ConfiguredTopology
from kafkapy.coordinator.group.streams.model import StreamsGroup, TasksTuple, TopicInfo
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, GROUP, NOT_REQUESTED, authorized_operations
from .group_common import GROUP_DENIED, coordinator, group_denied

NOT_REQUESTED_DESCRIPTION = 0
NOT_STORED_DESCRIPTION = 1


def _task_ids(R: Any, tasks: dict[str, set[int]]) -> tuple[Any, ...]:
    return tuple(
        build(R.TaskIds, subtopology_id=s, partitions=tuple(sorted(ps)))
        for s, ps in sorted(tasks.items())
        if ps
    )


def _assignment(R: Any, t: TasksTuple) -> Any:
    return build(
        R.Assignment,
        active_tasks=_task_ids(R, t.active),
        standby_tasks=_task_ids(R, t.standby),
        warmup_tasks=_task_ids(R, t.warmup),
    )


def _topic_info(R: Any, info: TopicInfo, partitions: int) -> Any:
    return build(
        R.TopicInfo,
        name=info.name,
        partitions=partitions,
        replication_factor=info.replication_factor,
        topic_configs=tuple(build(R.KeyValue, key=k, value=v) for k, v in info.configs),
    )


def _topology(R: Any, g: StreamsGroup) -> Any:
    if g.topology is None:
        return None
    configured = g.configured
    decided: dict[str, int] = {}
    if isinstance(configured, ConfiguredTopology) and configured.is_ready:
        decided = configured.internal_partitions

    def count(info: TopicInfo) -> int:
        return info.partitions or decided.get(info.name, 0)

    return build(
        R.Topology,
        epoch=g.topology.epoch,
        subtopologies=tuple(
            build(
                R.Subtopology,
                subtopology_id=s.subtopology_id,
                source_topics=tuple(s.source_topics),
                repartition_sink_topics=tuple(s.repartition_sink_topics),
                state_changelog_topics=tuple(
                    _topic_info(R, i, count(i)) for i in s.state_changelog_topics
                ),
                repartition_source_topics=tuple(
                    _topic_info(R, i, count(i)) for i in s.repartition_source_topics
                ),
            )
            for s in g.topology.subtopologies
        ),
    )


def _member(R: Any, m: Any, target: TasksTuple) -> Any:
    offsets = tuple(
        build(R.TaskOffset, subtopology_id=s, partition=p, offset=o)
        for (s, p), o in sorted(m.task_offsets.items())
    )
    end_offsets = tuple(
        build(R.TaskOffset, subtopology_id=s, partition=p, offset=o)
        for (s, p), o in sorted(m.task_end_offsets.items())
    )
    endpoint = None
    if m.user_endpoint is not None:
        endpoint = build(R.Endpoint, host=m.user_endpoint[0], port=m.user_endpoint[1])
    return build(
        R.Member,
        member_id=m.member_id,
        member_epoch=m.member_epoch,
        instance_id=m.instance_id,
        rack_id=m.rack_id,
        client_id=m.client_id,
        client_host=m.client_host,
        topology_epoch=m.topology_epoch,
        process_id=m.process_id,
        user_endpoint=endpoint,
        client_tags=tuple(
            build(R.KeyValue, key=k, value=v) for k, v in sorted(m.client_tags.items())
        ),
        task_offsets=offsets,
        task_end_offsets=end_offsets,
        assignment=_assignment(R, m.assigned),
        target_assignment=_assignment(R, target),
        is_classic=False,
    )


@api("StreamsGroupDescribe")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    c = coordinator(ctx)
    out = []
    with_ops = request.include_authorized_operations
    want_description = getattr(request, "include_topology_description", False)
    description_status = NOT_STORED_DESCRIPTION if want_description else NOT_REQUESTED_DESCRIPTION
    for gid in request.group_ids:
        if group_denied(ctx, gid, DESCRIBE):
            out.append(
                build(
                    R.DescribedGroup,
                    error_code=GROUP_DENIED,
                    error_message=None,
                    group_id=gid,
                    group_state="",
                    group_epoch=0,
                    assignment_epoch=0,
                    topology=None,
                    members=(),
                    authorized_operations=NOT_REQUESTED,
                )
            )
            continue
        d = c.streams_group_describe(gid)
        g = d.group
        if g is None:
            out.append(
                build(
                    R.DescribedGroup,
                    error_code=d.error,
                    error_message=d.message,
                    group_id=gid,
                    group_state="",
                    group_epoch=0,
                    assignment_epoch=0,
                    topology=None,
                    members=(),
                    authorized_operations=NOT_REQUESTED,
                )
            )
            continue
        out.append(
            build(
                R.DescribedGroup,
                error_code=ErrorCode.none,
                error_message=None,
                group_id=gid,
                group_state=g.state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                topology=_topology(R, g),
                members=tuple(
                    _member(R, m, d.targets.get(m.member_id, TasksTuple()))
                    for m in g.members.values()
                ),
                authorized_operations=authorized_operations(ctx, GROUP, gid)
                if with_ops
                else NOT_REQUESTED,
                topology_description=None,
                topology_description_status=description_status,
                assignor_name=d.assignor,
            )
        )
    return build(R.StreamsGroupDescribeResponse, throttle_time=THROTTLE_NONE, groups=tuple(out))
