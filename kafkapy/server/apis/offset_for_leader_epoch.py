"""OffsetForLeaderEpoch (key 23), versions 2-4.

For each partition, the end offset of the requested leader epoch (the start offset of the next
higher epoch, or the log end offset for the current epoch) and the largest epoch <= the requested
one, from the partition's leader-epoch cache; UNDEFINED (-1, -1) when the epoch is older than
anything retained. The client's current_leader_epoch is checked (FENCED_LEADER_EPOCH,
UNKNOWN_LEADER_EPOCH).

Authorization: CLUSTER_ACTION on the cluster (brokers) allows every topic, otherwise DESCRIBE on
each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..partition_lookup import lookup
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import (
    CLUSTER_ACTION,
    DESCRIBE,
    TOPIC,
    authorize_cluster,
    authorized_names,
)


@api("OffsetForLeaderEpoch")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    topics = []
    names = [t.topic for t in request.topics]
    if ctx.broker.authorizer is None or authorize_cluster(ctx, CLUSTER_ACTION):
        allowed = set(names)
    else:
        allowed = authorized_names(ctx, DESCRIBE, TOPIC, names)
    for t in request.topics:
        parts = []
        for p in t.partitions:
            ref = lookup(ctx.broker, t.topic, p.partition, p.current_leader_epoch)
            error = ref.error if t.topic in allowed else ErrorCode.topic_authorization_failed
            if error != ErrorCode.none:
                parts.append(
                    build(
                        R.EpochEndOffset,
                        error_code=error,
                        partition=p.partition,
                        leader_epoch=-1,
                        end_offset=-1,
                    )
                )
                continue
            epoch, end = ref.log.end_offset_for_epoch(p.leader_epoch)
            parts.append(
                build(
                    R.EpochEndOffset,
                    error_code=ErrorCode.none,
                    partition=p.partition,
                    leader_epoch=epoch,
                    end_offset=end,
                )
            )
        topics.append(build(R.OffsetForLeaderTopicResult, topic=t.topic, partitions=tuple(parts)))
    return build(R.OffsetForLeaderEpochResponse, throttle_time=THROTTLE_NONE, topics=tuple(topics))
