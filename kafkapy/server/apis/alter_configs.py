"""AlterConfigs (key 33), versions 0-2 (the legacy, non-incremental form).

Each resource's given configs replace all of its stored overrides (keys left out return to their
broker or default value); the whole set is validated and, unless validate_only, stored and
applied live (see server/config/config_changes.py). Errors as IncrementalAlterConfigs: unknown topic
UNKNOWN_TOPIC_OR_PARTITION, bad topic value INVALID_CONFIG naming the key and the allowed range,
broker keys that cannot change at run time INVALID_REQUEST, a null value or a resource named
twice INVALID_REQUEST.

Authorization (after the duplicate check): ALTER_CONFIGS on the cluster for broker resources
(CLUSTER_AUTHORIZATION_FAILED) or on the topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..config.config_changes import ConfigChangeError
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .alter_configs_common import alter_resources


def replacement(res: Any, current: dict[str, str]) -> dict[str, str]:
    """The given configs replace every override (keys named twice: INVALID_REQUEST)."""
    names = [c.name for c in res.configs]
    if len(set(names)) != len(names):
        raise ConfigChangeError(ErrorCode.invalid_request, "Error due to duplicate config keys")
    return {c.name: c.value for c in res.configs}


@api("AlterConfigs")
async def handle(ctx: RequestContext, request: Any) -> Any:
    out = alter_resources(ctx, request, replacement)
    return build(ctx.R.AlterConfigsResponse, throttle_time=THROTTLE_NONE, responses=out)
