"""IncrementalAlterConfigs (key 44), versions 0-1.

Per resource, operations SET (0), DELETE (1), APPEND (2) and SUBTRACT (3) (the last two on LIST
configs such as cleanup.policy, starting from the current value or the default) are applied to
the resource's stored overrides, then the whole result is validated and, unless validate_only,
stored and applied live (see server/config_changes.py). Topics: unknown topic
UNKNOWN_TOPIC_OR_PARTITION, bad value INVALID_CONFIG with a message naming the key and the
allowed range. Brokers: this broker's id or "" (cluster default); keys that cannot change at run
time INVALID_REQUEST. A resource named twice, or a key named twice in one resource, is
INVALID_REQUEST; other resource types INVALID_REQUEST.

Authorization (after the duplicate check): ALTER_CONFIGS on the cluster for broker resources
(CLUSTER_AUTHORIZATION_FAILED) or on the topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode

from ..authorization import ALTER_CONFIGS, config_resource_error
from ..config_changes import (
    ConfigChangeError,
    apply,
    current_configs,
    duplicate_resources,
    incremental,
    refuse_duplicate,
)
from ..registry import api
from ..responses import THROTTLE_NONE, build


@api("IncrementalAlterConfigs")
async def handle(ctx, request):
    R = ctx.R
    broker = ctx.broker
    dups = duplicate_resources(request.resources)
    out = []
    for res in request.resources:
        error, message = ErrorCode.none, None
        try:
            refuse_duplicate(res, dups)
            denied = config_resource_error(
                ctx, ALTER_CONFIGS, res.resource_type, res.resource_name
            )
            if denied is not None:
                raise ConfigChangeError(denied, None)
            current = current_configs(broker, res.resource_type, res.resource_name)
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            new = incremental(broker, res.resource_type, current, ops)
            apply(broker, res.resource_type, res.resource_name, new, request.validate_only)
        except ConfigChangeError as e:
            error, message = e.code, e.message
        out.append(
            build(
                R.AlterConfigsResourceResponse,
                error_code=error,
                error_message=message,
                resource_type=res.resource_type,
                resource_name=res.resource_name,
            )
        )
    return build(
        R.IncrementalAlterConfigsResponse, throttle_time=THROTTLE_NONE, responses=tuple(out)
    )
