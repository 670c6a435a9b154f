"""DescribeAcls (key 29), versions 1-3.

Requires DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED) and an authorizer (else
SECURITY_DISABLED). The filter (resource type, name or null, pattern type LITERAL, PREFIXED,
ANY or MATCH, principal, host, operation, permission) is matched against every ACL this broker
holds, with Kafka's filter semantics (kafkapy.metadata.acl_model): MATCH with a name finds the
ACLs that apply to that resource (its literal pattern, the wildcard ``*`` and every prefix).
Results are grouped by resource pattern. A filter with an UNKNOWN element gets INVALID_REQUEST.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kafkapy.metadata.acl_model import AclOperation
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .acl_common import acl_services, binding_filter, refusal


@api("DescribeAcls")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R

    def answer(code=ErrorCode.none, message=None, resources=()):
        return build(R.DescribeAclsResponse, throttle_time=THROTTLE_NONE, error_code=code,
                     error_message=message, resources=tuple(resources))

    refused = refusal(ctx, AclOperation.DESCRIBE, "describe ACLs")
    if refused is not None:
        return answer(*refused)
    flt = binding_filter(request)
    unknown = flt.unknown_element()
    if unknown is not None:
        return answer(ErrorCode.invalid_request, f"DescribeAcls: {unknown}")
    by_pattern = defaultdict(list)
    for binding in acl_services(ctx)[0].acls(flt):
        by_pattern[binding.pattern].append(binding.entry)
    resources = [
        build(
            R.DescribeAclsResource,
            resource_type=int(pattern.resource_type),
            resource_name=pattern.name,
            pattern_type=int(pattern.pattern_type),
            acls=tuple(
                build(R.AclDescription, principal=e.principal, host=e.host,
                      operation=int(e.operation), permission_type=int(e.permission_type))
                for e in sorted(entries, key=lambda e: (e.principal, e.operation, e.host))
            ),
        )
        for pattern, entries in sorted(
            by_pattern.items(), key=lambda kv: (kv[0].resource_type, kv[0].pattern_type, kv[0].name)
        )
    ]
    return answer(resources=resources)
