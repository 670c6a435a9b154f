"""ElectLeaders (key 43), versions 0-2.

Served by the controller (clients send it there; others answer NOT_CONTROLLER). Election type 0
(preferred; the only one in v0) moves leadership to the first replica of the assignment when it
is alive and in the ISR: ELECTION_NOT_NEEDED if it already leads, PREFERRED_LEADER_NOT_AVAILABLE
otherwise. Type 1 (unclean) elects a live replica, outside the ISR if needed, for partitions
without a live leader: ELECTION_NOT_NEEDED when there is one, ELIGIBLE_LEADERS_NOT_AVAILABLE when
no replica is alive. A null partition list means every partition; then partitions needing no
election are left out of the answer. Unknown partitions: UNKNOWN_TOPIC_OR_PARTITION. The embedded
single broker leads everything: ELECTION_NOT_NEEDED.

Authorization: ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED, top-level and on every
partition named). Then a timeout_ms of 0 or less is past the controller's deadline
(server/controller_deadline.py): REQUEST_TIMED_OUT, top-level and on every partition named.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication.controller import ElectionResult, NotControllerError

from ..controller_deadline import deadline_passed
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, authorize_cluster

_CODES = {
    "": ErrorCode.none,
    "not_needed": ErrorCode.election_not_needed,
    "unknown": ErrorCode.unknown_topic_or_partition,
}


def _code(err: str, election_type: int) -> ErrorCode:
    if err == "not_available":
        return (
            ErrorCode.preferred_leader_not_available
            if election_type == 0
            else ErrorCode.eligible_leaders_not_available
        )
    return _CODES.get(err, ErrorCode.unknown_server_error)


@api("ElectLeaders")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    election_type = int(getattr(request, "election_type", 0))
    wanted: dict[str, list[int]] | None = None
    if request.topic_partitions is not None:
        wanted = {}
        for tp in request.topic_partitions:
            wanted.setdefault(tp.topic, []).extend(int(p) for p in tp.partitions)
    top_error = ErrorCode.none
    if not authorize_cluster(ctx, ALTER):
        top_error = ErrorCode.cluster_authorization_failed
        results = [
            ElectionResult(name, p, "cluster_authorization_failed")
            for name, parts in (wanted or {}).items()
            for p in parts
        ]
    elif deadline_passed(request.timeout):  # the controller's deadline has passed
        top_error = ErrorCode.request_timed_out
        results = [ElectionResult(name, p, "request_timed_out")
                   for name, parts in (wanted or {}).items() for p in parts]
    elif broker.replicas is None:
        results = []
        names = sorted(broker.topics.by_name) if wanted is None else sorted(wanted)
        for name in names:
            info = broker.topics.get(name)
            parts = (sorted(info.partitions) if info else []) if wanted is None else wanted[name]
            for p in parts:
                known = info is not None and p in info.partitions
                results.append(ElectionResult(name, p, "not_needed" if known else "unknown"))
    else:
        try:
            results = await broker.replicas.controller_loop.elect_leaders(election_type, wanted)
        except NotControllerError:
            results = []
            top_error = ErrorCode.not_controller
            for name, parts in (wanted or {}).items():
                results += [ElectionResult(name, p, "not_controller") for p in parts]
    if wanted is None:
        results = [r for r in results if r.error != "not_needed"]
    by_topic: dict[str, list] = {}
    for r in results:
        if r.error in ("not_controller", "cluster_authorization_failed", "request_timed_out"):
            code = ErrorCode[r.error]
        else:
            code = _code(r.error, election_type)
        by_topic.setdefault(r.topic, []).append(
            build(
                R.PartitionResult,
                partition_id=r.partition,
                error_code=code,
                error_message=None
                if code in (ErrorCode.none, ErrorCode.request_timed_out)
                else code.name.upper(),
            )
        )
    return build(
        R.ElectLeadersResponse,
        throttle_time=THROTTLE_NONE,
        error_code=top_error,
        replica_election_results=tuple(
            build(R.ReplicaElectionResult, topic=t, partition_result=tuple(ps))
            for t, ps in sorted(by_topic.items())
        ),
    )
