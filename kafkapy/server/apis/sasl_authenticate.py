"""SaslAuthenticate (key 36), versions 0-2, outside an authentication exchange.

Tokens of an exchange are taken by the connection's authentication stage
(server/security/sasl_authenticator.py). A SaslAuthenticate that reaches this handler came after the
connection authenticated, or on a listener without SASL: ILLEGAL_SASL_STATE, with Kafka's message.
"""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import build


@api("SaslAuthenticate")
async def handle(ctx: RequestContext, request: Any) -> Any:
    return build(
        ctx.R.SaslAuthenticateResponse,
        error_code=ErrorCode.illegal_sasl_state,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime=datetime.timedelta(0),
    )
