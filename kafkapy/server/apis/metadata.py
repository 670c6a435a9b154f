"""Metadata (key 3), versions 0-13.

Brokers (this broker and any other registered one), cluster id (v2+), controller id (v1+), and
per topic its error, name, topic id (v10+, always the real id), internal flag and partitions with
leader, leader epoch (v7+), replicas, ISR and offline replicas (v5+). A null topic list means all
topics. Missing topics are auto-created when the request allows it (v4+; always for older
versions) and auto.create.topics.enable is true, with num.partitions and
default.replication.factor; otherwise UNKNOWN_TOPIC_OR_PARTITION. Invalid names get
INVALID_TOPIC_EXCEPTION. Authorized operations are not computed (Kafka's "not requested" value
-2147483648 is returned). Topic-id lookups (v12+ with a null name) answer UNKNOWN_TOPIC_ID when the
id is unknown; in v10-11 a null name or a topic id makes the request INVALID_REQUEST, as in Kafka.
"""

from __future__ import annotations

import uuid

from kafkapy.metadata.models import listener_endpoints
from kafkapy.metadata.names import validate_topic_name
from kafkapy.protocol.errors import ErrorCode

from ..error_response import RequestError
from ..registry import api
from ..responses import THROTTLE_NONE, build
from ..topics import TopicError

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def topic_entry(ctx, info, live, error=ErrorCode.none):
    R = ctx.R
    parts = []
    for p in sorted(info.partitions):
        replicas = info.partitions[p]
        state = info.states.get(p)
        leader = state.leader if state else -1
        parts.append(
            build(
                R.MetadataResponsePartition,
                error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                partition_index=p,
                leader_id=leader,
                leader_epoch=state.leader_epoch if state else -1,
                replica_nodes=tuple(replicas),
                isr_nodes=tuple(state.isr) if state else (),
                offline_replicas=tuple(b for b in replicas if b not in live),
            )
        )
    return build(
        R.MetadataResponseTopic,
        error_code=error,
        name=info.name,
        topic_id=info.topic_id,
        is_internal=info.name in INTERNAL_TOPICS,
        partitions=tuple(parts),
    )


def error_entry(ctx, name, error, topic_id=None):
    return build(
        ctx.R.MetadataResponseTopic,
        error_code=error,
        name=name,
        topic_id=topic_id or uuid.UUID(int=0),
        is_internal=False,
        partitions=(),
    )


@api("Metadata")
async def handle(ctx, request):
    broker = ctx.broker
    R = ctx.R
    topics = broker.topics
    allow_auto = getattr(request, "allow_auto_topic_creation", True)
    live = broker.cluster.list_brokers()
    entries = []
    if ctx.version < 12 and request.topics:
        for t in request.topics:  # as Kafka: topic ids are served from v12
            if t.name is None:
                raise RequestError(
                    ErrorCode.invalid_request,
                    f"Topic name can not be null for version {ctx.version}",
                )
            if getattr(t, "topic_id", None) is not None:
                raise RequestError(
                    ErrorCode.invalid_request,
                    f"Topic IDs are not supported in requests for version {ctx.version}",
                )
    if request.topics is None or (ctx.version == 0 and not request.topics):  # v0: [] = all
        entries = [topic_entry(ctx, topics.get(n), live) for n in sorted(topics.by_name)]
    else:
        for t in request.topics:
            name = t.name
            if name is None:
                tid = getattr(t, "topic_id", None)
                info = topics.get_by_id(tid) if tid is not None else None
                if info is None:
                    entries.append(error_entry(ctx, None, ErrorCode.unknown_topic_id, tid))
                else:
                    entries.append(topic_entry(ctx, info, live))
                continue
            info = topics.get(name)
            if info is not None:
                entries.append(topic_entry(ctx, info, live))
                continue
            if validate_topic_name(name) is not None:
                entries.append(error_entry(ctx, name, ErrorCode.invalid_topic_exception))
                continue
            if allow_auto and broker.config.auto_create_topics_enable:
                try:
                    info = topics.auto_create(name)
                except TopicError as e:
                    entries.append(error_entry(ctx, name, e.code))
                    continue
                entries.append(topic_entry(ctx, info, live))
            else:
                entries.append(error_entry(ctx, name, ErrorCode.unknown_topic_or_partition))
    brokers = tuple(
        build(R.MetadataResponseBroker, node_id=b, host=e.host, port=e.port, rack=info.rack)
        for b, info, e in listener_endpoints(live, ctx.session.listener_name)
    )
    controller = broker.cluster.controller_id()
    return build(
        R.MetadataResponse,
        throttle_time=THROTTLE_NONE,
        brokers=brokers,
        cluster_id=broker.cluster_id,
        controller_id=-1 if controller is None else controller,
        topics=tuple(entries),
        error_code=ErrorCode.none,
    )
