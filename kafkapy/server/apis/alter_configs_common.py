"""What AlterConfigs and IncrementalAlterConfigs share: per resource, in Kafka's order, the
duplicate-resource check, ALTER_CONFIGS authorization, the existence check (reading the current
overrides), the new overrides (each API's own rule), validation and the live change
(server/config/config_changes.py), and the per-resource result entry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..config.config_changes import (
    BROKER,
    ConfigChangeError,
    apply,
    current_configs,
    duplicate_resources,
    refuse_duplicate,
)
from ..responses import build
from ..security.authorization import ALTER_CONFIGS, config_resource_error

#: (resource of the request, its current overrides) -> its new overrides; ConfigChangeError
NewConfigs = Callable[[Any, dict[str, str]], dict[str, str]]


def alter_resources(ctx: Any, request: Any, new_configs: NewConfigs) -> tuple[Any, ...]:
    """The AlterConfigsResourceResponse entries of ``request``, one per resource."""
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
            refuse_other_broker(broker.broker_id, res.resource_type, res.resource_name)
            current = current_configs(broker, res.resource_type, res.resource_name)
            new = new_configs(res, current)
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
    return tuple(out)


def refuse_other_broker(broker_id: int, resource_type: int, name: str) -> None:
    """A broker resource names this broker or the cluster default (""): a client sends another
    broker's configs to that broker, and Kafka 4.4 refuses them elsewhere (a name that is no
    number is refused later, with the config checks)."""
    if resource_type == BROKER and name and name != str(broker_id) and name.isdigit():
        raise ConfigChangeError(
            ErrorCode.invalid_request,
            f"Unexpected broker id, expected {broker_id}, but received {name}",
        )
