"""What the four delegation token APIs share (Kafka 4.4's ControllerApis/KafkaApis token
handlers): who may ask for tokens at all, and timestamps as the responses carry them.

Kafka refuses every token request (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED) from a connection that
authenticated with a delegation token, from a PLAINTEXT listener, and from an SSL listener whose
client sent no certificate (the principal is ``User:ANONYMOUS``): a token is only handed to a
client that proved who it is by other means.
"""

from __future__ import annotations

import datetime

from kafkapy.security.session import PLAINTEXT, SSL

from ..request_context import RequestContext

ERROR_TIMESTAMP = -1
_MAX_MS = int(datetime.datetime.max.replace(tzinfo=datetime.UTC).timestamp() * 1000)


def allow_token_requests(ctx: RequestContext) -> bool:
    """Kafka's allowTokenRequests."""
    session = ctx.session
    principal = session.principal
    if principal.token_authenticated or session.security_protocol == PLAINTEXT:
        return False
    return not (
        session.security_protocol == SSL and str(principal) == "User:ANONYMOUS"
    )


def timestamp(ms: int) -> datetime.datetime:
    """A response's int64 timestamp field (-1: none) as kio's datetime."""
    return datetime.datetime.fromtimestamp(min(ms, _MAX_MS) / 1000, datetime.UTC)
