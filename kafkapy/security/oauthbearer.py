"""SASL/OAUTHBEARER (RFC 7628, KIP-255) as Kafka's OAuthBearerSaslServer evaluates it.

The client's one message is the GS2 header ``n,[a=<authzid>],`` then ``%x01``-separated
``key=value`` pairs ended by ``%x01%x01``: ``auth=Bearer <token>`` and the SASL extensions of
KIP-342 (any other keys: names of letters, values of printable characters). The token goes to
the listener's validator (:class:`TokenValidator`: Kafka's unsecured JWS validator or its
JWKS-checking default validator). A refused token is answered, as RFC 7628 and Kafka answer it,
with a JSON error document as the server's challenge (``{"status":"invalid_token"}``, with
``"scope"`` for a missing required scope); the client then sends ``%x01`` and the exchange fails
with SASL_AUTHENTICATION_FAILED carrying that JSON. A message that does not parse fails at once
with Kafka's generic message (:class:`~.sasl.SaslCredentialError`).

An accepted token names the principal (``User:<principal>``) and the credential's expiry, which
bounds the session (KIP-368: the SaslAuthenticate answer's session lifetime is the smaller of
``connections.max.reauth.ms`` and the token's remaining lifetime).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from .sasl import OAUTHBEARER, SaslAuthenticationError, SaslCredentialError, SaslServerFailure

OAUTHBEARER_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
VALIDATOR_CALLBACK_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
)
UNSECURED_VALIDATOR_CALLBACK_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured."
    "OAuthBearerUnsecuredValidatorCallbackHandler"
)

_SEP = "\x01"
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
_INITIAL_RESPONSE = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_SEP}(?P<kvpairs>(?:{_KEY}={_VALUE}{_SEP})*){_SEP}",
    re.S,
)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")
_KEY_RE = re.compile(_KEY)
_VALUE_RE = re.compile(_VALUE)


class TokenRefused(Exception):
    """The validator refused the token: ``status`` (invalid_token, insufficient_scope) and the
    required ``scope`` go into the JSON error; the message is for the broker's log."""

    def __init__(self, message: str, status: str = "invalid_token", scope: str | None = None):
        super().__init__(message)
        self.status = status
        self.scope = scope


@dataclass(frozen=True)
class Token:
    """An accepted token: its principal, expiry (ms since the epoch) and scope."""

    value: str
    principal: str
    lifetime_ms: int
    scope: frozenset[str] = frozenset()
    start_ms: int | None = None
    claims: dict = field(default_factory=dict, compare=False, repr=False)


class TokenValidator(Protocol):
    def validate(self, token: str) -> Token: ...


@dataclass(frozen=True)
class InitialResponse:
    token: str
    authorization_id: str
    extensions: dict[str, str]


def parse_initial_response(data: bytes) -> InitialResponse:
    """Kafka's OAuthBearerClientInitialResponse; SaslCredentialError with Kafka's reason."""
    text = data.decode("utf-8", "replace")
    m = _INITIAL_RESPONSE.fullmatch(text)
    if m is None:
        raise SaslCredentialError("Invalid OAUTHBEARER client first message")
    pairs: dict[str, str] = {}
    for item in m.group("kvpairs").split(_SEP):
        if item:
            key, _, value = item.partition("=")
            pairs[key] = value
    auth = pairs.pop("auth", None)
    if auth is None:
        raise SaslCredentialError("Invalid OAUTHBEARER client first message: 'auth' not specified")
    for key, value in pairs.items():
        if not _KEY_RE.fullmatch(key):
            raise SaslCredentialError(f"Extension name {key} is invalid")
        if not _VALUE_RE.fullmatch(value):
            raise SaslCredentialError(f"Extension value ({value}) for extension {key} is invalid")
    am = _AUTH.fullmatch(auth)
    if am is None:
        raise SaslCredentialError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if am.group("scheme").lower() != "bearer":
        # Kafka 4.4 formats this message from a group its pattern lacks, and the exception
        # that raises closes the connection unanswered (SaslServerFailure)
        raise SaslServerFailure("Invalid scheme in OAUTHBEARER client first message")
    return InitialResponse(am.group("token"), m.group("authzid") or "", pairs)


def json_error(
    status: str, scope: str | None = None, openid_configuration: str | None = None
) -> str:
    """The error document of RFC 7628 section 3.2.2, spelled as Kafka spells it."""
    out = f'{{"status":"{status}"'
    if scope is not None:
        out += f', "scope":"{scope}"'
    if openid_configuration is not None:
        out += f', "openid-configuration":"{openid_configuration}"'
    return out + "}"


class OAuthBearerServer:
    """One OAUTHBEARER exchange on the broker (Kafka's OAuthBearerSaslServer)."""

    mechanism = OAUTHBEARER

    def __init__(self, validator: TokenValidator) -> None:
        self._validator = validator
        self._token: Token | None = None
        self._error: str | None = None
        self.extensions: dict[str, str] = {}

    @property
    def complete(self) -> bool:
        return self._token is not None

    @property
    def authorization_id(self) -> str:
        if self._token is None:
            raise RuntimeError("Authentication exchange has not completed")
        return self._token.principal

    @property
    def credential_expiry_ms(self) -> int | None:
        """When the token expires (ms since the epoch): it bounds the session (KIP-368)."""
        return self._token.lifetime_ms if self._token is not None else None

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise SaslAuthenticationError(self._error)
        self._error = None
        response = parse_initial_response(token)
        try:
            accepted = self._validator.validate(response.token)
        except TokenRefused as e:
            self._error = json_error(e.status, e.scope)
            return self._error.encode()
        if response.authorization_id and response.authorization_id != accepted.principal:
            raise SaslAuthenticationError(
                f"Authentication failed: Client requested an authorization id "
                f"({response.authorization_id}) that is different from the token's principal "
                f"name ({accepted.principal})"
            )
        self.extensions = dict(response.extensions)
        self._token = accepted
        return b""
