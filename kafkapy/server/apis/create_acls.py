"""CreateAcls (key 30), versions 1-3.

Requires ALTER on the cluster (else every creation gets CLUSTER_AUTHORIZATION_FAILED) and an
authorizer (else SECURITY_DISABLED). Each creation is checked on its own; INVALID_REQUEST (with
the reason) for an unknown or filter-only value (ANY, MATCH), a principal that is not
``Type:name``, a cluster name other than ``kafka-cluster``, an empty name or one containing '/'.
Valid ones are added to their resource pattern's znode (kafkapy.metadata.acls: one conditional
write per pattern with its change notification, so every broker applies them) and to this
broker's authorizer at once. Creating an ACL that exists already succeeds. A store failure fails
the creations of that pattern with UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from kafkapy.metadata.acl_model import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .acl_common import acl_services, refusal

log = logging.getLogger("kafkapy.acls")


def _binding(c) -> AclBinding:
    return AclBinding(
        ResourcePattern(
            ResourceType.from_code(c.resource_type),  # type: ignore[arg-type]
            c.resource_name,
            PatternType.from_code(c.resource_pattern_type),  # type: ignore[arg-type]
        ),
        AccessControlEntry(
            c.principal,
            c.host,
            AclOperation.from_code(c.operation),  # type: ignore[arg-type]
            PermissionType.from_code(c.permission_type),  # type: ignore[arg-type]
        ),
    )


@api("CreateAcls")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    n = len(request.creations)
    # Kafka 4.4 answers a created ACL with an empty message, not a null one
    results: list[tuple[ErrorCode, str | None]] = [(ErrorCode.none, "")] * n
    refused = refusal(ctx, AclOperation.ALTER, "create ACLs")
    if refused is not None:
        results = [refused] * n
    else:
        by_pattern: dict[ResourcePattern, list[tuple[int, AccessControlEntry]]] = defaultdict(list)
        for i, creation in enumerate(request.creations):
            binding = _binding(creation)
            why = binding.validation_error()
            if why is not None and why.startswith("Could not parse principal"):
                results[i] = (ErrorCode.invalid_request, why)  # as Kafka 4.4 words it
            elif why is not None:
                results[i] = (ErrorCode.invalid_request, f"Failed to create ACL: {why}")
            else:
                by_pattern[binding.pattern].append((i, binding.entry))
        changes = [
            (pattern, lambda cur, new=frozenset(e for _, e in items): cur | new)
            for pattern, items in by_pattern.items()
        ]
        outcomes = await acl_services(ctx)[1].update(changes) if changes else []
        for (pattern, items), outcome in zip(by_pattern.items(), outcomes, strict=True):
            if isinstance(outcome, Exception):
                for i, _ in items:
                    results[i] = (ErrorCode.unknown_server_error, str(outcome))
            elif outcome[0] != outcome[1]:
                log.info("ACLs added by %s on %s: %s", ctx.principal, pattern,
                         ", ".join(str(e) for _, e in items))
    return build(
        R.CreateAclsResponse,
        throttle_time=THROTTLE_NONE,
        results=tuple(
            build(R.AclCreationResult, error_code=code, error_message=message)
            for code, message in results
        ),
    )
