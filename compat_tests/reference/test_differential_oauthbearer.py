"""Differential session of SASL/OAUTHBEARER with Kafka's unsecured validator: Apache Kafka 4.4 and
kafkapy each get a SASL_PLAINTEXT listener configured alike (OAuthBearerLoginModule with a
required scope), and a raw client presents tokens Kafka refuses (expired, no subject, missing
scope, signed, issued in the future, not a JWS), a client message that is not RFC 7628's, an
authorization id other than the token's principal, and a valid token; it records every answer
(the error document, the SaslAuthenticate error code and message after the client's %x01,
whether the connection is closed) and the session lifetime of the valid token. These brokers
are the module's own (the shared pair of the suite has no SASL listener); differences not in
known_differences.py fail the test.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from compat_tests.rawclient import RawClient
from compat_tests.reference.conftest import SHARED_CONFIG
from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.kafka_broker import HOST, NODE_ID, ReferenceKafka, java_missing
from kafkapy.testing import BrokerProcess, free_port

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
SASL_CONFIG = {
    "sasl.enabled.mechanisms": "OAUTHBEARER",
    "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
        f'{MODULE} required unsecuredLoginStringClaim_sub="admin" '
        'unsecuredValidatorRequiredScope="kafka";',
    "connection.failed.authentication.delay.ms": "100",
}


@pytest.fixture(scope="module")
def oauth_differential(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    reason = java_missing()
    if reason:
        pytest.skip(f"the reference Apache Kafka broker cannot run: {reason}")
    kafka = ReferenceKafka(tmp_path_factory.mktemp("kafka-4.4-oauth"), SHARED_CONFIG)
    kafka_sasl = free_port()
    kafka.overrides.update({
        **SASL_CONFIG,
        "listeners": f"PLAINTEXT://{HOST}:{kafka.port},CONTROLLER://{HOST}:"
                     f"{kafka.controller_port},SASL_PLAINTEXT://{HOST}:{kafka_sasl}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{kafka.port},SASL_PLAINTEXT://{HOST}:"
                                f"{kafka_sasl}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
                                          "SASL_PLAINTEXT:SASL_PLAINTEXT",
    })
    plain, sasl = free_port(), free_port()
    kafkapy = BrokerProcess(tmp_path_factory.mktemp("kafkapy-oauth"), {
        **SHARED_CONFIG, **SASL_CONFIG, "broker.id": str(NODE_ID),
        "listeners": f"PLAINTEXT://{HOST}:{plain},SASL_PLAINTEXT://{HOST}:{sasl}",
        "inter.broker.listener.name": "PLAINTEXT",
    }, port=plain)
    try:
        kafka.start()
        kafkapy.start()
        yield Differential(Target("kafka", f"{HOST}:{kafka_sasl}", kafka.cluster_id, NODE_ID),
                           Target("kafkapy", f"{HOST}:{sasl}", None, NODE_ID))
    finally:
        kafka.stop()
        kafkapy.stop()


def _enc(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def _tokens() -> dict[str, str]:
    now = int(time.time())
    good = {"sub": "alice", "scope": ["kafka"], "iat": now, "exp": now + 600}
    none = _enc({"alg": "none"})
    return {
        "expired": f"{none}.{_enc({**good, 'iat': now - 600, 'exp': now - 60})}.",
        "no_subject": f"{none}.{_enc({k: v for k, v in good.items() if k != 'sub'})}.",
        "missing_scope": f"{none}.{_enc({**good, 'scope': 'other'})}.",
        "signed": f"{_enc({'alg': 'HS256'})}.{_enc(good)}.c2ln",
        "issued_in_future": f"{none}.{_enc({**good, 'iat': now + 300})}.",
        "no_expiry": f"{none}.{_enc({k: v for k, v in good.items() if k != 'exp'})}.",
        "not_a_jws": "abc.def",
        "valid": f"{none}.{_enc(good)}.",
    }


def _exchange(target: Target, message: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with RawClient(target.bootstrap) as raw:
        handshake = raw.request(SaslHandshakeRequest(mechanism="OAUTHBEARER"))
        out["handshake"] = [handshake.error_code.value, list(handshake.mechanisms)]
        try:
            first = raw.request(SaslAuthenticateRequest(auth_bytes=message))
        except ConnectionError:
            out["first"] = "closed without an answer"
            return out
        lifetime_ms = first.session_lifetime.total_seconds() * 1000
        out["first"] = [first.error_code.value, first.error_message,
                        first.auth_bytes.decode(errors="replace"),
                        "590-600 s" if 590_000 <= lifetime_ms <= 600_000 else lifetime_ms]
        if first.error_code.value == 0 and first.auth_bytes:
            final = raw.request(SaslAuthenticateRequest(auth_bytes=b"\x01"))
            out["after_control_a"] = [final.error_code.value, final.error_message]
        out["closed"] = raw.is_closed_by_peer(3) if first.error_code.value or first.auth_bytes \
            else False
    return out


def oauthbearer_unsecured(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, token in _tokens().items():
        out[name] = _exchange(target, f"n,,\x01auth=Bearer {token}\x01\x01".encode())
    valid = _tokens()["valid"]
    out["other_authzid"] = _exchange(target, f"n,a=bob,\x01auth=Bearer {valid}\x01\x01".encode())
    out["with_extension"] = _exchange(
        target, f"n,,\x01auth=Bearer {valid}\x01traceId=42\x01\x01".encode())
    out["bad_extension_name"] = _exchange(
        target, f"n,,\x01auth=Bearer {valid}\x01trace_id=42\x01\x01".encode())
    out["not_rfc7628"] = _exchange(target, b"n,,\x01Bearer x\x01\x01")
    out["basic_scheme"] = _exchange(target, b"n,,\x01auth=Basic abc\x01\x01")
    return out


def test_oauthbearer_unsecured(oauth_differential: Differential) -> None:
    outcome = oauth_differential.check("oauthbearer_unsecured", oauthbearer_unsecured)
    assert outcome.observations >= 40
