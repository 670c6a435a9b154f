"""DeleteAcls (key 31), versions 1-3.

Requires ALTER on the cluster (else every filter gets CLUSTER_AUTHORIZATION_FAILED) and an
authorizer (else SECURITY_DISABLED). As Kafka's AclAuthorizer.deleteAcls: the resource patterns
considered are those this broker holds ACLs for plus, for each filter naming at most one pattern
(a type, a name, LITERAL, PREFIXED or ANY), that pattern itself (read from the store, so ACLs
created through another broker a moment ago are found). For each pattern, the ACLs matched by any
filter whose pattern part matches it are removed in one conditional write with its change
notification; each deleted ACL is reported under the first filter (in request order) that matched
it. A filter with an UNKNOWN element gets INVALID_REQUEST; a store failure reports the ACLs of
that pattern with UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy.metadata.acl_model import AclBinding, AclOperation, PatternType, ResourcePattern
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .acl_common import acl_services, binding_filter, refusal

log = logging.getLogger("kafkapy.acls")


def _named_patterns(flt) -> list[ResourcePattern]:
    """The patterns a filter naming at most one resource pattern names (Kafka's
    filterToResources): itself, or with pattern type ANY its literal and prefixed forms."""
    p = flt.pattern
    if p.indefinite_field() is not None:
        return []
    kinds: tuple[PatternType, ...]
    if p.pattern_type == PatternType.ANY:
        kinds = (PatternType.LITERAL, PatternType.PREFIXED)
    else:
        kinds = (p.pattern_type,)
    return [ResourcePattern(p.resource_type, p.name, k) for k in kinds]


@api("DeleteAcls")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    filters = [binding_filter(f) for f in request.filters]
    errors: list[tuple[ErrorCode, str | None]] = [(ErrorCode.none, None)] * len(filters)
    deleted: list[list[tuple[AclBinding, ErrorCode, str | None]]] = [[] for _ in filters]
    refused = refusal(ctx, AclOperation.ALTER, "delete ACLs")
    if refused is not None:
        errors = [refused] * len(filters)
    else:
        valid = []
        for i, flt in enumerate(filters):
            unknown = flt.unknown_element()
            if unknown is not None:
                errors[i] = (ErrorCode.invalid_request, f"DeleteAcls: {unknown}")
            else:
                valid.append((i, flt))
        patterns = dict.fromkeys(acl_services(ctx)[0].patterns())
        for _, flt in valid:
            patterns.update(dict.fromkeys(_named_patterns(flt)))
        plan: list[Any] = []  # (pattern, its filters, first filter of each removed entry)
        for pattern in patterns:
            matching = [(i, flt) for i, flt in valid if flt.pattern.matches(pattern)]
            if matching:
                plan.append((pattern, matching, {}))

        def remover(matching, owner):
            def change(current):
                owner.clear()
                for entry in current:
                    first = next((i for i, flt in matching if flt.entry.matches(entry)), None)
                    if first is not None:
                        owner[entry] = first
                return current - owner.keys()

            return change

        changes = [(pattern, remover(matching, owner)) for pattern, matching, owner in plan]
        outcomes = await acl_services(ctx)[1].update(changes) if changes else []
        for (pattern, _, owner), outcome in zip(plan, outcomes, strict=True):
            if isinstance(outcome, Exception):
                code, message = ErrorCode.unknown_server_error, str(outcome)
            else:
                code, message = ErrorCode.none, None
                if owner:
                    log.info("ACLs deleted by %s on %s: %s", ctx.principal, pattern,
                             ", ".join(sorted(map(str, owner))))
            for entry, i in owner.items():
                deleted[i].append((AclBinding(pattern, entry), code, message))
    return build(
        R.DeleteAclsResponse,
        throttle_time=THROTTLE_NONE,
        filter_results=tuple(
            build(
                R.DeleteAclsFilterResult,
                error_code=code,
                error_message=message,
                matching_acls=tuple(
                    build(
                        R.DeleteAclsMatchingAcl,
                        error_code=acl_code,
                        error_message=acl_message,
                        resource_type=int(b.pattern.resource_type),
                        resource_name=b.pattern.name,
                        pattern_type=int(b.pattern.pattern_type),
                        principal=b.entry.principal,
                        host=b.entry.host,
                        operation=int(b.entry.operation),
                        permission_type=int(b.entry.permission_type),
                    )
                    for b, acl_code, acl_message in bindings
                ),
            )
            for (code, message), bindings in zip(errors, deleted, strict=True)
        ),
    )
