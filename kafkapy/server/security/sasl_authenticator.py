"""The SASL authentication stage of a connection on a SASL listener (Kafka's
SaslServerAuthenticator), driven by frames: :meth:`Authenticator.on_frame` sees every frame
before dispatch and either answers it, lets it through (:data:`~.connection.PASS`), or fails the
connection.

Before authentication completes only these are accepted, in this order:

1. ApiVersions (let through to its handler), once it succeeds: one answered with an error
   (UNSUPPORTED_VERSION for a version not served, INVALID_REQUEST for a client software name
   that Kafka's pattern refuses) may be followed by another, as in Kafka, where a client
   retries at the highest version the error reply names; then
2. SaslHandshake (v0 or v1) naming an enabled mechanism, else UNSUPPORTED_SASL_MECHANISM with
   the enabled mechanisms and the connection is closed;
3. the mechanism's exchange: after SaslHandshake v1, SaslAuthenticate requests (KIP-152) carrying
   the tokens; after v0, the raw size-prefixed tokens themselves.

Anything else (a Metadata or Produce request from a client that skipped SASL, bytes that are not
a request) closes the connection without an answer, after connection.failed.authentication.
delay.ms as for every failed authentication; a request other than SaslAuthenticate in the middle
of an exchange gets its own error response with ILLEGAL_SASL_STATE first, as in Kafka. A failed
exchange is answered with SASL_AUTHENTICATION_FAILED and a message (the generic "invalid
credentials" one when the reason must stay on the server, as for SCRAM's unknown users and bad
proofs). Frames before authentication are limited to sasl.server.max.receive.size.

After authentication the principal is ``User:<authorization id>`` (for a delegation token, its
owner's name, marked token-authenticated) and frames go to dispatch.
With connections.max.reauth.ms set, or a credential that expires (an OAUTHBEARER token, a
delegation token), the session lasts the smaller of the two and SaslAuthenticate reports that
lifetime; a client
re-authenticates (KIP-368) by sending SaslHandshake again on the same connection, with the same
mechanism and principal, at most once a second; any other request after the session expired
closes the connection. SaslHandshake and SaslAuthenticate that are not part of an exchange reach
their handlers, which answer ILLEGAL_SASL_STATE (server/apis/sasl_*.py).
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import TYPE_CHECKING, Any

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.headers import API_VERSIONS_KEY, parse_request_header, response_header
from kafkapy.protocol.wire import INT16, DecodeError
from kafkapy.security.listener_security import ListenerSecurity
from kafkapy.security.oauthbearer import OAuthBearerServer
from kafkapy.security.plain import PlainServer
from kafkapy.security.principal import KafkaPrincipal
from kafkapy.security.sasl import (
    OAUTHBEARER,
    PLAIN,
    SaslAuthenticationError,
    SaslCredentialError,
    SaslServer,
    SaslServerFailure,
    generic_failure,
)
from kafkapy.security.scram import ScramServer
from kafkapy.security.session import Session

from ..apis.api_versions import valid_client_software, valid_cluster_and_node
from ..error_response import error_response
from ..network.connection import PASS, decode_body
from ..registry import REGISTRY
from ..request_context import AuthenticationFailed, CloseConnection
from ..responses import build, encode_entity, response_module

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.sasl")

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
MIN_REAUTH_INTERVAL_S = 1.0

# states
VERSIONS_OR_HANDSHAKE = "versions_or_handshake"
HANDSHAKE = "handshake"
AUTHENTICATE = "authenticate"
COMPLETE = "complete"
REAUTH_BAD_MECHANISM = "reauth_bad_mechanism"


def _api_name(api_key: int) -> str:
    reg = REGISTRY.get(api_key)
    return reg.range.name if reg is not None else f"api key {api_key}"


class Authenticator:
    """The SASL stage of one connection (see the module doc)."""

    def __init__(self, broker: Broker, listener: ListenerSecurity, session: Session) -> None:
        self.broker = broker
        self.listener = listener
        self.session = session
        self.state = VERSIONS_OR_HANDSHAKE
        self.server: SaslServer | None = None
        self.headers = False  # SaslHandshake v1: tokens come in SaslAuthenticate requests
        self.reauthenticating = False
        self.client_supports_reauth = False
        self.expires_at: float | None = None  # monotonic time the session ends (None: never)
        self._last_reauth = 0.0
        self._reauth_mechanism: str | None = None

    @property
    def max_receive(self) -> int:
        if self.state == COMPLETE:
            return self.broker.config.socket_request_max_bytes
        return self.listener.sasl_max_receive

    # -- frames ------------------------------------------------------------------------------
    async def on_frame(self, frame: bytearray) -> Any:
        """Answer ``frame`` (response parts), let it through (PASS), or raise."""
        if self.state == COMPLETE:
            return self._authenticated(frame)
        if self.state == AUTHENTICATE and not self.headers:
            return self._token(bytes(frame), None)
        if self.state == REAUTH_BAD_MECHANISM:
            raise AuthenticationFailed(
                f"SASL mechanism requested by client is not supported for re-authentication of "
                f"mechanism '{self._reauth_mechanism}'"
            )
        try:
            header = parse_request_header(frame)
        except (DecodeError, UnicodeDecodeError):
            raise AuthenticationFailed("the first packet is not a Kafka request") from None
        key = header.api_key
        if self.state == AUTHENTICATE:
            if key != SASL_AUTHENTICATE_KEY:
                self._unexpected_during_exchange(header, frame)
            return self._authenticate_request(header, frame)
        if key == API_VERSIONS_KEY and self.state == VERSIONS_OR_HANDSHAKE:
            if self._versions_will_succeed(header, frame):
                self.state = HANDSHAKE
            return PASS
        if key != SASL_HANDSHAKE_KEY:
            raise AuthenticationFailed(
                f"Unexpected Kafka request of type {_api_name(key)} during SASL handshake."
            )
        return self._handshake(header, frame)

    def _versions_will_succeed(self, header: Any, frame: bytearray) -> bool:
        """Whether the ApiVersions handler answers this request without an error. A version
        not served (UNSUPPORTED_VERSION, in a v0 reply) or a client software name or version
        that Kafka's pattern refuses, or a v5 cluster id without a node id or the reverse
        (INVALID_REQUEST), leaves the stage waiting for ApiVersions
        or SaslHandshake, as Kafka's SaslServerAuthenticator stays in HANDSHAKE_OR_VERSIONS:
        a client retries ApiVersions at the version the error reply names."""
        reg = REGISTRY.get(header.api_key)
        if reg is None or not reg.range.accepts(header.api_version):
            return False
        request = decode_body(header, frame)
        return valid_client_software(request) and valid_cluster_and_node(request)

    def _unexpected_during_exchange(self, header: Any, frame: bytearray) -> None:
        """Another request where a SaslAuthenticate was due: Kafka answers it with its own
        error response (ILLEGAL_SASL_STATE), then fails the authentication."""
        message = (
            f"Unexpected Kafka request of type {_api_name(header.api_key)} during SASL "
            "authentication."
        )
        response = None
        reg = REGISTRY.get(header.api_key)
        if reg is not None and reg.range.accepts(header.api_version):
            try:
                request = decode_body(header, frame)
                entity = error_response(
                    header.api_key,
                    header.api_version,
                    request,
                    ErrorCode.illegal_sasl_state,
                    message,
                )
                if entity is not None:
                    response = self._respond(header, entity)
            except CloseConnection:
                pass  # a body that does not decode gets no answer
        raise AuthenticationFailed(message, response)

    def _authenticated(self, frame: bytearray) -> Any:
        key = INT16.unpack_from(frame, 0)[0] if len(frame) >= 2 else -1
        now = time.monotonic()
        if (
            key == SASL_HANDSHAKE_KEY
            and self.expires_at is not None
            and now - self._last_reauth >= MIN_REAUTH_INTERVAL_S
        ):
            self._last_reauth = now
            self.reauthenticating = True
            self._reauth_mechanism = self.session.sasl_mechanism
            try:
                header = parse_request_header(frame)
            except (DecodeError, UnicodeDecodeError) as e:
                raise CloseConnection(f"bad request header: {e}") from None
            return self._handshake(header, frame)
        if self.expires_at is not None and now > self.expires_at:
            raise CloseConnection("SASL session expired (connections.max.reauth.ms)")
        return PASS

    # -- SaslHandshake -----------------------------------------------------------------------
    def _checked(self, header: Any) -> None:
        reg = REGISTRY.get(header.api_key)
        if reg is None or not reg.range.accepts(header.api_version):
            raise CloseConnection(
                f"unsupported version {header.api_version} of {_api_name(header.api_key)}"
            )

    def _respond(self, header: Any, entity: Any) -> list[bytes]:
        head = response_header(header.api_key, header.correlation_id, header.flexible)
        return [head, encode_entity(entity)]

    def _handshake(self, header: Any, frame: bytearray) -> list[bytes]:
        self._checked(header)
        request = decode_body(header, frame)
        R = response_module(header.api_key, header.api_version)
        mechanism = request.mechanism
        enabled = self.listener.mechanisms
        if mechanism not in enabled:
            response = build(
                R.SaslHandshakeResponse,
                error_code=ErrorCode.unsupported_sasl_mechanism,
                mechanisms=enabled,
            )
            raise AuthenticationFailed(
                f"Unsupported SASL mechanism {mechanism}", self._respond(header, response)
            )
        self.headers = header.api_version >= 1
        response = build(R.SaslHandshakeResponse, error_code=ErrorCode.none, mechanisms=enabled)
        if self.reauthenticating and mechanism != self._reauth_mechanism:
            self.state = REAUTH_BAD_MECHANISM
        else:
            self.server = self._new_server(mechanism)
            self.state = AUTHENTICATE
        return self._respond(header, response)

    def _new_server(self, mechanism: str) -> SaslServer:
        if mechanism == PLAIN:
            return PlainServer(self.listener.plain_users.get)
        if mechanism == OAUTHBEARER and self.listener.oauth_validator is not None:
            return OAuthBearerServer(self.listener.oauth_validator)
        tokens = self.broker.delegation_tokens
        return ScramServer(mechanism, self.broker.scram_credentials.get, tokens.scram_token)

    # -- the exchange ------------------------------------------------------------------------
    def _authenticate_request(self, header: Any, frame: bytearray) -> list[bytes]:
        self._checked(header)
        if header.api_version > 0:
            self.client_supports_reauth = True
        request = decode_body(header, frame)
        return self._token(request.auth_bytes, header)

    def _token(self, token: bytes, header: Any) -> list[bytes]:
        server = self.server
        assert server is not None
        R = response_module(header.api_key, header.api_version) if header is not None else None
        try:
            challenge = server.evaluate(token)
            lifetime_ms = 0
            if server.complete:
                lifetime_ms = self._complete(server)
        except (SaslAuthenticationError, SaslCredentialError) as e:
            message = (
                str(e)
                if isinstance(e, SaslAuthenticationError)
                else generic_failure(server.mechanism, self.reauthenticating)
            )
            response = None
            if R is not None:
                response = self._respond(
                    header,
                    build(
                        R.SaslAuthenticateResponse,
                        error_code=ErrorCode.sasl_authentication_failed,
                        error_message=message,
                        auth_bytes=b"",
                        session_lifetime=datetime.timedelta(0),
                    ),
                )
            raise AuthenticationFailed(str(e), response) from None
        except SaslServerFailure as e:
            raise CloseConnection(f"SASL {server.mechanism} failed: {e}") from None
        if R is None:
            return [challenge]  # v0: the raw token, size-prefixed
        return self._respond(
            header,
            build(
                R.SaslAuthenticateResponse,
                error_code=ErrorCode.none,
                error_message="",  # Kafka's default for the field, also on success
                auth_bytes=challenge,
                session_lifetime=datetime.timedelta(milliseconds=lifetime_ms),
            ),
        )

    def _session_lifetime_ms(self, server: SaslServer) -> int:
        """Kafka's ReauthInfo: the session lasts connections.max.reauth.ms for the mechanism,
        or until the credential expires (an OAUTHBEARER token's exp), whichever comes first;
        sets when the session expires (None: never). 0 in the answer means no limit."""
        max_reauth = self.listener.reauth_ms.get(server.mechanism, 0)
        expiry_ms: int | None = getattr(server, "credential_expiry_ms", None)
        if expiry_ms is None and max_reauth <= 0:
            self.expires_at = None
            return 0
        if expiry_ms is None:
            lifetime_ms = max_reauth
        else:
            remaining = max(0, expiry_ms - int(time.time() * 1000))
            lifetime_ms = min(remaining, max_reauth) if max_reauth > 0 else remaining
        self.expires_at = time.monotonic() + lifetime_ms / 1000
        return lifetime_ms

    def _complete(self, server: SaslServer) -> int:
        """Take the authenticated principal; the session lifetime in ms (0: unlimited)."""
        principal = KafkaPrincipal.user(server.authorization_id)
        if getattr(server, "token_authenticated", False):  # SCRAM with a delegation token
            principal = KafkaPrincipal(principal.principal_type, principal.name, True)
        if self.reauthenticating and principal != self.session.principal:
            old = self.session.principal
            raise SaslAuthenticationError(
                f"Cannot change principals during re-authentication from "
                f"{old.principal_type}.{old.name}: {principal.principal_type}.{principal.name}"
            )
        self.session.principal = principal
        self.session.sasl_mechanism = server.mechanism
        lifetime_ms = self._session_lifetime_ms(server)
        log.debug(
            "%s peer=%s listener=%s principal=%s mechanism=%s",
            "re-authenticated" if self.reauthenticating else "authenticated",
            self.session.peer,
            self.session.listener_name,
            principal,
            server.mechanism,
        )
        self.state = COMPLETE
        self.server = None
        self.reauthenticating = False
        return lifetime_ms
