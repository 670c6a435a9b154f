"""CreateDelegationToken (key 38), versions 1-3, as Apache Kafka 4.4 serves it.

The owner is the requester unless the request names one (v3: ``owner_principal_type`` and
``_name``); the response names the owner and (v3) the requester. In Kafka's order:
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (delegation_token_common.allow_token_requests),
DELEGATION_TOKEN_AUTHORIZATION_FAILED for another owner without CREATE_TOKENS on that owner's USER
resource, INVALID_PRINCIPAL_TYPE for a renewer that is not a ``User`` (the broker's checks, whose
refusals carry -1 timestamps), then DELEGATION_TOKEN_AUTH_DISABLED without
``delegation.token.secret.key`` (the controller's, with timestamps 0). A refusal's token id and
HMAC are empty. The token itself: server/security/token_manager.py.
"""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.principal import USER_TYPE

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import AclOperation, ResourceType, authorize
from .delegation_token_common import ERROR_TIMESTAMP, allow_token_requests, timestamp

MS = datetime.timedelta(milliseconds=1)


@api("CreateDelegationToken")
async def handle(ctx: RequestContext, request: Any) -> Any:
    requester = ctx.principal
    requester_type, requester_name = requester.principal_type, requester.name
    owner_name = getattr(request, "owner_principal_name", None)
    if owner_name:
        owner_type = request.owner_principal_type or ""
    else:
        owner_type, owner_name = requester_type, requester_name
    owner = f"{owner_type}:{owner_name}"

    def response(
        error: ErrorCode, info: Any = None, hmac: bytes = b"", refused_at: int = ERROR_TIMESTAMP
    ) -> Any:
        return build(
            ctx.R.CreateDelegationTokenResponse,
            error_code=error,
            principal_type=owner_type,
            principal_name=owner_name,
            token_requester_principal_type=requester_type,
            token_requester_principal_name=requester_name,
            issue_timestamp=timestamp(info.issue_timestamp if info else refused_at),
            expiry_timestamp=timestamp(info.expiry_timestamp if info else refused_at),
            max_timestamp=timestamp(info.max_timestamp if info else refused_at),
            token_id=info.token_id if info else "",
            hmac=hmac,
            throttle_time=THROTTLE_NONE,
        )

    if not allow_token_requests(ctx):
        return response(ErrorCode.delegation_token_request_not_allowed)
    if (owner_type, owner_name) != (requester_type, requester_name) and not authorize(
        ctx, AclOperation.CREATE_TOKENS, ResourceType.USER, owner
    ):
        return response(ErrorCode.delegation_token_authorization_failed)
    renewers = []
    for r in request.renewers:
        if r.principal_type != USER_TYPE:
            return response(ErrorCode.invalid_principal_type)
        renewers.append(f"{r.principal_type}:{r.principal_name}")
    manager = ctx.broker.delegation_tokens
    if not manager.enabled:  # the controller's refusal: its timestamps are left at 0
        return response(ErrorCode.delegation_token_auth_disabled, refused_at=0)
    max_lifetime_ms = request.max_lifetime // MS
    result = await manager.create(owner, str(requester), tuple(renewers), max_lifetime_ms)
    return response(result.error, result.info, result.hmac)
