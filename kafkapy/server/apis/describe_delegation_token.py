"""DescribeDelegationToken (key 41), versions 1-3, as Apache Kafka 4.4 serves it.

DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (delegation_token_common.allow_token_requests), then
DELEGATION_TOKEN_AUTH_DISABLED without ``delegation.token.secret.key``, both with no tokens. An
empty owner list describes nothing; a null one every token the requester may see; a list, the
tokens one of those owners owns, requested or may renew. Of those, a requester sees the tokens
it owns, requested or may renew, and the others with DESCRIBE on the DELEGATION_TOKEN resource
(the token id) or DESCRIBE_TOKENS on the owner's USER resource (Kafka's
DelegationTokenManager.filterToken). Each token is described with its HMAC, renewers and (v3)
requester.
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata.delegation_tokens import TokenInformation
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import AclOperation, ResourceType, authorize
from .delegation_token_common import allow_token_requests


def _split(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


def _eligible(ctx: RequestContext, owners: list[str] | None, info: TokenInformation) -> bool:
    if owners is not None and not any(info.owner_or_renewer(o) for o in owners):
        return False
    if info.owner_or_renewer(str(ctx.principal)):
        return True
    return authorize(
        ctx, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, info.token_id
    ) or authorize(ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, info.owner)


@api("DescribeDelegationToken")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    manager = ctx.broker.delegation_tokens
    tokens: list[Any] = []
    if not allow_token_requests(ctx):
        error = ErrorCode.delegation_token_request_not_allowed
    elif not manager.enabled:
        error = ErrorCode.delegation_token_auth_disabled
    else:
        error = ErrorCode.none
        owners = None
        if request.owners is not None:
            owners = [f"{o.principal_type}:{o.principal_name}" for o in request.owners]
        for info, hmac in manager.tokens() if owners != [] else ():
            if not _eligible(ctx, owners, info):
                continue
            owner_type, owner_name = _split(info.owner)
            requester_type, requester_name = _split(info.requester)
            tokens.append(build(
                R.DescribedDelegationToken,
                principal_type=owner_type,
                principal_name=owner_name,
                token_requester_principal_type=requester_type,
                token_requester_principal_name=requester_name,
                issue_timestamp=info.issue_timestamp,
                expiry_timestamp=info.expiry_timestamp,
                max_timestamp=info.max_timestamp,
                token_id=info.token_id,
                hmac=hmac,
                renewers=tuple(
                    build(R.DescribedDelegationTokenRenewer, principal_type=k, principal_name=n)
                    for k, n in map(_split, info.renewers)
                ),
            ))
    return build(
        R.DescribeDelegationTokenResponse,
        error_code=error,
        tokens=tuple(tokens),
        throttle_time=THROTTLE_NONE,
    )
