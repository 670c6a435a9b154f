"""DescribeCluster (key 60), versions 0-2.

The cluster id, the controller (this broker in embedded mode) and the registered brokers with
their advertised endpoints on the listener the client connected to (endpoint type 1, brokers;
type 2, controllers, is refused with UNSUPPORTED_ENDPOINT_TYPE as a broker does). No broker is
ever fenced here.

When asked, the cluster's authorized operations (0 without DESCRIBE on the cluster).
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata.acl_model import CLUSTER_NAME
from kafkapy.metadata.models import listener_endpoints
from kafkapy.protocol.errors import ErrorCode

from ..live_brokers import controller_id, live_brokers
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import (
    CLUSTER,
    DESCRIBE,
    NOT_REQUESTED,
    authorize_cluster,
    authorized_operations,
)

BROKERS_ENDPOINT = 1


@api("DescribeCluster")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    endpoint_type = getattr(request, "endpoint_type", BROKERS_ENDPOINT)
    if endpoint_type != BROKERS_ENDPOINT:
        return build(
            R.DescribeClusterResponse,
            throttle_time=THROTTLE_NONE,
            error_code=ErrorCode.unsupported_endpoint_type,
            error_message="The broker does not support DescribeCluster with endpoint type "
            f"{endpoint_type}",
            endpoint_type=endpoint_type,
            cluster_id=broker.cluster_id,
            controller_id=-1,
            brokers=(),
        )
    brokers = tuple(
        build(
            R.DescribeClusterBroker,
            broker_id=b,
            host=e.host,
            port=e.port,
            rack=i.rack,
            is_fenced=False,
        )
        for b, i, e in listener_endpoints(live_brokers(broker), ctx.session.listener_name)
    )
    controller = controller_id(broker)
    operations = NOT_REQUESTED
    if request.include_cluster_authorized_operations:
        operations = 0
        if authorize_cluster(ctx, DESCRIBE):
            operations = authorized_operations(ctx, CLUSTER, CLUSTER_NAME)
    return build(
        R.DescribeClusterResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        error_message=None,
        endpoint_type=BROKERS_ENDPOINT,
        cluster_id=broker.cluster_id,
        controller_id=-1 if controller is None else controller,
        brokers=brokers,
        cluster_authorized_operations=operations,
    )
