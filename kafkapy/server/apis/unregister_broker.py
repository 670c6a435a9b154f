"""UnregisterBroker (key 64), version 0: remove a broker's registration (KIP-500), as Apache
Kafka 4.4's controller answers it (ClusterControlManager.unregisterBroker).

A broker id that is not registered gets BROKER_ID_NOT_REGISTERED, "Broker ID N is not currently
registered". A registered broker is one that is running (kafkapy's registrations live as long as
the broker's session): 4.4 removes the registration and the running broker registers again at
its next heartbeat, so the observable result is the same as kafkapy's, which keeps it: NONE,
with the empty error message 4.4 sends.

Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

import trio

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster


@api("UnregisterBroker")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R

    def respond(error: ErrorCode, message: str | None) -> Any:
        return build(R.UnregisterBrokerResponse, throttle_time=THROTTLE_NONE, error_code=error,
                     error_message=message)

    if not authorize_cluster(ctx, ALTER):
        return respond(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
    brokers = await trio.to_thread.run_sync(ctx.broker.cluster.list_brokers)
    if request.broker_id not in brokers:
        return respond(ErrorCode.broker_id_not_registered,
                       f"Broker ID {request.broker_id} is not currently registered")
    return respond(ErrorCode.none, "")
