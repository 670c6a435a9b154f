"""ListConfigResources (key 74), versions 0-1 (KIP-1142; v0 was ListClientMetricsResources).

The config resources of the cluster, as Apache Kafka 4.4 lists them: the groups that have group
configs (/config/groups), client metrics resources (kafkapy has none), every broker as a
BROKER_LOGGER and as a BROKER resource, and every topic, in that order. An empty resource_types
asks for every type the version supports (v0: client metrics only; v1: topics, brokers, broker
loggers, client metrics and groups); a type outside them is UNSUPPORTED_VERSION.

Authorization: DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE_CONFIGS, authorize_cluster

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SUPPORTED = {0: (CLIENT_METRICS,), 1: (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)}


@api("ListConfigResources")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker

    def respond(error: ErrorCode, resources: list[tuple[str, int]]) -> Any:
        return build(
            R.ListConfigResourcesResponse,
            throttle_time=THROTTLE_NONE,
            error_code=error,
            config_resources=tuple(
                build(R.ConfigResource, resource_name=name, resource_type=type_)
                for name, type_ in resources
            ),
        )

    if not authorize_cluster(ctx, DESCRIBE_CONFIGS):
        return respond(ErrorCode.cluster_authorization_failed, [])
    supported = SUPPORTED[min(ctx.header.api_version, 1)]
    asked = tuple(int(t) for t in getattr(request, "resource_types", ()) or ()) or supported
    if any(t not in supported for t in asked):
        return respond(ErrorCode.unsupported_version, [])
    out: list[tuple[str, int]] = []
    if GROUP in asked:
        out += [(g, GROUP) for g in broker.cluster.groups_with_configs()]
    broker_ids = [str(b) for b in sorted(broker.cluster.list_brokers())]
    if BROKER_LOGGER in asked:
        out += [(b, BROKER_LOGGER) for b in broker_ids]
    if BROKER in asked:
        out += [(b, BROKER) for b in broker_ids]
    if TOPIC in asked:
        out += [(t, TOPIC) for t in sorted(broker.topics.by_name)]
    return respond(ErrorCode.none, out)
