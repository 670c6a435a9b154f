"""Metadata (key 3), versions 0-13.

Brokers (this broker and any other registered one), cluster id (v2+), controller id (v1+), and
per topic its error, name, topic id (v10+, always the real id), internal flag and partitions with
leader, leader epoch (v7+), replicas, ISR and offline replicas (v5+). A null topic list means all
topics. Missing topics are auto-created when the request allows it (v4+; always for older
versions) and auto.create.topics.enable is true, with num.partitions and
default.replication.factor; otherwise UNKNOWN_TOPIC_OR_PARTITION. Invalid names get
INVALID_TOPIC_EXCEPTION. Topic-id lookups (v12+ with a null name) answer UNKNOWN_TOPIC_ID when
the id is unknown; in v10-11 a null name or a topic id makes the request INVALID_REQUEST, as in
Kafka.

Authorization (Kafka 3.9's handleTopicMetadataRequest): a topic needs DESCRIBE. Listing all
topics silently leaves out the others; a topic asked for by name gets TOPIC_AUTHORIZATION_FAILED
(with the zero topic id, whether it exists or not: its existence is not disclosed), one asked for
by id gets it with its id. Auto-creation also needs CREATE on the cluster or on the topic, else
TOPIC_AUTHORIZATION_FAILED. When asked (v8+), each described topic carries its authorized
operations and (v8-10) the response the cluster's (0 without DESCRIBE on the cluster); otherwise
Kafka's "not requested" value -2147483648.
"""

from __future__ import annotations

import uuid

from kafkapy.metadata.acl_model import CLUSTER_NAME
from kafkapy.metadata.models import listener_endpoints
from kafkapy.metadata.names import validate_topic_name
from kafkapy.protocol.errors import ErrorCode

from ..authorization import (
    CLUSTER,
    CREATE,
    DESCRIBE,
    NOT_REQUESTED,
    TOPIC,
    authorize,
    authorize_cluster,
    authorized_names,
    authorized_operations,
)
from ..error_response import RequestError
from ..registry import api
from ..responses import THROTTLE_NONE, build
from ..topics import TopicError

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def topic_entry(ctx, info, live, error=ErrorCode.none, operations=NOT_REQUESTED):
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
        topic_authorized_operations=operations,
    )


def error_entry(ctx, name, error, topic_id=None, internal=False):
    return build(
        ctx.R.MetadataResponseTopic,
        error_code=error,
        name=name,
        topic_id=topic_id or uuid.UUID(int=0),
        is_internal=internal,
        partitions=(),
        topic_authorized_operations=NOT_REQUESTED,
    )


def _named_topic(ctx, name, allow_auto, live, described):
    """The entry of a topic asked for by name (auto-created when allowed)."""
    broker = ctx.broker
    if not authorize(ctx, DESCRIBE, TOPIC, name):
        return error_entry(ctx, name, ErrorCode.topic_authorization_failed)
    info = broker.topics.get(name)
    if info is not None:
        return described(info)
    if validate_topic_name(name) is not None:
        return error_entry(ctx, name, ErrorCode.invalid_topic_exception)
    if not (allow_auto and broker.config.auto_create_topics_enable):
        return error_entry(ctx, name, ErrorCode.unknown_topic_or_partition)
    if not (authorize_cluster(ctx, CREATE) or authorize(ctx, CREATE, TOPIC, name)):
        return error_entry(ctx, name, ErrorCode.topic_authorization_failed,
                           internal=name in INTERNAL_TOPICS)
    try:
        info = broker.topics.auto_create(name)
    except TopicError as e:
        return error_entry(ctx, name, e.code)
    return described(info)


@api("Metadata")
async def handle(ctx, request):
    broker = ctx.broker
    R = ctx.R
    topics = broker.topics
    allow_auto = getattr(request, "allow_auto_topic_creation", True)
    with_ops = getattr(request, "include_topic_authorized_operations", False)
    live = broker.cluster.list_brokers()

    def described(info):
        ops = authorized_operations(ctx, TOPIC, info.name) if with_ops else NOT_REQUESTED
        return topic_entry(ctx, info, live, operations=ops)

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
        names = sorted(topics.by_name)
        if broker.authorizer is not None:
            allowed = authorized_names(ctx, DESCRIBE, TOPIC, names)
            names = [n for n in names if n in allowed]
        entries = [described(topics.get(n)) for n in names]
    else:
        for t in request.topics:
            name = t.name
            if name is not None:
                entries.append(_named_topic(ctx, name, allow_auto, live, described))
                continue
            tid = getattr(t, "topic_id", None)
            info = topics.get_by_id(tid) if tid is not None else None
            if info is None:
                entries.append(error_entry(ctx, None, ErrorCode.unknown_topic_id, tid))
            elif not authorize(ctx, DESCRIBE, TOPIC, info.name):
                entries.append(error_entry(ctx, None, ErrorCode.topic_authorization_failed, tid))
            else:
                entries.append(described(info))
    cluster_ops = NOT_REQUESTED
    if getattr(request, "include_cluster_authorized_operations", False):
        cluster_ops = 0
        if authorize_cluster(ctx, DESCRIBE):
            cluster_ops = authorized_operations(ctx, CLUSTER, CLUSTER_NAME)
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
        cluster_authorized_operations=cluster_ops,
    )
