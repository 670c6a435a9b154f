"""CreateTopics (key 19), versions 2-7.

Validates as Kafka does (name, existing topic, partitions, replication factor, replica
assignment, configs) and answers per topic with Kafka's error codes and messages. -1 partitions or
replication factor take num.partitions / default.replication.factor. validate_only checks without
creating. From v5 the response echoes the partition count, replication factor and the topic's
effective configs; from v7 the new topic id.

In ZooKeeper mode the controller creates the new partitions' states; with timeout_ms > 0 the
answer waits (up to timeout_ms) until this broker knows a leader for every new partition, and a
topic still without is answered REQUEST_TIMED_OUT (it is created all the same), as Kafka does.
A timeout_ms of 0 or less is past the controller's deadline (server/controller_deadline.py):
every topic is answered REQUEST_TIMED_OUT and none is created, as Kafka 4.4 does.

Authorization: CREATE on the cluster, else on each topic (TOPIC_AUTHORIZATION_FAILED,
"Authorization failed."). A topic the request may not DESCRIBE_CONFIGS is answered without its
partition count, replication factor and configs, and with topic_config_error_code
TOPIC_AUTHORIZATION_FAILED (v5+), as Kafka does.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..controller_deadline import deadline_passed
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import (
    CREATE,
    DESCRIBE_CONFIGS,
    TOPIC,
    authorize_cluster,
    authorized_names,
)
from ..topics import TopicError
from .describe_configs import CONFIG_SOURCES, topic_config_entries


@api("CreateTopics")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    registry = ctx.broker.topics
    results: list[Any] = []
    created: dict[str, int] = {}  # topic -> index in results
    seen: dict[str, int] = {}
    for t in request.topics:
        seen[t.name] = seen.get(t.name, 0) + 1
    may_create = set(seen) if authorize_cluster(ctx, CREATE) else authorized_names(
        ctx, CREATE, TOPIC, seen
    )
    may_describe = authorized_names(ctx, DESCRIBE_CONFIGS, TOPIC, seen)
    to_controller = [n for n, count in seen.items() if count == 1 and n in may_create]
    if to_controller and deadline_passed(request.timeout):
        return build(R.CreateTopicsResponse, throttle_time=THROTTLE_NONE, topics=tuple(
            build(R.CreatableTopicResult, name=t.name, topic_id=uuid.UUID(int=0),
                  error_code=ErrorCode.request_timed_out, error_message=None,
                  num_partitions=-1, replication_factor=-1,
                  configs=None if ctx.version < 5 else (),
                  topic_config_error_code=ErrorCode.none)
            for t in request.topics))
    for t in request.topics:
        assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments} or None
        configs = {c.name: c.value for c in t.configs}
        topic_id = uuid.UUID(int=0)
        partitions, rf = -1, -1
        entries = None
        try:
            if seen[t.name] > 1:
                raise TopicError(
                    ErrorCode.invalid_request, "Duplicate topic name in CreateTopics request."
                )
            if t.name not in may_create:
                raise TopicError(ErrorCode.topic_authorization_failed, "Authorization failed.")
            if any(v is None for v in configs.values()):
                raise TopicError(
                    ErrorCode.invalid_config, "Null value not supported for topic configs"
                )
            if request.validate_only:
                partitions, rf, _ = registry.check_new_topic(
                    t.name, t.num_partitions, t.replication_factor, assignment, configs
                )
            else:
                info = registry.create(
                    t.name, t.num_partitions, t.replication_factor, assignment, configs
                )
                topic_id = info.topic_id
                created[t.name] = len(results)
                partitions = len(info.partitions)
                rf = len(next(iter(info.partitions.values())))
            entries = (
                None
                if ctx.version < 5
                else tuple(
                    build(
                        R.CreatableTopicConfigs,
                        name=name,
                        value=value,
                        read_only=False,
                        config_source=CONFIG_SOURCES[source],
                        is_sensitive=False,
                    )
                    for name, value, source, _syn, _type in topic_config_entries(
                        ctx.broker, configs
                    )
                )
            )
            error, message = ErrorCode.none, None
        except TopicError as e:
            error, message = e.code, e.message
        config_error = ErrorCode.none
        if t.name not in may_describe:
            if error == ErrorCode.none or error in (
                ErrorCode.invalid_request, ErrorCode.topic_authorization_failed
            ):
                config_error = ErrorCode.topic_authorization_failed
            partitions, rf, entries = -1, -1, None if ctx.version < 5 else ()
        results.append(
            build(
                R.CreatableTopicResult,
                name=t.name,
                topic_id=topic_id,
                error_code=error,
                error_message=message,
                num_partitions=partitions,
                replication_factor=rf,
                configs=entries,
                topic_config_error_code=config_error,
            )
        )
    timeout = request.timeout.total_seconds()
    if created and ctx.broker.replicas is not None and timeout > 0:
        for name in await registry.wait_for_leaders(created, timeout):
            results[created[name]] = dataclasses.replace(
                results[created[name]], error_code=ErrorCode.request_timed_out, error_message=None
            )
    return build(R.CreateTopicsResponse, throttle_time=THROTTLE_NONE, topics=tuple(results))
