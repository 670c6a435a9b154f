"""The seam between a connection and the API handlers (Kafka's RequestChannel.Request and
RequestContext): what every handler receives about the request it answers, and the two ways a
request can end a connection.

A handler is ``async def handle(ctx: RequestContext, request) -> response`` (server/registry.py);
it reaches the broker's services through ``ctx.broker``. Handlers raise :class:`CloseConnection`
for input Kafka answers by closing the connection; the SASL stage raises
:class:`AuthenticationFailed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from kafkapy.protocol.headers import RequestHeader
from kafkapy.security.principal import KafkaPrincipal
from kafkapy.security.session import Session

from .responses import response_module

if TYPE_CHECKING:
    from .broker import Broker


class CloseConnection(Exception):
    """The request cannot be answered; Kafka closes the connection in this case."""


class AuthenticationFailed(Exception):
    """Authentication failed: ``response`` (if any) is sent, and the connection is closed after
    connection.failed.authentication.delay.ms."""

    def __init__(self, reason: str, response: list[bytes] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.response = response



@dataclass(slots=True)
class RequestContext:
    broker: Broker
    header: RequestHeader
    frame: bytes | bytearray  # the whole request (header and body); handlers may modify it
    peer: str
    connection_id: int
    session: Session  # principal, listener, security protocol, client address

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def principal(self) -> KafkaPrincipal:
        """Who the connection authenticated as (``User:ANONYMOUS`` without authentication)."""
        return self.session.principal

    @property
    def R(self) -> ModuleType:
        return response_module(self.header.api_key, self.header.api_version)
