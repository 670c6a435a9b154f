"""UnregisterController (key 94), version 0: remove a KRaft controller's registration (KIP-1312),
as Apache Kafka 4.4's controller answers it (ClusterControlManager.unregisterController).

kafkapy keeps its metadata in ZooKeeper or the embedded store and has no KRaft controller
quorum, so no controller id is registered: every id is answered CONTROLLER_ID_NOT_REGISTERED,
"Controller ID N is not currently registered.", as 4.4 answers an id it has no registration
for.

Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster


@api("UnregisterController")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not authorize_cluster(ctx, ALTER):
        error, message = ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE
    else:
        error = ErrorCode.controller_id_not_registered  # type: ignore[attr-defined]
        message = f"Controller ID {request.controller_id} is not currently registered."
    return build(R.UnregisterControllerResponse, throttle_time=THROTTLE_NONE, error_code=error,
                 error_message=message)
