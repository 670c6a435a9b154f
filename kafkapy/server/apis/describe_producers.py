"""DescribeProducers (key 61), version 0.

For each requested partition, the idempotent and transactional producers active on the
partition's log as this broker's producer state has them (loaded from the latest producer
snapshot and the batches after it, so it survives restarts): producer id, current epoch, last
sequence (-1 when the epoch has no data batch yet), the max timestamp of its last batch, the
coordinator epoch of the last transaction marker written for it (-1 if none) and the first
offset of its open transaction (-1 if none: what ``kafka-transactions.sh find-hanging`` looks
at). Errors as Kafka: a partition the cluster does not know gets UNKNOWN_TOPIC_OR_PARTITION; one
this broker does not lead (no local log, or in ZooKeeper mode a follower replica) gets
NOT_LEADER_OR_FOLLOWER.

Authorization: READ on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import READ, TOPIC, authorized_names


def _leader_log(broker, topic: str, partition: int):
    """(error, log) for a partition this broker leads."""
    info = broker.topics.get(topic)
    if info is None or partition not in info.partitions:
        return ErrorCode.unknown_topic_or_partition, None
    plog = broker.topics.log(topic, partition)
    if plog is None:
        return ErrorCode.not_leader_or_follower, None
    replicas = broker.replicas
    if replicas is not None:
        if replicas.leader_partition(topic, partition) is None:
            return ErrorCode.not_leader_or_follower, None
    else:
        state = info.states.get(partition)
        if state is not None and state.leader != broker.broker_id:
            return ErrorCode.not_leader_or_follower, None
    return ErrorCode.none, plog


def _producers(R, plog) -> tuple:
    return tuple(
        build(
            R.ProducerState,
            producer_id=entry.producer_id,
            producer_epoch=entry.epoch,
            last_sequence=entry.last_seq,
            last_timestamp=getattr(entry, "last_timestamp", -1),
            coordinator_epoch=entry.coordinator_epoch,
            current_txn_start_offset=entry.current_txn_first_offset,
        )
        for _, entry in sorted(plog.producer_state.producers.items())
    )


@api("DescribeProducers")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    topics = []
    may_read = authorized_names(ctx, READ, TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        parts = []
        for p in t.partition_indexes:
            if t.name in may_read:
                error, plog = _leader_log(ctx.broker, t.name, p)
            else:
                error, plog = ErrorCode.topic_authorization_failed, None
            parts.append(
                build(
                    R.PartitionResponse,
                    partition_index=p,
                    error_code=error,
                    error_message=None,
                    active_producers=_producers(R, plog) if plog is not None else (),
                )
            )
        topics.append(build(R.TopicResponse, name=t.name, partitions=tuple(parts)))
    return build(R.DescribeProducersResponse, throttle_time=THROTTLE_NONE, topics=tuple(topics))
