"""DescribeTopicPartitions (key 75), version 0 (KIP-966; what current Java admin clients'
describeTopics sends when the broker advertises it).

Topics are described in name order: the requested ones, or every topic when the list is empty.
A cursor (topic name, partition index) starts the walk at that topic and partition, skipping
names before it; with a topic list the cursor's topic must be in it and its partition index must
be >= 0, else every requested topic gets INVALID_REQUEST. At most response_partition_limit
partitions are returned (capped by max.request.partition.size.limit, default 2000, and at least
1); when a topic's partitions do not all fit, or the limit is used up before the next topic,
next_cursor names where to continue (Kafka's rules: the topic and its next partition, or the
next topic at partition 0). Each topic carries its id, internal flag and partitions with leader
(-1 when the leader is not a live broker), leader epoch, replicas, ISR, offline replicas (replicas
on brokers not registered) and empty eligible-leader-replica lists (ELR is a KRaft feature that
is never enabled here). A requested topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION
(INVALID_TOPIC_EXCEPTION for an invalid name) with the zero topic id; such entries are left out
when describing every topic. Nothing is auto-created.

Authorization (Kafka's DescribeTopicPartitionsRequestHandler): a topic needs DESCRIBE; when
describing every topic the others are left out, a requested one gets TOPIC_AUTHORIZATION_FAILED
with the zero topic id (after the described ones). Every described topic carries its authorized
operations.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from kafkapy.metadata.names import INTERNAL_TOPICS, validate_topic_name
from kafkapy.protocol.errors import ErrorCode

from ..live_brokers import live_brokers
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TOPIC, authorize
from ..security.authorization import authorized_operations as operations

ZERO_UUID = uuid.UUID(int=0)
DEFAULT_PARTITION_SIZE_LIMIT = 2000


def _broker_limit(broker) -> int:
    try:
        value = broker.config.get("max.request.partition.size.limit")
        return int(value) if value is not None else DEFAULT_PARTITION_SIZE_LIMIT
    except (AttributeError, TypeError, ValueError):
        return DEFAULT_PARTITION_SIZE_LIMIT


def _partition(R, info, p: int, live) -> object:
    replicas = info.partitions[p]
    state = info.states.get(p)
    leader = state.leader if state is not None and state.leader in live else -1
    return build(
        R.DescribeTopicPartitionsResponsePartition,
        error_code=ErrorCode.none,
        partition_index=p,
        leader_id=leader,
        leader_epoch=state.leader_epoch if state is not None else -1,
        replica_nodes=tuple(replicas),
        isr_nodes=tuple(state.isr) if state is not None else (),
        eligible_leader_replicas=(),
        last_known_elr=(),
        offline_replicas=tuple(b for b in replicas if b not in live),
    )


def _error_topic(R, name, code) -> object:
    return build(
        R.DescribeTopicPartitionsResponseTopic,
        error_code=code,
        name=name,
        topic_id=ZERO_UUID,
        is_internal=name in INTERNAL_TOPICS,
        partitions=(),
    )


@api("DescribeTopicPartitions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    requested = [t.name for t in request.topics]
    fetch_all = not requested
    cursor = request.cursor
    if cursor is not None and (
        cursor.partition_index < 0 or (not fetch_all and cursor.topic_name not in requested)
    ):
        return build(
            R.DescribeTopicPartitionsResponse,
            throttle_time=THROTTLE_NONE,
            topics=tuple(_error_topic(R, n, ErrorCode.invalid_request) for n in requested),
            next_cursor=None,
        )
    names = sorted(set(broker.topics.by_name) if fetch_all else set(requested))
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    allowed = {n for n in names if authorize(ctx, DESCRIBE, TOPIC, n)}
    denied = [] if fetch_all else [n for n in names if n not in allowed]
    names = [n for n in names if n in allowed]
    remaining = max(min(_broker_limit(broker), request.response_partition_limit), 1)
    live = live_brokers(broker)
    topics: list[Any] = []
    next_cursor = None
    for name in names:
        if remaining == 0:
            next_cursor = build(R.Cursor, topic_name=name, partition_index=0)
            break
        info = broker.topics.get(name)
        if info is None:
            if not fetch_all:
                code = (
                    ErrorCode.unknown_topic_or_partition
                    if validate_topic_name(name) is None
                    else ErrorCode.invalid_topic_exception
                )
                topics.append(_error_topic(R, name, code))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        count = info.num_partitions
        upper = min(count, start + remaining)
        parts = tuple(
            _partition(R, info, p, live) for p in range(start, upper) if p in info.partitions
        )
        topics.append(
            build(
                R.DescribeTopicPartitionsResponseTopic,
                error_code=ErrorCode.none,
                name=name,
                topic_id=info.topic_id,
                is_internal=name in INTERNAL_TOPICS,
                partitions=parts,
            )
        )
        if upper < count:
            next_cursor = build(R.Cursor, topic_name=name, partition_index=upper)
            break
        remaining -= len(parts)
    topics = [
        dataclasses.replace(t, topic_authorized_operations=operations(ctx, TOPIC, t.name))
        for t in topics
    ]
    topics += [_error_topic(R, n, ErrorCode.topic_authorization_failed) for n in denied]
    return build(
        R.DescribeTopicPartitionsResponse,
        throttle_time=THROTTLE_NONE,
        topics=tuple(topics),
        next_cursor=next_cursor,
    )
