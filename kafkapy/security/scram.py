"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka runs them, sans-io.

Credentials are what Kafka stores per user and mechanism in the user's config entity
(``/config/users/<user>``, key ``SCRAM-SHA-256``): ``salt=<b64>,stored_key=<b64>,
server_key=<b64>,iterations=<n>`` (:meth:`ScramCredential.to_config`). The password is never
stored; ``SaltedPassword = Hi(password, salt, i)`` is PBKDF2-HMAC, ``StoredKey = H(HMAC(
SaltedPassword, "Client Key"))``, ``ServerKey = HMAC(SaltedPassword, "Server Key")``.

:class:`ScramServer` is Kafka's ScramSaslServer: client-first (``n,[a=authzid],n=user,r=nonce``),
server-first (``r=nonce+server nonce,s=salt,i=iterations``), client-final (``c=biws,r=..,p=proof``)
verified against StoredKey, server-final (``v=ServerSignature``). Unknown users and bad proofs are
:class:`~kafkapy.security.sasl.SaslCredentialError` (the client learns nothing more than
"invalid credentials"). With the ``tokenauth=true`` extension the user name is a delegation
token's id and the credential the token's (:class:`TokenCredential`); the authorization id is then
the token's owner (Kafka's DelegationTokenCredentialCallback). :class:`ScramClient` is the other
side, for the broker's own connections.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from .sasl import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    SaslAuthenticationError,
    SaslCredentialError,
)

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384  # the most AlterUserScramCredentials accepts (Kafka's limit)


@dataclass(frozen=True)
class ScramMechanism:
    name: str
    hash_name: str  # hashlib name
    min_iterations: int = MIN_ITERATIONS

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode(), salt, iterations)


MECHANISMS = {
    SCRAM_SHA_256: ScramMechanism(SCRAM_SHA_256, "sha256"),
    SCRAM_SHA_512: ScramMechanism(SCRAM_SHA_512, "sha512"),
}
# AlterUserScramCredentials / DescribeUserScramCredentials mechanism ids
MECHANISM_IDS = {1: SCRAM_SHA_256, 2: SCRAM_SHA_512}
MECHANISM_ID_OF = {v: k for k, v in MECHANISM_IDS.items()}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def random_nonce() -> str:
    """A random printable nonce (as Kafka: 130 random bits in base 36)."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_config(self) -> str:
        return (
            f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
            f"server_key={_b64(self.server_key)},iterations={self.iterations}"
        )

    @classmethod
    def from_config(cls, text: str) -> ScramCredential:
        """Parse Kafka's stored form; ValueError when it is not one."""
        props: dict[str, str] = {}
        for token in text.split(","):
            key, sep, value = token.partition("=")
            if not sep or not key:
                raise ValueError("Credentials not valid")
            props[key] = value
        if set(props) != {"salt", "stored_key", "server_key", "iterations"}:
            raise ValueError("Credentials not valid")
        try:
            return cls(
                _unb64(props["salt"]),
                _unb64(props["stored_key"]),
                _unb64(props["server_key"]),
                int(props["iterations"]),
            )
        except (ValueError, TypeError):
            raise ValueError("Credentials not valid") from None

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salt: bytes, salted_password: bytes, iterations: int
    ) -> ScramCredential:
        client_key = mechanism.hmac(salted_password, b"Client Key")
        return cls(
            salt,
            mechanism.hash(client_key),
            mechanism.hmac(salted_password, b"Server Key"),
            iterations,
        )

    @classmethod
    def from_password(
        cls,
        mechanism: ScramMechanism,
        password: str,
        iterations: int = MIN_ITERATIONS,
        salt: bytes | None = None,
    ) -> ScramCredential:
        salt = random_nonce().encode() if salt is None else salt
        salted = mechanism.salted_password(password, salt, iterations)
        return cls.from_salted_password(mechanism, salt, salted, iterations)


def sasl_name(username: str) -> str:
    return username.replace("=", "=3D").replace(",", "=2C")


