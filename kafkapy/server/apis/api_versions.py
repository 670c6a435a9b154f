"""ApiVersions (key 18), versions 0-5.

Advertises exactly the registered handlers with the served table's ranges (Kafka 4.4's for the
APIs kafkapy implements), and from v3 the supported and finalized features of server/features.py
(the levels whose semantics kafkapy implements; kafka-features.sh describe reads them). A request
for an unsupported ApiVersions version gets a v0-format reply with UNSUPPORTED_VERSION and
ApiVersions' own supported range, as Kafka's broker does, so an old client can retry with a
version we serve; the response header is always v0.
From v3 the client software name and version must match Kafka's pattern (KIP-511), else
INVALID_REQUEST. From v5 the client may name the cluster and broker it believes it is talking to
(cluster_id and node_id, both or neither, else INVALID_REQUEST); when they name another cluster or
another broker the answer is REBOOTSTRAP_REQUIRED, so the client rebootstraps, as Kafka's
KafkaApis answers.
"""

from __future__ import annotations

import re
from typing import Any

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.wire import INT16, INT32

from .. import features
from ..registry import REGISTRY, api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build


def advertised() -> list[tuple[int, int, int]]:
    """(api key, min, max) for every registered API, by key."""
    return sorted(
        (key, reg.range.min_version, reg.range.max_version) for key, reg in REGISTRY.items()
    )


def unsupported_version_reply() -> bytes:
    """Body of the v0 UNSUPPORTED_VERSION reply (header v0 is added by the caller)."""
    rng = served_apis()["ApiVersions"]
    return (
        INT16.pack(ErrorCode.unsupported_version)
        + INT32.pack(1)
        + INT16.pack(rng.key)
        + INT16.pack(rng.min_version)
        + INT16.pack(rng.max_version)
    )


SOFTWARE_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def valid_client_software(request: object) -> bool:
    """KIP-511: v3+ client software name and version must match Kafka's pattern."""
    name = getattr(request, "client_software_name", None)
    version = getattr(request, "client_software_version", None)
    if name is None and version is None:
        return True
    return bool(SOFTWARE_NAME.fullmatch(name or "")) and bool(
        SOFTWARE_NAME.fullmatch(version or "")
    )


def valid_cluster_and_node(request: object) -> bool:
    """v5: the cluster id and the node id are sent together or not at all."""
    cluster_id = getattr(request, "cluster_id", None)
    node_id = getattr(request, "node_id", -1)
    return (cluster_id is None) == (node_id == -1)


def names_another_broker(ctx: RequestContext, request: object) -> bool:
    """v5: the request names a cluster id other than ours, or our cluster and another node."""
    cluster_id = getattr(request, "cluster_id", None)
    if cluster_id is None:
        return False
    broker = ctx.broker
    return cluster_id != broker.cluster_id or getattr(request, "node_id", -1) != broker.broker_id


@api("ApiVersions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    error = None
    if not valid_cluster_and_node(request) or not valid_client_software(request):
        error = ErrorCode.invalid_request
    elif names_another_broker(ctx, request):
        error = ErrorCode.rebootstrap_required
    if error is not None:
        return build(
            R.ApiVersionsResponse, error_code=error, api_keys=(), throttle_time=THROTTLE_NONE
        )
    keys = tuple(
        R.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in advertised()
    )
    version = ctx.header.api_version
    if version < 3:
        return build(R.ApiVersionsResponse, error_code=ErrorCode.none, api_keys=keys,
                     throttle_time=THROTTLE_NONE)
    return build(
        R.ApiVersionsResponse,
        error_code=ErrorCode.none,
        api_keys=keys,
        throttle_time=THROTTLE_NONE,
        supported_features=tuple(
            R.SupportedFeatureKey(name=f.name, min_version=f.min_level, max_version=f.max_level)
            for f in features.supported(version)
        ),
        finalized_features_epoch=features.FINALIZED_EPOCH,
        finalized_features=tuple(
            R.FinalizedFeatureKey(name=f.name, max_version_level=f.level,
                                  min_version_level=f.level)
            for f in features.finalized()
        ),
    )
