"""Metadata (key 3), versions 0-13.

Brokers (this broker and any other registered one), cluster id (v2+), controller id (v1+), and
per topic its error, name, topic id (v10+, always the real id), internal flag and partitions with
leader, leader epoch (v7+), replicas, ISR and offline replicas (v5+). A null topic list means all
topics. Missing topics are auto-created when the request allows it (v4+; always for older
versions) and auto.create.topics.enable is true, with num.partitions and
default.replication.factor, asynchronously as Kafka 4.4 does (server/topics.py): the answer is
UNKNOWN_TOPIC_OR_PARTITION with no partitions, and the topic exists shortly after (clients retry);
without auto-creation, UNKNOWN_TOPIC_OR_PARTITION as well. Invalid names get
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

The response is written by hand (protocol/metadata_response.py) from per-topic blocks cached
until the topic's leaders, epochs, ISR, replicas or the live brokers change
(server/metadata_cache.py): Metadata for many partitions costs about a copy of the bytes. What
depends on the principal (which topics are shown, authorized operations) is decided per request,
outside the cache.
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata.acl_model import CLUSTER_NAME
from kafkapy.metadata.models import listener_endpoints
from kafkapy.metadata.names import INTERNAL_TOPICS, validate_topic_name
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.metadata_response import (
    BrokerMetadata,
    encode_metadata_response,
    encode_topic_head,
    encode_topic_tail,
)

from ..error_response import RequestError
from ..live_brokers import controller_id, live_brokers
from ..registry import api
from ..request_context import CloseConnection, RequestContext
from ..responses import RawResponse
from ..security.authorization import (
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


def error_entry(version, name, error, topic_id=None, internal=False, ops=NOT_REQUESTED):
    """The encoded entry of a topic that is not described (an error and no partitions)."""
    head = encode_topic_head(version, error, name, topic_id, internal, ())
    return head + encode_topic_tail(version, ops)


def _named_topic(ctx, name, allow_auto, described, with_ops=False):
    """The entry of a topic asked for by name (auto-created when allowed)."""
    broker = ctx.broker
    version = ctx.version
    if not authorize(ctx, DESCRIBE, TOPIC, name):
        return error_entry(version, name, ErrorCode.topic_authorization_failed)
    info = broker.topics.get(name)
    if info is not None:
        return described(info)
    # as Kafka: a topic the client may describe has its authorized operations even when the
    # answer is an error
    ops = authorized_operations(ctx, TOPIC, name) if with_ops else NOT_REQUESTED
    if validate_topic_name(name) is not None:
        return error_entry(version, name, ErrorCode.invalid_topic_exception, ops=ops)
    if not (allow_auto and broker.config.auto_create_topics_enable):
        return error_entry(version, name, ErrorCode.unknown_topic_or_partition, ops=ops)
    if not (authorize_cluster(ctx, CREATE) or authorize(ctx, CREATE, TOPIC, name)):
        return error_entry(
            version, name, ErrorCode.topic_authorization_failed, internal=name in INTERNAL_TOPICS
        )
    broker.topics.request_auto_create(name)
    return error_entry(version, name, ErrorCode.unknown_topic_or_partition, ops=ops)


@api("Metadata")
async def handle(ctx: RequestContext, request: Any) -> Any:
    broker = ctx.broker
    if broker.replicas is not None and broker.replicas.session_fence.fenced:
        # cut off from ZooKeeper past its session: what this broker knows of leaders is stale;
        # the client asks another broker (server/replication/session_fence.py)
        raise CloseConnection("ZooKeeper unreachable past the session timeout: no metadata here")
    version = ctx.version
    topics = broker.topics
    cache = topics.metadata_blocks
    allow_auto = getattr(request, "allow_auto_topic_creation", True)
    with_ops = getattr(request, "include_topic_authorized_operations", False)
    live = live_brokers(broker)
    live_ids = frozenset(live)

    def described(info):
        ops = authorized_operations(ctx, TOPIC, info.name) if with_ops else NOT_REQUESTED
        return cache.head(version, info, live_ids) + encode_topic_tail(version, ops)

    entries = []
    if version < 12 and request.topics:
        for t in request.topics:  # as Kafka: topic ids are served from v12
            if t.name is None:
                raise RequestError(
                    ErrorCode.invalid_request,
                    f"Topic name can not be null for version {version}",
                )
            if getattr(t, "topic_id", None) is not None:
                raise RequestError(
                    ErrorCode.invalid_request,
                    f"Topic IDs are not supported in requests for version {version}",
                )
    if request.topics is None or (version == 0 and not request.topics):  # v0: [] = all
        names = sorted(topics.by_name)
        if broker.authorizer is not None:
            allowed = authorized_names(ctx, DESCRIBE, TOPIC, names)
            names = [n for n in names if n in allowed]
        entries = [described(topics.get(n)) for n in names]
    else:
        for t in request.topics:
            name = t.name
            if name is not None:
                entries.append(_named_topic(ctx, name, allow_auto, described, with_ops))
                continue
            tid = getattr(t, "topic_id", None)
            info = topics.get_by_id(tid) if tid is not None else None
            if info is None:
                entries.append(error_entry(version, None, ErrorCode.unknown_topic_id, tid))
            elif not authorize(ctx, DESCRIBE, TOPIC, info.name):
                entries.append(
                    error_entry(version, None, ErrorCode.topic_authorization_failed, tid)
                )
            else:
                entries.append(described(info))
    cluster_ops = NOT_REQUESTED
    if getattr(request, "include_cluster_authorized_operations", False):
        cluster_ops = 0
        if authorize_cluster(ctx, DESCRIBE):
            cluster_ops = authorized_operations(ctx, CLUSTER, CLUSTER_NAME)
    brokers = [
        BrokerMetadata(b, e.host, e.port, info.rack)
        for b, info, e in listener_endpoints(live, ctx.session.listener_name)
    ]
    controller = controller_id(broker)
    throttle = 0
    quotas = broker.client_quotas
    if quotas.request.enabled:  # a hand-written response: the request quota is applied here
        throttle = quotas.request_throttle(ctx)
        quotas.mute(ctx, throttle)
    return RawResponse(
        [
            encode_metadata_response(
                version,
                brokers,
                broker.cluster_id,
                -1 if controller is None else controller,
                entries,
                cluster_authorized_operations=cluster_ops,
                throttle_ms=throttle,
            )
        ]
    )
