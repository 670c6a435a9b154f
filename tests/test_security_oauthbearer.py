"""SASL/OAUTHBEARER's sans-io parts: the RFC 7628 client message, the exchange with Kafka's error
document and %x01, Kafka's unsecured validator and its JAAS options, the JWKS-checked JWT
validator (a file:// key set, read again when it changes), and the listener settings a broker
refuses to start with, each with Kafka's message."""

from __future__ import annotations

import base64
import json
import os
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kafkapy.security.listener_security import ListenerSecurity, SecurityConfigError
from kafkapy.security.oauthbearer import (
    OAuthBearerServer,
    TokenRefused,
    parse_initial_response,
)
from kafkapy.security.oauthbearer_jwt import JwtValidator, build_jwt_validator
from kafkapy.security.oauthbearer_unsecured import UnsecuredValidator
from kafkapy.security.sasl import (
    SaslAuthenticationError,
    SaslCredentialError,
    SaslServerFailure,
)

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"


def unsecured(claims: dict) -> str:
    def enc(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{enc({'alg': 'none'})}.{enc(claims)}."


def test_client_first_message_with_authzid_and_extensions() -> None:
    parsed = parse_initial_response(b"n,a=alice,\x01auth=Bearer abc.def.\x01traceId=42\x01\x01")
    assert (parsed.token, parsed.authorization_id, parsed.extensions) == (
        "abc.def.", "alice", {"traceId": "42"})
    for bad, reason in [
        (b"n,,\x01auth=Bearer x\x01", "Invalid OAUTHBEARER client first message"),
        (b"n,,\x01traceId=1\x01\x01", "'auth' not specified"),
        (b"n,,\x01auth=Bearer a b\x01\x01", "invalid 'auth' format"),
    ]:
        with pytest.raises(SaslCredentialError, match=reason):
            parse_initial_response(bad)
    with pytest.raises(SaslServerFailure, match="Invalid scheme"):
        parse_initial_response(b"n,,\x01auth=Basic x\x01\x01")


def test_refused_token_gets_the_error_document_then_fails_on_control_a() -> None:
    server = OAuthBearerServer(UnsecuredValidator({}))
    expired = unsecured({"sub": "alice", "exp": time.time() - 10})
    challenge = server.evaluate(f"n,,\x01auth=Bearer {expired}\x01\x01".encode())
    assert challenge == b'{"status":"invalid_token"}' and not server.complete
    with pytest.raises(SaslAuthenticationError, match='^{"status":"invalid_token"}$'):
        server.evaluate(b"\x01")
    good = unsecured({"sub": "alice", "exp": time.time() + 60})
    server = OAuthBearerServer(UnsecuredValidator({}))
    with pytest.raises(SaslAuthenticationError, match="different from the token's principal"):
        server.evaluate(f"n,a=bob,\x01auth=Bearer {good}\x01\x01".encode())
    server = OAuthBearerServer(UnsecuredValidator({}))
    assert server.evaluate(f"n,a=alice,\x01auth=Bearer {good}\x01\x01".encode()) == b""
    assert server.authorization_id == "alice" and server.credential_expiry_ms is not None


def test_unsecured_validator_options() -> None:
    now = time.time()
    v = UnsecuredValidator({
        "unsecuredValidatorPrincipalClaimName": "user",
        "unsecuredValidatorScopeClaimName": "roles",
        "unsecuredValidatorRequiredScope": "read write",
        "unsecuredValidatorAllowableClockSkewMs": "5000",
    })
    for exp, iat in ((now - 2, now - 10), (now + 10, now + 3)):  # within the 5 s skew
        token = v.validate(unsecured({"user": "carol", "roles": ["read", "write"], "exp": exp,
                                      "iat": iat}))
        assert token.principal == "carol" and token.scope == {"read", "write"}
    with pytest.raises(TokenRefused) as refused:
        v.validate(unsecured({"user": "carol", "roles": "read", "exp": now + 60}))
    assert (refused.value.status, refused.value.scope) == ("insufficient_scope", "[read, write]")
    for claims in ({"sub": "x", "exp": now + 60}, {"user": "x"}, {"user": " ", "exp": now + 60},
                   {"user": "x", "exp": now + 60, "iat": now + 60}):
        with pytest.raises(TokenRefused):
            v.validate(unsecured(claims))
    with pytest.raises(TokenRefused, match="'none' for an algorithm"):
        v.validate(jwt.encode({"user": "x", "exp": now + 60}, "k" * 32, algorithm="HS256"))


def _keys_file(tmp_path, *keys: tuple[object, str]) -> str:
    doc = {"keys": []}
    for key, kid in keys:
        public = key.public_key()  # type: ignore[attr-defined]
        algo = jwt.algorithms.RSAAlgorithm if isinstance(public, rsa.RSAPublicKey) \
            else jwt.algorithms.ECAlgorithm
        doc["keys"].append({**json.loads(algo.to_jwk(public)), "kid": kid})
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(doc))
    return path.as_uri()


