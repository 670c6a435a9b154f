"""What the ACL APIs (CreateAcls, DescribeAcls, DeleteAcls) share: reading filters from requests,
and the answers Kafka gives before looking at them.

Kafka's AclApis first requires the cluster operation (DESCRIBE for DescribeAcls, ALTER for
CreateAcls and DeleteAcls: CLUSTER_AUTHORIZATION_FAILED otherwise), then an authorizer
(SECURITY_DISABLED when ``authorizer.class.name`` is unset: "No Authorizer is configured on the
broker" for DescribeAcls, which Kafka 4.4's broker answers, and "No Authorizer is configured."
for CreateAcls and DeleteAcls, which its controller answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkapy.metadata.acl_model import (
    AccessControlEntryFilter,
    AclBindingFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePatternFilter,
    ResourceType,
)
from kafkapy.protocol.errors import ErrorCode

from ..security.authorization import authorize_cluster

if TYPE_CHECKING:
    from kafkapy.security.authorizer import AclAuthorizer

    from ..request_context import RequestContext
    from ..security.acl_listener import AclChangeListener

NO_AUTHORIZER = "No Authorizer is configured on the broker"
NO_AUTHORIZER_ALTER = "No Authorizer is configured."  # Kafka 4.4's controller, on alters


def binding_filter(item: Any) -> AclBindingFilter:
    """The filter of a DescribeAcls request or a DeleteAcls filter (same field names)."""
    return AclBindingFilter(
        ResourcePatternFilter(
            ResourceType.from_code(item.resource_type_filter),  # type: ignore[arg-type]
            item.resource_name_filter,
            PatternType.from_code(item.pattern_type_filter),  # type: ignore[arg-type]
        ),
        AccessControlEntryFilter(
            item.principal_filter,
            item.host_filter,
            AclOperation.from_code(item.operation),  # type: ignore[arg-type]
            PermissionType.from_code(item.permission_type),  # type: ignore[arg-type]
        ),
    )


def refusal(ctx: Any, operation: AclOperation, what: str) -> tuple[ErrorCode, str] | None:
    """The (error, message) every item of the request gets before anything else is looked at:
    the cluster operation is not allowed, or there is no authorizer; None to go on."""
    if not authorize_cluster(ctx, operation):
        return (
            ErrorCode.cluster_authorization_failed,
            f"Principal {ctx.principal} is not authorized to {what}: it needs "
            f"{operation.kafka_name} on the cluster",
        )
    if ctx.broker.authorizer is None:
        return ErrorCode.security_disabled, (
            NO_AUTHORIZER if operation == AclOperation.DESCRIBE else NO_AUTHORIZER_ALTER)
    return None


def acl_services(ctx: RequestContext) -> tuple[AclAuthorizer, AclChangeListener]:
    """The broker's authorizer and its ACL change listener, once :func:`refusal` let the request
    through (a broker with an authorizer always has both)."""
    authorizer, listener = ctx.broker.authorizer, ctx.broker.acl_listener
    assert authorizer is not None and listener is not None, "refusal() checks the authorizer"
    return authorizer, listener
