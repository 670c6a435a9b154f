"""What a request knows about the connection it came on: the authenticated principal, the
listener it arrived at with that listener's security protocol, and the client's address.

The server keeps one :class:`Session` per connection and hands it to every request's context
(``ctx.session``); authorization decides from it (principal and client host), Metadata and
FindCoordinator answer with the endpoints of ``listener_name``. The principal changes only when
authentication completes (and a re-authentication must keep it: Kafka refuses a change).
"""

from __future__ import annotations

from dataclasses import dataclass

from .principal import ANONYMOUS, KafkaPrincipal

PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL = "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
SECURITY_PROTOCOLS = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)


def uses_tls(security_protocol: str) -> bool:
    return security_protocol in (SSL, SASL_SSL)


def uses_sasl(security_protocol: str) -> bool:
    return security_protocol in (SASL_PLAINTEXT, SASL_SSL)


@dataclass(slots=True)
class Session:
    """One connection's security facts (see the module doc)."""

    listener_name: str = PLAINTEXT
    security_protocol: str = PLAINTEXT
    client_host: str = ""  # the client's IP address, as ACL host entries match it
    client_port: int = 0
    principal: KafkaPrincipal = ANONYMOUS
    sasl_mechanism: str | None = None  # after SASL authentication

    @property
    def peer(self) -> str:
        """``host:port`` of the client, for logs."""
        return f"{self.client_host}:{self.client_port}" if self.client_host else "?"
