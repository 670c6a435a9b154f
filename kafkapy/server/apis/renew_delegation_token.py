"""RenewDelegationToken (key 39), versions 1-2, as Apache Kafka 4.4 serves it: the token named by
its HMAC gets a new expiry, ``min(max timestamp, now + min(renew period,
delegation.token.expiry.time.ms))`` (the broker's period for 0 or less). Errors, in Kafka's order:
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND,
DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_OWNER_MISMATCH (neither owner nor renewer); the
expiry timestamp of a refusal is -1 for the first (the broker's), 0 for the others (the
controller's) (server/security/token_manager.py)."""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .delegation_token_common import ERROR_TIMESTAMP, allow_token_requests, timestamp

MS = datetime.timedelta(milliseconds=1)


@api("RenewDelegationToken")
async def handle(ctx: RequestContext, request: Any) -> Any:
    if not allow_token_requests(ctx):
        error, expiry = ErrorCode.delegation_token_request_not_allowed, ERROR_TIMESTAMP
    else:
        error, expiry = await ctx.broker.delegation_tokens.renew(
            str(ctx.principal), request.hmac, request.renew_period // MS
        )
    return build(
        ctx.R.RenewDelegationTokenResponse,
        error_code=error,
        expiry_timestamp=timestamp(expiry),
        throttle_time=THROTTLE_NONE,
    )
