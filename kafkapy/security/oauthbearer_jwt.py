"""Kafka 4.4's default OAUTHBEARER validator for brokers (OAuthBearerValidatorCallbackHandler with
DefaultJwtValidator -> BrokerJwtValidator): JWTs signed by the OAuth/OIDC provider, checked
against the provider's JSON Web Key Set.

Configured as on Kafka, per listener (``listener.name.<l>.`` prefixes override the broker-wide
keys): ``listener.name.<l>.oauthbearer.sasl.server.callback.handler.class`` naming
OAuthBearerValidatorCallbackHandler, ``sasl.oauthbearer.jwks.endpoint.url`` (http, https or
file; like Kafka 4.4, the URL must be allowed by the JVM system property
``org.apache.kafka.sasl.oauthbearer.allowed.urls``, read here from ``KAFKA_OPTS``),
``sasl.oauthbearer.expected.audience`` and ``.expected.issuer`` (required unless
``sasl.oauthbearer.allow.unverified.audience`` / ``.issuer`` is true), ``.clock.skew.seconds``,
``.sub.claim.name``, ``.scope.claim.name``, and the JWKS refresh settings
(``sasl.oauthbearer.jwks.endpoint.refresh.ms``, ``.retry.backoff.ms``, ``.retry.backoff.max.ms``).

A token must carry a signature by a key of the set (the key named by its ``kid``; any algorithm
but ``none`` that fits the key), ``exp`` and ``iat``, ``nbf`` (when present) reached, all within
the clock skew, the expected audience and issuer, and a non-blank subject claim; the principal is
the subject. Signatures are checked by PyJWT (with cryptography). A key id the set lacks asks for
an early refresh of the set (the token is refused meanwhile, as Kafka's resolver does).

The key set lives in :class:`JwksKeys`; fetching it over HTTP on the refresh schedule is the
server's job (kafkapy/server/security/jwks_refresh.py); a file:// set is read again whenever
the file changes.
"""

from __future__ import annotations

import json
import os
import shlex
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import jwt

from .oauthbearer import Token, TokenRefused

ALLOWED_URLS_PROPERTY = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
JWKS_URL = "sasl.oauthbearer.jwks.endpoint.url"
_FAMILIES = {
    "RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    "EC": ("ES256", "ES384", "ES512", "ES256K"),
    "OKP": ("EdDSA",),
}


class OAuthConfigError(ValueError):
    """The OAUTHBEARER validator's configuration is unusable (Kafka's message)."""


def system_property(name: str, environ: Mapping[str, str] | None = None) -> str:
    """A ``-Dname=value`` JVM system property as the operator passes it in ``KAFKA_OPTS``."""
    opts = (environ if environ is not None else os.environ).get("KAFKA_OPTS", "")
    value = ""
    for word in shlex.split(opts):
        if word.startswith(f"-D{name}="):
            value = word[len(name) + 3 :]
    return value


class JwksKeys:
    """The current JSON Web Key Set, by key id (see the module doc)."""

    def __init__(self, url: str, refresh_ms: int, backoff_ms: int, backoff_max_ms: int) -> None:
        self.url = url
        self.refresh_ms = refresh_ms
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        parsed = urlparse(url)
        self.file = Path(parsed.path) if parsed.scheme.lower() == "file" else None
        self._keys: list[tuple[jwt.PyJWK, str | None]] = []  # each key, its declared alg
        self._lock = threading.Lock()
        self._file_mtime: float | None = None
        self.on_missing_key: Callable[[], None] = lambda: None
        self.refreshed_at = 0.0

    def set_document(self, text: str | bytes) -> None:
        """Install a fetched JWKS document; ValueError when it is not one."""
        try:
            entries = json.loads(text)["keys"]
            if not isinstance(entries, list):
                raise TypeError("'keys' is not a list")
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"not a JSON Web Key Set: {e}") from None
        keys: list[tuple[jwt.PyJWK, str | None]] = []
        for entry in entries:
            try:  # keys of unknown types or uses are skipped, as a JWKS reader does
                if isinstance(entry, dict) and entry.get("use", "sig") == "sig":
                    keys.append((jwt.PyJWK(entry), entry.get("alg")))
            except (jwt.PyJWTError, ValueError, TypeError, KeyError):
                continue
        with self._lock:
            self._keys = list(keys)
        self.refreshed_at = time.monotonic()

    def load_file(self) -> None:
        assert self.file is not None
        mtime = self.file.stat().st_mtime
        if mtime != self._file_mtime:
            self.set_document(self.file.read_bytes())
            self._file_mtime = mtime

    def keys_for(self, kid: str | None) -> list[tuple[jwt.PyJWK, str | None]]:
        if self.file is not None:
            try:
                self.load_file()
            except (OSError, ValueError):
                pass  # keep the keys last read
        with self._lock:
            keys = list(self._keys)
        found = [(k, alg) for k, alg in keys if kid is None or k.key_id == kid]
        if not found and self.file is None:
            self.on_missing_key()
        return found


