"""SaslHandshake (key 17), versions 0-1, outside an authentication exchange.

On SASL listeners the handshake that starts (or, KIP-368, restarts) authentication is answered by
the connection's authentication stage (server/security/sasl_authenticator.py) and never reaches
here. What does reach here is a handshake Kafka's request handler would see: on a PLAINTEXT or SSL
listener, or on an authenticated SASL connection that cannot re-authenticate now. Kafka answers
those with ILLEGAL_SASL_STATE and no mechanisms; so does kafkapy.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import build


@api("SaslHandshake")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    return build(R.SaslHandshakeResponse, error_code=ErrorCode.illegal_sasl_state, mechanisms=())
