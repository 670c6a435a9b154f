"""ListPartitionReassignments (key 46), version 0.

Ongoing reassignments are read from the metadata tree, where Kafka keeps them: the
adding_replicas / removing_replicas maps of /brokers/topics/T. A partition is being reassigned
when either list is non-empty; it is reported with its full replica set and the replicas being
added and removed. A null topic list asks for every ongoing reassignment. As Kafka does, requested
topics or partitions that do not exist, and partitions not being reassigned, are silently left
out (no error), and a topic with nothing to report is omitted. Any broker answers (Kafka forwards
the request to its controller; the metadata tree is shared here). Reassignments are started with
AlterPartitionReassignments and leave the list once the controller completed them.

Authorization: DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.names import validate_topic_name
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import CLUSTER_DENIED_MESSAGE, DESCRIBE, authorize_cluster


def _assignment(store, name: str):
    got = store.get_or_none(zn.TOPIC.path(name))
    return zn.TOPIC.decode(got[0]) if got is not None else None


def ongoing(store, name: str, partitions) -> list[tuple[int, list[int], list[int], list[int]]]:
    """(partition, replicas, adding, removing) of the topic's partitions being reassigned, among
    ``partitions`` (None: all)."""
    if validate_topic_name(name) is not None:  # no such topic can exist (nor znode path)
        return []
    a = _assignment(store, name)
    if a is None:
        return []
    wanted = sorted(a.partitions) if partitions is None else partitions
    out = []
    for p in wanted:
        if p not in a.partitions:
            continue
        adding = a.adding_replicas.get(p, [])
        removing = a.removing_replicas.get(p, [])
        if adding or removing:
            out.append((p, list(a.partitions[p]), list(adding), list(removing)))
    return out


@api("ListPartitionReassignments")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    cluster = ctx.broker.cluster
    if not authorize_cluster(ctx, DESCRIBE):
        return build(
            R.ListPartitionReassignmentsResponse,
            throttle_time=THROTTLE_NONE,
            error_code=ErrorCode.cluster_authorization_failed,
            error_message=CLUSTER_DENIED_MESSAGE,
            topics=tuple(
                build(
                    R.OngoingTopicReassignment,
                    name=t.name,
                    partitions=tuple(
                        build(R.OngoingPartitionReassignment, partition_index=p, replicas=(),
                              adding_replicas=(), removing_replicas=())
                        for p in t.partition_indexes
                    ),
                )
                for t in request.topics or ()
            ),
        )
    wanted: list[tuple[str, list[int] | None]]
    if request.topics is None:
        wanted = [(name, None) for name in cluster.list_topics()]
    else:
        wanted = [(t.name, list(t.partition_indexes)) for t in request.topics]
    topics = []
    for name, partitions in wanted:
        found = ongoing(cluster.store, name, partitions)
        if not found:
            continue
        parts = tuple(
            build(
                R.OngoingPartitionReassignment,
                partition_index=p,
                replicas=tuple(replicas),
                adding_replicas=tuple(adding),
                removing_replicas=tuple(removing),
            )
            for p, replicas, adding, removing in found
        )
        topics.append(build(R.OngoingTopicReassignment, name=name, partitions=parts))
    return build(
        R.ListPartitionReassignmentsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        error_message=None,
        topics=tuple(topics),
    )