def username_of(name: str) -> str:
    """RFC 5802 saslname -> user name; ValueError on a stray '='."""
    decoded = name.replace("=2C", ",")
    if "=" in decoded.replace("=3D", ""):
        raise ValueError(f"Invalid username: {name}")
    return decoded.replace("=3D", "=")


# the message grammars (Kafka's ScramMessages, RFC 5802 section 7)
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"(?P<gs2>n,(?:a=(?P<authzid>{_SASLNAME}))?,)(?:m={_VALUE},)?"
    rf"(?P<bare>n=(?P<name>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<ext>{_EXTENSIONS}))"
)
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS})"
    rf",p=(?P<proof>{_BASE64})"
)
_SERVER_FIRST = re.compile(
    rf"(?:m={_VALUE},)?r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<i>[0-9]+){_EXTENSIONS}"
)
_SERVER_FINAL = re.compile(rf"(?:e=(?P<error>[^,]+)|v=(?P<signature>{_BASE64})){_EXTENSIONS}")

CredentialLookup = Callable[[str, str], ScramCredential | None]  # (mechanism, user) -> credential


@dataclass(frozen=True)
class TokenCredential:
    """What a delegation token authenticates with: its owner's name, the SCRAM credential
    derived from its HMAC (None: none for this mechanism) and its expiry timestamp (ms)."""

    owner: str
    credential: ScramCredential | None
    expiry_timestamp: int


# (mechanism, token id) -> the token's credential, None for an unknown token
TokenLookup = Callable[[str, str], TokenCredential | None]


class ScramServer:
    """One server-side SCRAM exchange (see the module doc)."""

    def __init__(
        self, mechanism: str, credential_of: CredentialLookup, token_of: TokenLookup | None = None
    ) -> None:
        self.mechanism = mechanism
        self._mech = MECHANISMS[mechanism]
        self._credential_of = credential_of
        self._token_of = token_of
        #: authenticated with a delegation token (the ``tokenauth=true`` extension)
        self.token_authenticated = False
        #: when the credential expires (ms since the epoch): a delegation token's expiry, which
        #: bounds the session as Kafka's CREDENTIAL_LIFETIME_MS does; None for a user's password
        self.credential_expiry_ms: int | None = None
        self._state = "first"
        self._user: str | None = None
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._gs2 = ""
        self._server_first = ""
        self._nonce = ""
        self.extensions: dict[str, str] = {}

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    @property
    def authorization_id(self) -> str:
        if not self.complete or self._user is None:
            raise RuntimeError("authentication exchange has not completed")
        return self._user

    def evaluate(self, token: bytes) -> bytes:
        try:
            if self._state == "first":
                return self._first(token)
            if self._state == "final":
                return self._final(token)
            raise SaslAuthenticationError(
                f"Unexpected challenge in Sasl server state {self._state}"
            )
        except (SaslAuthenticationError, SaslCredentialError):
            self._state = "failed"
            self._credential = None
            raise

    def _first(self, token: bytes) -> bytes:
        text = token.decode("utf-8", "replace")
        m = _CLIENT_FIRST.fullmatch(text)
        if m is None:
            raise SaslCredentialError(f"Invalid SCRAM client first message format: {text}")
        self.extensions = dict(
            item.split("=", 1) for item in m.group("ext").split(",") if "=" in item
        )
        try:
            user = username_of(m.group("name"))
        except ValueError as e:
            raise SaslCredentialError(str(e)) from None
        authorization_id = user
        if self.extensions.get("tokenauth", "").lower() == "true":
            found = None if self._token_of is None else self._token_of(self.mechanism, user)
            if found is None:
                raise SaslCredentialError(f"Token Authentication failed: Invalid tokenId : {user}")
            credential = found.credential
            authorization_id = found.owner
            self.token_authenticated = True
            self.credential_expiry_ms = found.expiry_timestamp
        else:
            credential = self._credential_of(self.mechanism, user)
        if credential is None:
            raise SaslCredentialError("Authentication failed: Invalid user credentials")
        authzid = m.group("authzid")
        if authzid and username_of(authzid) != user:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different "
                "from username"
            )
        if credential.iterations < self._mech.min_iterations:
            raise SaslCredentialError(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self._mech.min_iterations} for {self.mechanism}"
            )
        self._user, self._credential = authorization_id, credential
        self._gs2 = m.group("gs2")
        self._client_first_bare = m.group("bare")
        self._nonce = m.group("nonce") + random_nonce()
        self._server_first = f"r={self._nonce},s={_b64(credential.salt)},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode()

    def _final(self, token: bytes) -> bytes:
        text = token.decode("utf-8", "replace")
        m = _CLIENT_FINAL.fullmatch(text)
        if m is None:
            raise SaslCredentialError(f"Invalid SCRAM client final message format: {text}")
        # Kafka accepts a final nonce that ends with the combined one: librdkafka before 2.1
        # sends its own nonce twice; the proof covers the message as sent either way
        if not m.group("nonce").endswith(self._nonce):
            raise SaslCredentialError("Invalid client nonce in the final client message.")
        if _unb64(m.group("channel")) != self._gs2.encode():
            raise SaslCredentialError("Invalid channel binding in the final client message.")
        cred = self._credential
        assert cred is not None
        auth_message = ",".join(
            (self._client_first_bare, self._server_first, m.group("without_proof"))
        ).encode()
        client_signature = self._mech.hmac(cred.stored_key, auth_message)
        proof = _unb64(m.group("proof"))
        if len(proof) != len(client_signature):
            raise SaslCredentialError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(client_signature, proof, strict=True))
        if not hmac.compare_digest(self._mech.hash(client_key), cred.stored_key):
            raise SaslCredentialError("Invalid client credentials")
        server_signature = self._mech.hmac(cred.server_key, auth_message)
        self._credential = None
        self._state = "complete"
        return b"v=" + _b64(server_signature).encode()


