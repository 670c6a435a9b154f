"""AlterPartitionReassignments (key 45), versions 0-1.

Served by the controller, which records each request in /brokers/topics/T (adding_replicas /
removing_replicas, as ZooKeeper-mode Kafka) and drives the move (kafkapy.replication
.topic_controller); the answer goes as soon as the reassignment is recorded, not when it is done.
Null replicas cancel a partition's ongoing reassignment (back to its original replicas). A broker
that is not the controller answers NOT_CONTROLLER at the top level, with no partitions (clients
look the controller up again and retry). Per partition, Kafka's errors:
UNKNOWN_TOPIC_OR_PARTITION (no such topic or partition, or the topic is being deleted),
INVALID_REPLICA_ASSIGNMENT (empty list, duplicate or negative ids, new replicas on brokers that
are not registered), NO_REASSIGNMENT_IN_PROGRESS (cancelling where nothing moves). A partition
named twice takes its last entry. v1 (KIP-860) carries allow_replication_factor_change (default
true, echoed in the answer): when false, a reassignment to another number of replicas than the
partition's (its target's while one is in progress) is INVALID_REPLICATION_FACTOR "The replication
factor is changed from X to Y", checked after the replica list's own checks and before anything is
recorded, as Kafka's ReplicationControlManager checks it. The embedded single broker holds every
replica already: a valid request changes nothing.

Authorization: ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED, top-level and on every
partition). Then a timeout_ms of 0 or less is past the controller's deadline
(server/controller_deadline.py): REQUEST_TIMED_OUT, top-level and on every partition, nothing
recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trio

from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication import topic_controller
from kafkapy.replication.controller import NotControllerError
from kafkapy.replication.reassignment import Rejection, ReplicaAssignment, check_request

from ..controller_deadline import deadline_passed
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


async def _reassign(
    broker, wanted: dict[tuple[str, int], Sequence[int] | None]
) -> dict[tuple[str, int], Rejection | None] | None:
    """Record the requested reassignments (checked as Kafka's controller does); None when this
    broker is not the controller."""
    rm = broker.replicas
    if rm is None:
        return _embedded(broker, wanted)
    try:
        async with rm.controller_loop.lock:
            if not rm.controller_loop.controller.active:
                raise NotControllerError()
            return await trio.to_thread.run_sync(
                topic_controller.alter, rm.controller_loop.controller, wanted
            )
    except NotControllerError:
        return None


def _replication_factor_changes(
    broker, wanted: dict[tuple[str, int], Sequence[int] | None]
) -> dict[tuple[str, int], Rejection]:
    """The reassignments that change a partition's replication factor (v1, when not allowed)."""
    registered = set(broker.cluster.list_brokers())
    out: dict[tuple[str, int], Rejection] = {}
    for (name, p), target in wanted.items():
        info = broker.topics.get(name)
        if target is None or info is None or p not in info.partitions:
            continue
        current = ReplicaAssignment.of(info.partitions[p])
        if check_request(current, target, registered) is not None:
            continue  # the replica list's own error comes first
        factor = len(current.target) if current.reassigning else len(current.replicas)
        if factor != len(target):
            out[(name, p)] = Rejection(
                ErrorCode.invalid_replication_factor,
                f"The replication factor is changed from {factor} to {len(target)}",
            )
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
    allow_rf_change = getattr(request, "allow_replication_factor_change", True)
    if not authorize_cluster(ctx, ALTER):
        top = ErrorCode.cluster_authorization_failed
        denied = Rejection(top, CLUSTER_DENIED_MESSAGE)
        results = dict.fromkeys(wanted, denied)
    elif wanted and deadline_passed(request.timeout):  # the controller's deadline has passed
        top = ErrorCode.request_timed_out
        results = dict.fromkeys(wanted, Rejection(top, None))
    else:
        rf_changes: dict[tuple[str, int], Rejection] = {}
        if not allow_rf_change:
            rf_changes = _replication_factor_changes(broker, wanted)
        rest = {tp: target for tp, target in wanted.items() if tp not in rf_changes}
        reassigned = await _reassign(broker, rest) if rest else {}
        if reassigned is None:
            top = ErrorCode.not_controller
        elif not rf_changes:
            results = reassigned
        else:
            results = {tp: rf_changes.get(tp) or reassigned.get(tp) for tp in wanted}
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
        allow_replication_factor_change=allow_rf_change,
        error_code=top,
        error_message=None
        if top in (ErrorCode.none, ErrorCode.request_timed_out)
        else CLUSTER_DENIED_MESSAGE
        if top == ErrorCode.cluster_authorization_failed
        else "This is not the correct controller.",
        responses=tuple(
            build(R.ReassignableTopicResponse, name=name, partitions=tuple(parts))
            for name, parts in by_topic.items()
        ),
    )
