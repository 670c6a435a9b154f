"""OffsetDelete (key 47), version 0.

Deletes committed offsets of a group (tombstones in __consumer_offsets). Group level:
GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a non-empty group that does not use the "consumer" protocol
type), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. Per partition: GROUP_SUBSCRIBED_TO_TOPIC
when a member of the group subscribes to the topic, UNKNOWN_TOPIC_OR_PARTITION for a topic or
partition that does not exist; deleting an offset that was never committed succeeds.
ZooKeeper mode: the answer waits until the tombstones reached the ISR of the group's
__consumer_offsets partition (offsets.commit.timeout.ms), else COORDINATOR_NOT_AVAILABLE or
NOT_COORDINATOR (group_service).

Authorization: DELETE on the group (else a top-level GROUP_AUTHORIZATION_FAILED), READ on each
topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DELETE, READ, TOPIC, authorized_names
from .group_common import (
    GROUP_DENIED,
    TOPIC_DENIED,
    UNKNOWN_TOPIC,
    group_denied,
    partition_exists,
    service,
)


@api("OffsetDelete")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    svc = service(ctx)
    if group_denied(ctx, request.group_id, DELETE):
        return build(
            R.OffsetDeleteResponse, error_code=GROUP_DENIED, throttle_time=THROTTLE_NONE, topics=()
        )
    errors = {}
    wanted = []
    allowed = authorized_names(ctx, READ, TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        for p in t.partitions:
            if t.name not in allowed:
                errors[(t.name, p.partition_index)] = TOPIC_DENIED
            elif partition_exists(ctx, t.name, p.partition_index):
                wanted.append((t.name, p.partition_index))
            else:
                errors[(t.name, p.partition_index)] = UNKNOWN_TOPIC
    error, results = svc.coordinator.delete_offsets(request.group_id, wanted, now_ms())
    svc.kick()
    if error == ErrorCode.none and any(e == 0 for e in results.values()):
        error = await svc.replicated(request.group_id)
    if error != ErrorCode.none:
        return build(
            R.OffsetDeleteResponse, error_code=error, throttle_time=THROTTLE_NONE, topics=()
        )
    errors.update(results)
    return build(
        R.OffsetDeleteResponse,
        error_code=ErrorCode.none,
        throttle_time=THROTTLE_NONE,
        topics=tuple(
            build(
                R.OffsetDeleteResponseTopic,
                name=t.name,
                partitions=tuple(
                    build(
                        R.OffsetDeleteResponsePartition,
                        partition_index=p.partition_index,
                        error_code=errors[(t.name, p.partition_index)],
                    )
                    for p in t.partitions
                ),
            )
            for t in request.topics
        ),
    )
