"""ExpireDelegationToken (key 40), versions 1-2, as Apache Kafka 4.4 serves it: the token named by
its HMAC expires ``expiry_time_period`` from now (never after its maximum lifetime), or at once
for a negative period (it is removed, and the response's expiry is now). Errors, in Kafka's
order: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, DELEGATION_TOKEN_AUTH_DISABLED,
DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_OWNER_MISMATCH, then DELEGATION_TOKEN_EXPIRED for an
expired token given a period of 0 or more; a refusal's expiry timestamp is -1 for the first
(the broker's), 0 for the others (the controller's) (server/security/token_manager.py)."""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .delegation_token_common import ERROR_TIMESTAMP, allow_token_requests, timestamp

MS = datetime.timedelta(milliseconds=1)


@api("ExpireDelegationToken")
async def handle(ctx: RequestContext, request: Any) -> Any:
    if not allow_token_requests(ctx):
        error, expiry = ErrorCode.delegation_token_request_not_allowed, ERROR_TIMESTAMP
    else:
        error, expiry = await ctx.broker.delegation_tokens.expire(
            str(ctx.principal), request.hmac, request.expiry_time_period // MS
        )
    return build(
        ctx.R.ExpireDelegationTokenResponse,
        error_code=error,
        expiry_timestamp=timestamp(expiry),
        throttle_time=THROTTLE_NONE,
    )
