"""The broker's delegation tokens in memory (Kafka's DelegationTokenCache): each token's
information, its HMAC, and the SCRAM credentials a client authenticates with.

A token authenticates over SCRAM-SHA-256 or SCRAM-SHA-512 with its id as the user name and the
base64 of its HMAC as the password (and the ``tokenauth=true`` SCRAM extension). Every broker
derives those credentials itself from the HMAC, with a salt of its own and the mechanism's minimum
iterations (Kafka's ScramFormatter.generateCredential), so no secret is stored with the token.
Renew and expire find a token by its HMAC.
"""

from __future__ import annotations

import base64
import hashlib
import hmac as hmac_lib

from kafkapy.metadata.delegation_tokens import TokenInformation
from kafkapy.security.scram import MECHANISMS, ScramCredential

HMAC_ALGORITHM = "sha512"  # Kafka's HmacSHA512


def create_hmac(token_id: str, secret_key: str) -> bytes:
    """HMAC-SHA512 of the token id under ``delegation.token.secret.key`` (both UTF-8)."""
    return hmac_lib.new(secret_key.encode(), token_id.encode(), hashlib.sha512).digest()


def hmac_text(hmac: bytes) -> str:
    """The HMAC as a client's password: standard base64 with padding."""
    return base64.b64encode(hmac).decode()


def scram_credentials(hmac: bytes) -> dict[str, ScramCredential]:
    """The token's credential per SCRAM mechanism (password: the HMAC's base64)."""
    password = hmac_text(hmac)
    return {
        name: ScramCredential.from_password(mech, password, mech.min_iterations)
        for name, mech in MECHANISMS.items()
    }


class DelegationTokenCache:
    """Tokens by id, token ids by HMAC, and the tokens' SCRAM credentials."""

    def __init__(self) -> None:
        self._tokens: dict[str, TokenInformation] = {}
        self._hmacs: dict[str, str] = {}  # token id -> base64 HMAC
        self._ids_by_hmac: dict[str, str] = {}
        self._credentials: dict[str, dict[str, ScramCredential]] = {}

    def update(
        self, info: TokenInformation, hmac: bytes, credentials: dict[str, ScramCredential] | None
    ) -> None:
        """Take the token (new or changed); ``credentials`` None keeps those it has."""
        token_id = info.token_id
        self._tokens[token_id] = info
        text = hmac_text(hmac)
        self._hmacs[token_id] = text
        self._ids_by_hmac[text] = token_id
        if credentials is not None or token_id not in self._credentials:
            self._credentials[token_id] = credentials or scram_credentials(hmac)

    def has_credentials(self, token_id: str) -> bool:
        return token_id in self._credentials

    def remove(self, token_id: str) -> None:
        self._tokens.pop(token_id, None)
        text = self._hmacs.pop(token_id, None)
        if text is not None:
            self._ids_by_hmac.pop(text, None)
        self._credentials.pop(token_id, None)

    def token(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def token_for_hmac(self, hmac: bytes) -> TokenInformation | None:
        token_id = self._ids_by_hmac.get(hmac_text(hmac))
        return None if token_id is None else self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        return list(self._tokens.values())

    def credential(self, mechanism: str, token_id: str) -> ScramCredential | None:
        return self._credentials.get(token_id, {}).get(mechanism)
