"""ApiVersions (key 18), versions 0-4.

Advertises exactly the registered handlers with the served table's ranges, and (v3+) the
features whose semantics kafkapy implements, supported and finalized (server/features.py:
transaction.version 2). A request for an unsupported ApiVersions version
gets a v0-format reply with UNSUPPORTED_VERSION and ApiVersions' own supported range, as Kafka's
broker does, so an old client can retry with a version we serve; the response header is always v0.
From v3 the client software name and version must match Kafka's pattern (KIP-511), else
INVALID_REQUEST.
"""

from __future__ import annotations

import re
from typing import Any

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.wire import INT16, INT32

from ..features import FINALIZED_FEATURES_EPOCH, finalized_features, supported_features
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


@api("ApiVersions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not valid_client_software(request):
        return build(
            R.ApiVersionsResponse,
            error_code=ErrorCode.invalid_request,
            api_keys=(),
            throttle_time=THROTTLE_NONE,
        )
    keys = tuple(
        R.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in advertised()
    )
    return build(
        R.ApiVersionsResponse,
        error_code=ErrorCode.none,
        api_keys=keys,
        throttle_time=THROTTLE_NONE,
        **features_fields(R, ctx.version),
    )


def features_fields(R: Any, version: int) -> dict[str, Any]:
    """The features part of the response (v3+ tagged fields; server/features.py)."""
    if not hasattr(R, "FinalizedFeatureKey"):
        return {}
    return {
        "supported_features": tuple(
            R.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
            for n, lo, hi in supported_features(version)
        ),
        "finalized_features_epoch": FINALIZED_FEATURES_EPOCH,
        "finalized_features": tuple(
            R.FinalizedFeatureKey(name=n, min_version_level=lo, max_version_level=hi)
            for n, lo, hi in finalized_features()
        ),
    }