class ScramClient:
    """The client side of one SCRAM exchange."""

    def __init__(
        self, mechanism: str, username: str, password: str, token_auth: bool = False
    ) -> None:
        """``token_auth``: the user name is a delegation token's id and the password its HMAC
        (the ``tokenauth=true`` extension, as the Java client's ScramLoginModule sends it)."""
        self.mechanism = mechanism
        self._mech = MECHANISMS[mechanism]
        self._password = password
        self._client_nonce = random_nonce()
        self._bare = f"n={sasl_name(username)},r={self._client_nonce}"
        if token_auth:
            self._bare += ",tokenauth=true"
        self._auth_message = b""
        self._salted = b""
        self._state = "first"

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    def first(self) -> bytes:
        self._state = "server-first"
        return ("n,," + self._bare).encode()

    def evaluate(self, challenge: bytes) -> bytes | None:
        text = challenge.decode("utf-8", "replace")
        if self._state == "server-first":
            m = _SERVER_FIRST.fullmatch(text)
            if m is None or not m.group("nonce").startswith(self._client_nonce):
                raise SaslAuthenticationError(f"Invalid SCRAM server first message: {text}")
            iterations = int(m.group("i"))
            if iterations < self._mech.min_iterations:
                raise SaslAuthenticationError(f"Too few SCRAM iterations: {iterations}")
            self._salted = self._mech.salted_password(
                self._password, _unb64(m.group("salt")), iterations
            )
            without_proof = f"c=biws,r={m.group('nonce')}"
            self._auth_message = f"{self._bare},{text},{without_proof}".encode()
            client_key = self._mech.hmac(self._salted, b"Client Key")
            signature = self._mech.hmac(self._mech.hash(client_key), self._auth_message)
            proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
            self._state = "server-final"
            return f"{without_proof},p={_b64(proof)}".encode()
        if self._state == "server-final":
            m = _SERVER_FINAL.fullmatch(text)
            if m is None or m.group("error"):
                raise SaslAuthenticationError(f"SCRAM authentication failed: {text}")
            server_key = self._mech.hmac(self._salted, b"Server Key")
            expected = self._mech.hmac(server_key, self._auth_message)
            if not hmac.compare_digest(expected, _unb64(m.group("signature"))):
                raise SaslAuthenticationError("Invalid server signature in SCRAM server-final")
            self._state = "complete"
            return None
        raise SaslAuthenticationError(f"Unexpected SCRAM challenge in state {self._state}")
