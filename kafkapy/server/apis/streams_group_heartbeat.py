"""StreamsGroupHeartbeat (key 88), versions 0-1: the streams group protocol of KIP-1071.

A Kafka Streams member joins (member epoch 0, with its topology), heartbeats with the tasks it
owns, and leaves (epoch -1). The coordinator (kafkapy.coordinator.group.streams) keeps the
group's topology, configures it against the topics, assigns active and standby tasks
(group.streams.num.standby.replicas) and moves each member towards its target, revoking before
assigning. The answer carries the member epoch, the heartbeat interval
(group.streams.heartbeat.interval.ms), the task offset interval (60000) and acceptable recovery
lag (10000) of Kafka 4.4's defaults, the tasks when they changed, the statuses, and the endpoints
of every member's tasks for interactive queries. v1 answers the acceptable recovery lag as int64
and TopologyDescriptionRequired (false: no topology description plugin is configured).

Internal topics: when the topology needs repartition or changelog topics that do not exist, the
answer says MISSING_INTERNAL_TOPICS and the broker creates them (with the partition counts the
coordinator decided, the topology's replication factor or default.replication.factor, and the
topology's topic configs), as Kafka 4.4's KafkaApis does, if the member may CREATE on the
cluster or on each topic; otherwise the status detail says so and nothing is created.

Errors: INVALID_REQUEST (the request's own rules, Kafka's messages), STREAMS_INVALID_TOPOLOGY,
GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED,
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, GROUP_AUTHORIZATION_FAILED (READ on the group).
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.group.streams.configure import MISSING_INTERNAL_TOPICS
from kafkapy.coordinator.group.streams.model import StreamsTopology, Subtopology, TopicInfo
from kafkapy.coordinator.group.streams.request import StreamsHeartbeatRequest
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import CREATE, TOPIC, authorize, authorize_cluster
from .group_common import GROUP_DENIED, client_host, client_id, group_denied, ms, service

log = logging.getLogger("kafkapy.groups")

TASK_OFFSET_INTERVAL_MS = 60_000  # group.streams.task.offset.interval.ms
ACCEPTABLE_RECOVERY_LAG = 10_000  # group.streams.acceptable.recovery.lag


def _tasks(rows: Any) -> dict[str, set[int]] | None:
    if rows is None:
        return None
    out: dict[str, set[int]] = {}
    for row in rows:
        out.setdefault(row.subtopology_id, set()).update(row.partitions)
    return out


def _topic_info(info: Any) -> TopicInfo:
    return TopicInfo(
        info.name,
        info.partitions,
        info.replication_factor,
        tuple((kv.key, kv.value) for kv in info.topic_configs),
    )


def _topology(t: Any) -> StreamsTopology | None:
    if t is None:
        return None
    subs = []
    for s in t.subtopologies:
        subs.append(
            Subtopology(
                s.subtopology_id,
                tuple(s.source_topics),
                tuple(s.source_topic_regex),
                tuple(_topic_info(i) for i in s.state_changelog_topics),
                tuple(s.repartition_sink_topics),
                tuple(_topic_info(i) for i in s.repartition_source_topics),
                tuple(
                    (tuple(g.source_topics), tuple(g.repartition_source_topics))
                    for g in s.copartition_groups
                ),
            )
        )
    return StreamsTopology(t.epoch, tuple(sorted(subs, key=lambda s: s.subtopology_id)))


def _offsets(rows: Any) -> dict[tuple[str, int], int] | None:
    if rows is None:
        return None
    return {(r.subtopology_id, r.partition): r.offset for r in rows}


def _answer(ctx: RequestContext, error: int, message: str | None = None, **fields: Any) -> Any:
    R = ctx.R
    body: dict[str, Any] = dict(
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode(error),
        error_message=message,
        member_id=fields.pop("member_id", ""),
        member_epoch=fields.pop("member_epoch", 0),
        heartbeat_interval=datetime.timedelta(milliseconds=fields.pop("interval", 0)),
        task_offset_interval=datetime.timedelta(milliseconds=TASK_OFFSET_INTERVAL_MS),
        status=fields.pop("status", ()),
        active_tasks=fields.pop("active_tasks", None),
        standby_tasks=fields.pop("standby_tasks", None),
        warmup_tasks=fields.pop("warmup_tasks", None),
        endpoint_information_epoch=fields.pop("endpoint_epoch", 0),
        partitions_by_user_endpoint=fields.pop("endpoints", None),
    )
    body["acceptable_recovery_lag"] = ACCEPTABLE_RECOVERY_LAG  # int32 in v0, int64 from v1
    body["topology_description_required"] = False  # v1
    return build(R.StreamsGroupHeartbeatResponse, **body)


def _task_ids(R: Any, tasks: dict[str, set[int]] | None) -> Any:
    if tasks is None:
        return None
    return tuple(
        build(R.TaskIds, subtopology_id=s, partitions=tuple(sorted(ps)))
        for s, ps in sorted(tasks.items())
        if ps
    )


def _create_internal_topics(
    ctx: RequestContext, to_create: dict[str, tuple[int, int, tuple[tuple[str, str], ...]]]
) -> str | None:
    """Create the missing internal topics (Kafka's createStreamsInternalTopics); the detail to
    add to MISSING_INTERNAL_TOPICS when the member may not create them."""
    from ..topics import TopicError

    if not authorize_cluster(ctx, CREATE):
        denied = sorted(n for n in to_create if not authorize(ctx, CREATE, TOPIC, n))
        if denied:
            return "Unauthorized to CREATE on topics " + ", ".join(denied) + "."
    registry = ctx.broker.topics
    for name, (partitions, replication_factor, configs) in sorted(to_create.items()):
        if registry.get(name) is not None:
            continue
        try:
            registry.create(name, partitions, replication_factor, configs=dict(configs))
        except TopicError as e:
            log.warning("cannot create internal topic=%s: %s %s", name, e.code.name, e)
    return None


@api("StreamsGroupHeartbeat")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return _answer(ctx, GROUP_DENIED)
    svc = service(ctx)
    endpoint = request.user_endpoint
    r = StreamsHeartbeatRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=ms(request.rebalance_timeout),
        topology=_topology(request.topology),
        active=_tasks(request.active_tasks),
        standby=_tasks(request.standby_tasks),
        warmup=_tasks(request.warmup_tasks),
        process_id=request.process_id,
        user_endpoint=None if endpoint is None else (endpoint.host, int(endpoint.port)),
        client_tags=(
            None
            if request.client_tags is None
            else {kv.key: kv.value for kv in request.client_tags}
        ),
        task_offsets=_offsets(request.task_offsets),
        task_end_offsets=_offsets(request.task_end_offsets),
        shutdown_application=request.shutdown_application,
        endpoint_information_epoch=request.endpoint_information_epoch,
        client_id=client_id(ctx),
        client_host=client_host(ctx),
        version=ctx.version,
    )
    result = svc.coordinator.streams_group_heartbeat(r, now_ms())
    svc.kick()
    if result.error:
        return _answer(ctx, result.error, result.message)
    status = list(result.status)
    if result.to_create:
        denied = _create_internal_topics(ctx, result.to_create)
        if denied is not None:
            status = [
                (code, f"{detail}; {denied}" if code == MISSING_INTERNAL_TOPICS else detail)
                for code, detail in status
            ]
    endpoints = None
    if result.partitions_by_endpoint is not None:
        endpoints = tuple(
            build(
                R.EndpointToPartitions,
                user_endpoint=build(R.Endpoint, host=host, port=port),
                active_partitions=tuple(
                    build(R.TopicPartition, topic=t, partitions=tuple(sorted(ps)))
                    for t, ps in sorted(active.items())
                ),
                standby_partitions=tuple(
                    build(R.TopicPartition, topic=t, partitions=tuple(sorted(ps)))
                    for t, ps in sorted(standby.items())
                ),
            )
            for (host, port), active, standby in result.partitions_by_endpoint
        )
    return _answer(
        ctx,
        0,
        None,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        interval=result.heartbeat_interval_ms,
        status=tuple(build(R.Status, status_code=c, status_detail=d) for c, d in status),
        active_tasks=_task_ids(R, result.active),
        standby_tasks=_task_ids(R, result.standby),
        warmup_tasks=_task_ids(R, result.warmup),
        endpoint_epoch=result.endpoint_information_epoch,
        endpoints=endpoints,
    )
