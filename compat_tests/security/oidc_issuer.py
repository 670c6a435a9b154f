"""A small OAuth/OIDC provider on loopback for the OAUTHBEARER tests: an RSA signing key
(made with cryptography), its JSON Web Key Set at ``/jwks``, and a client-credentials token
endpoint at ``/token`` (as librdkafka's ``sasl.oauthbearer.method=oidc`` calls it: a form POST
with HTTP Basic client credentials), issuing RS256 JWTs whose subject is the client id.

:func:`unsecured_token` makes the unsigned JWS Kafka's unsecured validator accepts, and
:meth:`OidcIssuer.mint` any signed token a test wants to refuse (wrong audience, expired ...)."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

AUDIENCE = "kafka-cluster"
CLIENTS = {"alice": "alice-secret", "admin": "admin-secret"}


def unsecured_token(claims: dict[str, Any]) -> str:
    """An unsecured JWS: ``{"alg":"none"}``, the claims, an empty signature."""
    def enc(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{enc({'alg': 'none'})}.{enc(claims)}."


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwks_document(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**public, "kid": kid, "use": "sig", "alg": "RS256"}]}


class OidcIssuer:
    """The provider (see the module doc); a context manager that serves on a free port."""

    def __init__(self, lifetime_s: int = 3600) -> None:
        self.key = new_key()
        self.kid = "test-key-1"
        self.lifetime_s = lifetime_s
        self.jwks_requests = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/jwks":
                    issuer.jwks_requests += 1
                    self._send(200, jwks_document(issuer.key, issuer.kid))
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                client_id, secret = _basic(self.headers.get("Authorization", ""))
                client_id = client_id or form.get("client_id", [""])[0]
                secret = secret or form.get("client_secret", [""])[0]
                if self.path != "/token" or CLIENTS.get(client_id) != secret:
                    self._send(401, {"error": "invalid_client"})
                    return
                token = issuer.mint({"sub": client_id})
                self._send(200, {"access_token": token, "token_type": "bearer",
                                 "expires_in": issuer.lifetime_s})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    def mint(self, claims: dict[str, Any], *, key: rsa.RSAPrivateKey | None = None,
             kid: str | None = None, **defaults: Any) -> str:
        """A signed RS256 JWT: iss, aud, iat, exp filled in unless given (None drops one)."""
        now = int(time.time())
        body = {"iss": self.url, "aud": AUDIENCE, "iat": now, "exp": now + self.lifetime_s,
                **defaults, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key or self.key, algorithm="RS256",
                          headers={"kid": kid or self.kid})

    def __enter__(self) -> OidcIssuer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _basic(header: str) -> tuple[str, str]:
    if not header.lower().startswith("basic "):
        return "", ""
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return urllib.parse.unquote(user), urllib.parse.unquote(password)
