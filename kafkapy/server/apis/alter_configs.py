"""AlterConfigs (key 33), versions 0-2 (the legacy, non-incremental form).

Each resource's given configs replace all of its stored overrides (keys left out return to their
broker or default value); the whole set is validated and, unless validate_only, stored and
applied live (see server/config_changes.py). Errors as IncrementalAlterConfigs: unknown topic
UNKNOWN_TOPIC_OR_PARTITION, bad topic value INVALID_CONFIG naming the key and the allowed range,
broker keys that cannot change at run time INVALID_REQUEST, a null value or a resource named
twice INVALID_REQUEST.

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
    refuse_duplicate,
)
from ..registry import api
from ..responses import THROTTLE_NONE, build


@api("AlterConfigs")
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
            current_configs(broker, res.resource_type, res.resource_name)  # existence checks
            names = [c.name for c in res.configs]
            if len(set(names)) != len(names):
                raise ConfigChangeError(
                    ErrorCode.invalid_request, "Error due to duplicate config keys"
                )
            new = {c.name: c.value for c in res.configs}
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
    return build(R.AlterConfigsResponse, throttle_time=THROTTLE_NONE, responses=tuple(out))