def _claim_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    raise TokenRefused("Could not extract the scope claim from the access token")


class JwtValidator:
    """BrokerJwtValidator: validate a signed JWT (see the module doc)."""

    def __init__(
        self,
        keys: JwksKeys,
        audience: list[str],
        issuer: str | None,
        skew_s: int = 30,
        sub_claim: str = "sub",
        scope_claim: str = "scope",
    ) -> None:
        self.keys = keys
        self.audience = audience
        self.issuer = issuer
        self.skew_s = skew_s
        self.sub_claim = sub_claim
        self.scope_claim = scope_claim

    def validate(self, token: str) -> Token:
        if token.count(".") != 2 or not all(token.split(".")):
            raise TokenRefused(
                "Malformed JWT provided; expected three sections (header, payload, and signature)"
            )
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as e:
            raise TokenRefused(f"Could not validate the access token: {e}") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            raise TokenRefused("Could not validate the access token: 'none' is not allowed")
        kid = header.get("kid")
        candidates = [
            k for k, declared in self.keys.keys_for(kid)
            if alg in _FAMILIES.get(k.key_type or "", ()) and declared in (alg, None)
        ]
        if not candidates:
            raise TokenRefused(
                f"Could not validate the access token: no suitable verification key for JWS "
                f"w/ header {json.dumps(header)}"
            )
        options: dict[str, Any] = {"require": ["exp", "iat"], "verify_aud": bool(self.audience)}
        claims: dict[str, Any] | None = None
        error: Exception | None = None
        for key in candidates:
            try:
                claims = jwt.decode(
                    token,
                    key=key.key,
                    algorithms=[alg],
                    audience=self.audience or None,
                    issuer=self.issuer,
                    leeway=self.skew_s,
                    options=options,  # type: ignore[arg-type]
                )
                break
            except jwt.PyJWTError as e:
                error = e
        if claims is None:
            raise TokenRefused(f"Could not validate the access token: {error}")
        subject = claims.get(self.sub_claim)
        if not isinstance(subject, str) or not subject.strip():
            raise TokenRefused(f"{self.sub_claim} value must be non-null, non-empty")
        scope = _claim_list(claims.get(self.scope_claim))
        if len(set(scope)) != len(scope):
            raise TokenRefused(f"{self.scope_claim} value must not contain duplicates")
        exp, iat = claims["exp"], claims["iat"]
        if not isinstance(exp, int | float) or exp < 0:
            raise TokenRefused(f'exp value must be non-negative; value given was "{exp}"')
        return Token(
            value=token,
            principal=subject,
            lifetime_ms=round(exp * 1000),
            scope=frozenset(s.strip() for s in scope),
            start_ms=round(iat * 1000) if isinstance(iat, int | float) else None,
            claims=claims,
        )


def _setting(settings: Mapping[str, str], key: str) -> str:
    return (settings.get(key) or "").strip()