def _settings(url: str, **extra: str) -> dict[str, str]:
    return {"sasl.oauthbearer.jwks.endpoint.url": url,
            "sasl.oauthbearer.expected.audience": "kafka",
            "sasl.oauthbearer.expected.issuer": "https://issuer", **extra}


def _allowing(url: str) -> dict[str, str]:
    return {"KAFKA_OPTS": f"-Xmx1g -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={url}"}


def test_jwt_validator_with_a_file_key_set(tmp_path) -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    url = _keys_file(tmp_path, (rsa_key, "r1"), (ec_key, "e1"))
    validator = build_jwt_validator(_settings(url, **{
        "sasl.oauthbearer.sub.claim.name": "client_id"}), _allowing(url))
    now = int(time.time())
    claims = {"client_id": "svc", "aud": ["kafka", "x"], "iss": "https://issuer", "iat": now,
              "exp": now + 60, "scope": "a"}
    token = validator.validate(jwt.encode(claims, rsa_key, "RS256", headers={"kid": "r1"}))
    assert token.principal == "svc" and token.lifetime_ms == (now + 60) * 1000
    assert validator.validate(jwt.encode(claims, ec_key, "ES256", headers={"kid": "e1"}))
    for bad in (
        jwt.encode({**claims, "aud": "other"}, rsa_key, "RS256", headers={"kid": "r1"}),
        jwt.encode({**claims, "iss": "https://evil"}, rsa_key, "RS256", headers={"kid": "r1"}),
        jwt.encode({**claims, "exp": now - 60}, rsa_key, "RS256", headers={"kid": "r1"}),
        jwt.encode({**claims, "nbf": now + 600}, rsa_key, "RS256", headers={"kid": "r1"}),
        jwt.encode(claims, ec_key, "ES256", headers={"kid": "r1"}),  # wrong key for the kid
        jwt.encode(claims, "secret" * 6, "HS256", headers={"kid": "r1"}),
        unsecured(claims),
    ):
        with pytest.raises(TokenRefused):
            validator.validate(bad)
    # a rotated key: the file is read again when it changes
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rotated = jwt.encode(claims, new_key, "RS256", headers={"kid": "r2"})
    with pytest.raises(TokenRefused):
        validator.validate(rotated)
    _keys_file(tmp_path, (new_key, "r2"))
    path = tmp_path / "jwks.json"
    os.utime(path, (time.time() + 5, time.time() + 5))
    assert validator.validate(rotated).principal == "svc"


def test_jwt_validator_configuration_errors(tmp_path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    url = _keys_file(tmp_path, (key, "k"))
    with pytest.raises(ValueError, match="cannot be accessed due to restrictions"):
        build_jwt_validator(_settings(url), {})
    with pytest.raises(ValueError, match='requires "sasl.oauthbearer.expected.audience"'):
        build_jwt_validator({"sasl.oauthbearer.jwks.endpoint.url": url}, _allowing(url))
    lenient = build_jwt_validator({
        "sasl.oauthbearer.jwks.endpoint.url": url,
        "sasl.oauthbearer.allow.unverified.audience": "true",
        "sasl.oauthbearer.allow.unverified.issuer": "true"}, _allowing(url))
    assert isinstance(lenient, JwtValidator) and lenient.audience == []
    with pytest.raises(ValueError, match="invalid protocol"):
        build_jwt_validator(_settings("ftp://x/jwks"), _allowing("ftp://x/jwks"))
    with pytest.raises(ValueError, match="jwks.endpoint.url\" to be configured"):
        build_jwt_validator({}, {})


def test_listener_settings_for_oauthbearer() -> None:
    base = {"sasl.enabled.mechanisms": "SCRAM-SHA-256,OAUTHBEARER"}
    with pytest.raises(SecurityConfigError, match="JAAS configuration"):
        ListenerSecurity.build(base, "SASL_PLAINTEXT", "SASL_PLAINTEXT")
    jaas = {"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
            f'{MODULE} required unsecuredValidatorRequiredScope="x";'}
    security = ListenerSecurity.build({**base, **jaas}, "SASL_PLAINTEXT", "SASL_PLAINTEXT")
    assert isinstance(security.oauth_validator, UnsecuredValidator)
    assert security.oauth_validator.required_scope == ["x"]
    with pytest.raises(SecurityConfigError, match="kafkapy serves"):
        ListenerSecurity.build({**base, **jaas, "listener.name.sasl_plaintext.oauthbearer.sasl."
                                "server.callback.handler.class": "com.example.Mine"},
                               "SASL_PLAINTEXT", "SASL_PLAINTEXT")
    with pytest.raises(SecurityConfigError, match="jwks.endpoint.url"):
        ListenerSecurity.build({**base, **jaas, "listener.name.sasl_plaintext.oauthbearer.sasl."
                                "server.callback.handler.class": HANDLER},
                               "SASL_PLAINTEXT", "SASL_PLAINTEXT")
