"""AlterPartitionReassignments (key 45), version 0 (Kafka 4.0's only version).

Served by the controller, which records each request in /brokers/topics/T (adding_replicas /
removing_replicas, as ZooKeeper-mode Kafka) and drives the move (kafkapy.replication
.topic_controller); the answer goes as soon as the reassignment is recorded, not when it is done.
Null replicas cancel a partition's ongoing reassignment (back to its original replicas). A broker
that is not the controller answers NOT_CONTROLLER at the top level, with no partitions (clients
look the controller up again and retry). Per partition, Kafka's errors:
UNKNOWN_TOPIC_OR_PARTITION (no such topic or partition, or the topic is being deleted),
INVALID_REPLICA_ASSIGNMENT (empty list, duplicate or negative ids, new replicas on brokers that
are not registered), NO_REASSIGNMENT_IN_PROGRESS (cancelling where nothing moves). A partition
named twice takes its last entry. The embedded single broker holds every replica already: a valid
request changes nothing.

Authorization: ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED, top-level and on every
partition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trio

from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication import topic_controller
from kafkapy.replication.controller import NotControllerError
from kafkapy.replication.reassignment import Rejection, ReplicaAssignment, check_request

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster


def _embedded(broker, wanted) -> dict[tuple[str, int], Rejection | None]:
    registered = set(broker.cluster.list_brokers())
    out: dict[tuple[str, int], Rejection | None] = {}
    for (name, p), target in wanted.items():
        info = broker.topics.get(name)
        current = (
            ReplicaAssignment.of(info.partitions[p])
            if info is not None and p in info.partitions
            else None
        )
        out[(name, p)] = check_request(current, target, registered)
    return out


@api("AlterPartitionReassignments")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    wanted: dict[tuple[str, int], Sequence[int] | None] = {}
    for t in request.topics:
        for part in t.partitions:
            reps = None if part.replicas is None else [int(b) for b in part.replicas]
            wanted[(t.name, int(part.partition_index))] = reps
    top = ErrorCode.none
    results: dict[tuple[str, int], Rejection | None] = {}
    rm = broker.replicas
    if not authorize_cluster(ctx, ALTER):
        top = ErrorCode.cluster_authorization_failed
        denied = Rejection(top, CLUSTER_DENIED_MESSAGE)
        results = dict.fromkeys(wanted, denied)
    elif rm is None:
        results = _embedded(broker, wanted)
    else:
        try:
            async with rm.controller_loop.lock:
                if not rm.controller_loop.controller.active:
                    raise NotControllerError()
                results = await trio.to_thread.run_sync(
                    topic_controller.alter, rm.controller_loop.controller, wanted
                )
        except NotControllerError:
            top, results = ErrorCode.not_controller, {}
    by_topic: dict[str, list] = {}
    for (name, p), rejected in results.items():
        by_topic.setdefault(name, []).append(
            build(
                R.ReassignablePartitionResponse,
                partition_index=p,
                error_code=ErrorCode.none if rejected is None else rejected.code,
                error_message=None if rejected is None else rejected.message,
            )
        )
    return build(
        R.AlterPartitionReassignmentsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=top,
        error_message=None
        if top == ErrorCode.none
        else CLUSTER_DENIED_MESSAGE
        if top == ErrorCode.cluster_authorization_failed
        else "This is not the correct controller.",
        responses=tuple(
            build(R.ReassignableTopicResponse, name=name, partitions=tuple(parts))
            for name, parts in by_topic.items()
        ),
    )
