"""Kafka's unsecured OAUTHBEARER token validator (OAuthBearerUnsecuredValidatorCallbackHandler
with OAuthBearerUnsecuredJws and OAuthBearerValidationUtils): the broker's default when no
``sasl.server.callback.handler.class`` is set for OAUTHBEARER. For development and tests only,
as in Kafka: a token is an unsigned JWS (``{"alg":"none"}``, an empty signature) whose claims are
trusted as they stand.

Options come from the listener's OAUTHBEARER JAAS line (OAuthBearerLoginModule):
``unsecuredValidatorPrincipalClaimName`` (default ``sub``), ``unsecuredValidatorScopeClaimName``
(default ``scope``), ``unsecuredValidatorRequiredScope`` (space-separated) and
``unsecuredValidatorAllowableClockSkewMs`` (default 0). A token needs ``exp`` (in the future,
less the skew), the principal claim as a non-blank string, an ``iat`` (when present) not after
now plus the skew and before ``exp``, and every required scope; otherwise it is refused with
``invalid_token`` (``insufficient_scope`` and the required scope for a missing scope).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Mapping
from typing import Any

from .oauthbearer import Token, TokenRefused

OPTION_PREFIX = "unsecuredValidator"


class UnsecuredConfigError(ValueError):
    """An unsecured validator option is unusable."""


def _decode_part(part: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        raise TokenRefused("malformed Base64 URL encoded value") from None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise TokenRefused("malformed JSON") from None
    if not isinstance(value, dict):
        raise TokenRefused("malformed JSON")
    return value


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenRefused(
            f"The '{name}' claim was not of type Number: {type(value).__name__}"
        )
    return float(value)


def _scope(claims: Mapping[str, Any], name: str) -> frozenset[str]:
    value = claims.get(name)
    if isinstance(value, str):
        return frozenset({value.strip()}) if value.strip() else frozenset()
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise TokenRefused(f"The '{name}' claim was not of type List: {type(value).__name__}")
    return frozenset(str(s).strip() for s in value if str(s).strip())


class UnsecuredValidator:
    """Validates unsecured JWS tokens with the JAAS options (see the module doc)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        def option(name: str) -> str:
            return (options.get(OPTION_PREFIX + name) or "").strip()

        self.principal_claim = option("PrincipalClaimName") or "sub"
        self.scope_claim = option("ScopeClaimName") or "scope"
        self.required_scope = option("RequiredScope").split()
        skew = option("AllowableClockSkewMs")
        try:
            self.skew_ms = int(skew) if skew else 0
        except ValueError:
            raise UnsecuredConfigError(
                f'For input string: "{skew}" (unsecuredValidatorAllowableClockSkewMs)'
            ) from None
        if self.skew_ms < 0:
            raise UnsecuredConfigError(
                f"Allowable clock skew millis must not be negative: {skew}"
            )

    def validate(self, token: str) -> Token:
        now_ms = int(time.time() * 1000)
        if ".." in token:
            raise TokenRefused("Malformed compact serialization contains '..'")
        parts = token.split(".")
        if len(parts) != 3:
            raise TokenRefused(
                "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded "
                "values"
            )
        header, claims = _decode_part(parts[0]), _decode_part(parts[1])
        if header.get("alg") != "none":
            raise TokenRefused("Unsecured JWS must have 'none' for an algorithm")
        if parts[2]:
            raise TokenRefused("Unsecured JWS must not contain a digital signature")
        scope = _scope(claims, self.scope_claim)
        exp = _number(claims, "exp")
        if exp is None:
            raise TokenRefused("No expiration time in JWT")
        principal = claims.get(self.principal_claim)
        if principal is None:
            raise TokenRefused(f"No principal name in JWT claim: {self.principal_claim}")
        if not isinstance(principal, str):
            raise TokenRefused(
                f"The '{self.principal_claim}' claim was not of type String: "
                f"{type(principal).__name__}"
            )
        if not principal.strip():
            raise TokenRefused(f"No principal name in JWT claim: {self.principal_claim}")
        iat = _number(claims, "iat")
        if iat is not None and 1000 * iat > now_ms + self.skew_ms:
            raise TokenRefused(
                f"The Issued At value ({iat:f} seconds) was after the indicated time ({now_ms} ms) "
                f"plus allowable clock skew ({self.skew_ms} ms)"
            )
        if now_ms - self.skew_ms >= 1000 * exp:
            raise TokenRefused(
                f"The indicated time ({now_ms} ms) minus allowable clock skew ({self.skew_ms} ms) "
                f"was on or after the Expiration Time value ({exp:f} seconds)"
            )
        if iat is not None and exp <= iat:
            raise TokenRefused(
                f"The Expiration Time time ({exp:f} seconds) was not after the Issued At time "
                f"({iat:f} seconds)"
            )
        for required in self.required_scope:
            if required not in scope:
                raise TokenRefused(
                    f"The provided scope ({sorted(scope)}) was missing a required scope "
                    f"({required}).  All required scope elements: {self.required_scope}",
                    status="insufficient_scope",
                    scope="[" + ", ".join(self.required_scope) + "]",
                )
        return Token(
            value=token,
            principal=principal,
            lifetime_ms=round(exp * 1000),
            scope=scope,
            start_ms=round(iat * 1000) if iat is not None else None,
            claims=claims,
        )
