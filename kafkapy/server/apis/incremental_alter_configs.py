"""IncrementalAlterConfigs (key 44), versions 0-1.

Per resource, operations SET (0), DELETE (1), APPEND (2) and SUBTRACT (3) (the last two on LIST
configs such as cleanup.policy, starting from the current value or the default) are applied to
the resource's stored overrides, then the whole result is validated and, unless validate_only,
stored and applied live (see server/config/config_changes.py). Topics: unknown topic
UNKNOWN_TOPIC_OR_PARTITION, bad value INVALID_CONFIG with a message naming the key and the
allowed range. Brokers: this broker's id or "" (cluster default); keys that cannot change at run
time INVALID_REQUEST. A resource named twice, or a key named twice in one resource, is
INVALID_REQUEST; other resource types INVALID_REQUEST.

Authorization (after the duplicate check): ALTER_CONFIGS on the cluster for broker resources
(CLUSTER_AUTHORIZATION_FAILED) or on the topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from ..config.config_changes import incremental
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .alter_configs_common import alter_resources


@api("IncrementalAlterConfigs")
async def handle(ctx: RequestContext, request: Any) -> Any:
    def applied(res: Any, current: dict[str, str]) -> dict[str, str]:
        ops = [(c.name, c.config_operation, c.value) for c in res.configs]
        return incremental(ctx.broker, res.resource_type, current, ops)

    out = alter_resources(ctx, request, applied)
    return build(ctx.R.IncrementalAlterConfigsResponse, throttle_time=THROTTLE_NONE, responses=out)
