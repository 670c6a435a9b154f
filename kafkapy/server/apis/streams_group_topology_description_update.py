"""StreamsGroupTopologyDescriptionUpdate (key 93), version 0 (KIP-1331).

A streams group member pushes its topology's full description for the broker's topology
description plugin. Kafka 4.4 without group.streams.topology.description.plugin.class (its
default) refuses every push with UNSUPPORTED_VERSION "The broker has no streams group topology
description plugin configured."; kafkapy has no such plugin, so it answers so too (and its
StreamsGroupHeartbeat v1 never sets TopologyDescriptionRequired).

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, group_denied

NO_PLUGIN = "The broker has no streams group topology description plugin configured."


@api("StreamsGroupTopologyDescriptionUpdate")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return build(
            R.StreamsGroupTopologyDescriptionUpdateResponse,
            throttle_time=THROTTLE_NONE,
            error_code=GROUP_DENIED,
            error_message=None,
        )
    return build(
        R.StreamsGroupTopologyDescriptionUpdateResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.unsupported_version,
        error_message=NO_PLUGIN,
    )
