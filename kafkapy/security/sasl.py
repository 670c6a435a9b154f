"""SASL mechanisms as sans-io exchanges: what a server and a client evaluate, and how they fail.

A server exchange takes the client's token and returns the next challenge
(:meth:`SaslServer.evaluate`) until :attr:`SaslServer.complete`; it then names the authenticated
user (:attr:`SaslServer.authorization_id`) and, for credentials that expire (an OAUTHBEARER
token), when they do (``credential_expiry_ms``, ms since the epoch), which bounds the session
(KIP-368). Failures come in these kinds, as in Kafka:

* :class:`SaslAuthenticationError`: its message is safe to show the client (PLAIN's "Invalid
  username or password") and goes back in SaslAuthenticate's error message;
* :class:`SaslCredentialError`: the reason may reveal too much (whether a user exists): the
  client is told only :func:`generic_failure`;
* :class:`SaslServerFailure`: an unexpected failure; the connection is closed unanswered.

Client exchanges (for the broker's own connections to other brokers, and for tools) produce the
tokens a server expects: :meth:`SaslClient.first` and :meth:`SaslClient.evaluate`.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Protocol

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
GSSAPI = "GSSAPI"
OAUTHBEARER = "OAUTHBEARER"
SERVED_MECHANISMS = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER)


class SaslAuthenticationError(Exception):
    """Authentication failed; the message may be shown to the client."""


class SaslCredentialError(Exception):
    """Authentication failed for a reason not to be shown to the client."""


class SaslServerFailure(Exception):
    """An unexpected failure inside the mechanism (a Java exception other than SaslException in
    Kafka's SaslServer): Kafka closes the connection at once, without an answer."""


def generic_failure(mechanism: str, reauthenticating: bool = False) -> str:
    """Kafka's message for a failure whose reason stays on the server."""
    what = "re-authentication" if reauthenticating else "authentication"
    return (
        f"Authentication failed during {what} due to invalid credentials with SASL mechanism "
        f"{mechanism}"
    )


class SaslServer(Protocol):
    mechanism: str

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str: ...

    def evaluate(self, token: bytes) -> bytes: ...


class SaslClient(Protocol):
    mechanism: str

    @property
    def complete(self) -> bool: ...

    def first(self) -> bytes: ...

    def evaluate(self, challenge: bytes) -> bytes | None: ...


def client_exchange(client: SaslClient) -> Generator[bytes, bytes, None]:
    """Drive a client exchange without I/O: yields each token to send in a SaslAuthenticate
    request and is sent the server's answer (``auth_bytes``); stops once the exchange is
    complete. SaslAuthenticationError when the server's answers do not check out (SCRAM's
    server signature)."""
    token = client.first()
    while True:
        reply = yield token
        if client.complete:
            return
        next_token = client.evaluate(reply)
        if next_token is None:
            return
        token = next_token
