"""SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer evaluates it: one client message
``[authzid] NUL authcid NUL passwd``, checked against the listener's users (the ``user_<name>``
options of its PLAIN JAAS config). An authorization id, if given, must equal the user name."""

from __future__ import annotations

import hmac
from collections.abc import Callable

from .sasl import PLAIN, SaslAuthenticationError

PasswordLookup = Callable[[str], str | None]


class PlainServer:
    mechanism = PLAIN

    def __init__(self, password_of: PasswordLookup) -> None:
        self._password_of = password_of
        self._user: str | None = None

    @property
    def complete(self) -> bool:
        return self._user is not None

    @property
    def authorization_id(self) -> str:
        if self._user is None:
            raise RuntimeError("authentication exchange has not completed")
        return self._user

    def evaluate(self, token: bytes) -> bytes:
        if self._user is not None:
            raise SaslAuthenticationError("Authentication failed: unexpected PLAIN token")
        text = token.decode("utf-8", "replace")
        parts = text.split("\0", 3)
        if len(parts) != 3:
            raise SaslAuthenticationError(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}"
            )
        authzid, user, password = parts
        if not user:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._password_of(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different "
                "from username"
            )
        self._user = user
        return b""


class PlainClient:
    mechanism = PLAIN

    def __init__(self, username: str, password: str) -> None:
        self._token = b"\0" + username.encode() + b"\0" + password.encode()
        self._sent = False

    @property
    def complete(self) -> bool:
        return self._sent

    def first(self) -> bytes:
        self._sent = True
        return self._token

    def evaluate(self, challenge: bytes) -> bytes | None:
        return None