def _long(settings: Mapping[str, str], key: str, default: int) -> int:
    text = _setting(settings, key)
    try:
        value = int(text) if text else default
    except ValueError:
        raise OAuthConfigError(f"Invalid value {text} for configuration {key}") from None
    if value < 0:
        raise OAuthConfigError(f"The OAuth configuration option {key} value must be at least 0")
    return value


def build_jwt_validator(
    settings: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> JwtValidator:
    """The validator as OAuthBearerValidatorCallbackHandler configures it from the listener's
    settings; OAuthConfigError with Kafka's message when they do not allow one."""
    url = _setting(settings, JWKS_URL)
    if not url:
        raise OAuthConfigError(
            f'The OAuth validator for the broker requires "{JWKS_URL}" to be configured so that '
            f'JWT signatures can be verified, but it was not set. Set "{JWKS_URL}" to the '
            "OAuth/OIDC provider's JWKS endpoint URL for this listener, or configure a "
            'signature-verifying "sasl.oauthbearer.jwt.validator.class".'
        )
    scheme = urlparse(url).scheme.lower()
    if not scheme:
        raise OAuthConfigError(
            f"The OAuth configuration option {JWKS_URL} contains a URL ({url}) that is missing "
            "the protocol"
        )
    if scheme not in ("http", "https", "file"):
        raise OAuthConfigError(
            f"The OAuth configuration option {JWKS_URL} contains a URL ({url}) that contains an "
            f'invalid protocol ({scheme}); only "http", "https", and "file" protocol are supported'
        )
    allowed = {u.strip() for u in system_property(ALLOWED_URLS_PROPERTY, environ).split(",")}
    if url not in allowed:
        raise OAuthConfigError(
            f"Invalid value {url} for configuration {JWKS_URL}: The URL cannot be accessed due "
            f"to restrictions. Update the system property '{ALLOWED_URLS_PROPERTY}' to allow "
            "the URL to be accessed."
        )
    audience = [a.strip() for a in _setting(settings, "sasl.oauthbearer.expected.audience")
                .split(",") if a.strip()]
    issuer = _setting(settings, "sasl.oauthbearer.expected.issuer") or None
    for what, claim, given in (("audience", "aud", audience), ("issuer", "iss", issuer)):
        allow = _setting(settings, f"sasl.oauthbearer.allow.unverified.{what}").lower() == "true"
        if not given and not allow:
            raise OAuthConfigError(
                f'The OAuth validator for the broker requires "sasl.oauthbearer.expected.{what}" '
                f"to be configured so that the token's {what} (\"{claim}\") claim can be "
                f'verified, but it was not set. Set "sasl.oauthbearer.expected.{what}" or set '
                f'"sasl.oauthbearer.allow.unverified.{what}" to true.'
            )
    keys = JwksKeys(
        url,
        _long(settings, "sasl.oauthbearer.jwks.endpoint.refresh.ms", 3_600_000),
        _long(settings, "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", 100),
        _long(settings, "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", 10_000),
    )
    if keys.file is not None:
        for broken, what in ((not keys.file.exists(), "doesn't exist"),
                             (keys.file.is_dir(), "is a directory, not a file"),
                             (not os.access(keys.file, os.R_OK), "doesn't have read permission")):
            if broken:
                raise OAuthConfigError(
                    f"The OAuth configuration option {JWKS_URL} contains a file ({keys.file}) "
                    f"that {what}"
                )
        try:
            keys.load_file()
        except (OSError, ValueError) as e:
            raise OAuthConfigError(
                f"The OAuth configuration option {JWKS_URL} contains a file ({keys.file}) that "
                f"could not be read as a JWKS: {e}"
            ) from None
    return JwtValidator(
        keys,
        audience,
        issuer,
        _long(settings, "sasl.oauthbearer.clock.skew.seconds", 30),
        _setting(settings, "sasl.oauthbearer.sub.claim.name") or "sub",
        _setting(settings, "sasl.oauthbearer.scope.claim.name") or "scope",
    )
