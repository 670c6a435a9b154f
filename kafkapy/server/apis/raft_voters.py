"""AddRaftVoter (key 80, versions 0-1) and RemoveRaftVoter (key 81, version 0): change the
voters of the KRaft controller quorum (KIP-853).

Apache Kafka 4.4 forwards both to its controller quorum, which first compares the request's
cluster id (INCONSISTENT_CLUSTER_ID, 'The given id "x" doesn't match the cluster id "y"'), then
refuses any change while the quorum's voters are static (``controller.quorum.voters``,
kraft.version 0): UNSUPPORTED_VERSION, "Cluster doesn't support adding voter because the
kraft.version feature is 0" (removing, for RemoveRaftVoter). kafkapy has no quorum and runs at
kraft.version 0 (server/features.py), so it answers as that quorum does.

Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster


def _refuse(ctx: RequestContext, request: Any, cls: type, action: str) -> Any:
    def respond(error: ErrorCode, message: str | None) -> Any:
        return build(cls, throttle_time=THROTTLE_NONE, error_code=error, error_message=message)

    if not authorize_cluster(ctx, ALTER):
        return respond(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
    cluster_id = ctx.broker.cluster_id
    if request.cluster_id is not None and request.cluster_id != cluster_id:
        return respond(ErrorCode.inconsistent_cluster_id,
                       f'The given id "{request.cluster_id}" doesn\'t match the cluster id '
                       f'"{cluster_id}"')
    return respond(ErrorCode.unsupported_version,
                   f"Cluster doesn't support {action} voter because the kraft.version feature "
                   "is 0")


@api("AddRaftVoter")
async def handle_add(ctx: RequestContext, request: Any) -> Any:
    return _refuse(ctx, request, ctx.R.AddRaftVoterResponse, "adding")


@api("RemoveRaftVoter")
async def handle_remove(ctx: RequestContext, request: Any) -> Any:
    return _refuse(ctx, request, ctx.R.RemoveRaftVoterResponse, "removing")
