"""SASL exchanges (PLAIN, SCRAM-SHA-256/512), SCRAM credentials and JAAS config parsing."""

from __future__ import annotations

import base64
import struct

import pytest

from kafkapy.security import scram
from kafkapy.security.jaas import JaasConfigError, parse_jaas_config
from kafkapy.security.plain import PlainClient, PlainServer
from kafkapy.security.sasl import SaslAuthenticationError, SaslCredentialError
from kafkapy.security.scram import MECHANISMS, ScramClient, ScramCredential, ScramServer


def test_scram_sha256_rfc7677_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    mech = MECHANISMS["SCRAM-SHA-256"]
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    cred = ScramCredential.from_password(mech, "pencil", 4096, salt)
    server = ScramServer("SCRAM-SHA-256", lambda m, u: cred if u == "user" else None)
    monkeypatch.setattr(scram, "random_nonce", lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    final = server.evaluate(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_client_and_server_agree(mechanism: str) -> None:
    cred = ScramCredential.from_password(MECHANISMS[mechanism], "s3cret", 4096)
    assert ScramCredential.from_config(cred.to_config()) == cred

    def run(user: str, password: str) -> str:
        known = {(mechanism, "a=b,c"): cred}
        server = ScramServer(mechanism, lambda m, u: known.get((m, u)))
        client = ScramClient(mechanism, user, password)
        reply = client.evaluate(server.evaluate(client.first()))
        assert reply is not None
        assert client.evaluate(server.evaluate(reply)) is None
        assert client.complete
        return server.authorization_id

    assert run("a=b,c", "s3cret") == "a=b,c"  # saslname escaping both ways
    with pytest.raises(SaslCredentialError, match="Invalid client credentials"):
        run("a=b,c", "wrong")
    with pytest.raises(SaslCredentialError, match="Invalid user credentials"):
        run("nobody", "s3cret")


def test_scram_accepts_librdkafka_2_0_final_nonce() -> None:
    """librdkafka 2.0 (Debian's kcat) repeats its own nonce in client-final; Kafka accepts a
    nonce that ends with the combined one, and the proof is over the message as sent."""
    mech = MECHANISMS["SCRAM-SHA-512"]
    cred = ScramCredential.from_password(mech, "pw", 4096, b"salt")
    server = ScramServer("SCRAM-SHA-512", lambda m, u: cred)
    first = server.evaluate(b"n,,n=u,r=abc").decode()
    nonce = first.split(",")[0][2:]
    without_proof = f"c=biws,r=abc{nonce}"
    auth = f"n=u,r=abc,{first},{without_proof}".encode()
    salted = mech.salted_password("pw", b"salt", 4096)
    client_key = mech.hmac(salted, b"Client Key")
    signature = mech.hmac(mech.hash(client_key), auth)
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server.evaluate(f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
    assert server.complete
    with pytest.raises(SaslCredentialError, match="nonce"):
        other = ScramServer("SCRAM-SHA-512", lambda m, u: cred)
        other.evaluate(b"n,,n=u,r=abc")
        other.evaluate(b"c=biws,r=abcXYZ,p=" + base64.b64encode(proof))


def test_scram_refuses_malformed_and_weak() -> None:
    weak = ScramCredential.from_password(MECHANISMS["SCRAM-SHA-256"], "p", 1000)
    server = ScramServer("SCRAM-SHA-256", lambda m, u: weak)
    with pytest.raises(SaslCredentialError, match="less than the minimum 4096"):
        server.evaluate(b"n,,n=u,r=abc")
    with pytest.raises(SaslCredentialError, match="first message format"):
        ScramServer("SCRAM-SHA-256", lambda m, u: weak).evaluate(b"garbage")
    for bad in ("salt=AA==", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x"):
        with pytest.raises(ValueError):
            ScramCredential.from_config(bad)


def test_plain() -> None:
    users = {"alice": "alice-secret"}
    server = PlainServer(users.get)
    assert server.evaluate(PlainClient("alice", "alice-secret").first()) == b""
    assert server.authorization_id == "alice"
    for token, message in [
        (b"\0alice\0nope", "Invalid username or password"),
        (b"\0bob\0alice-secret", "Invalid username or password"),
        (b"\0alice\0", "password not specified"),
        (b"bob\0alice\0alice-secret", "authorization id that is different"),
        (b"alice", "expected 3 tokens, got 1"),
    ]:
        with pytest.raises(SaslAuthenticationError, match=message):
            PlainServer(users.get).evaluate(token)


def test_jaas_config() -> None:
    [entry] = parse_jaas_config(
        "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="admin" password="admin-secret" user_admin="admin-secret"\n'
        '  user_alice="a \\"q\\";x" debug=true;'
    )
    assert entry.flag == "required" and entry.options["username"] == "admin"
    assert entry.users() == {"admin": "admin-secret", "alice": 'a "q";x'}
    for bad in ("", "Module", "Module required a=b", "Module maybe;", "Module required a=;"):
        with pytest.raises(JaasConfigError):
            parse_jaas_config(bad)


def _api_versions_frame(version: int, software: str) -> bytearray:
    """ApiVersions in v3's layout at any version (v5: with no cluster id and node id -1):
    header v2, then the flexible body."""
    def compact(text: str) -> bytes:
        return bytes([len(text) + 1]) + text.encode()

    head = struct.pack(">hhih", 18, version, 1, 3) + b"raw" + b"\x00"
    v5 = b"\x00" + struct.pack(">i", -1) if version >= 5 else b""  # no cluster id, node -1
    return bytearray(head + compact(software) + compact("1.0") + v5 + b"\x00")


def test_sasl_stage_waits_for_a_successful_api_versions(tmp_path) -> None:
    """Kafka's SaslServerAuthenticator stays in HANDSHAKE_OR_VERSIONS after an ApiVersions
    answered with an error (a version not served, a software name Kafka's pattern refuses),
    so the client can retry; only a successful one moves on, and a second one fails."""
    import trio

    from kafkapy.protocol.api_table import served_apis
    from kafkapy.security.session import Session
    from kafkapy.server.broker import Broker
    from kafkapy.server.config.broker_config import BrokerConfig
    from kafkapy.server.network.connection import PASS
    from kafkapy.server.request_context import AuthenticationFailed
    from kafkapy.server.security.sasl_authenticator import (
        HANDSHAKE,
        VERSIONS_OR_HANDSHAKE,
        Authenticator,
    )

    login = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="a" ' \
        'password="b";'
    config = BrokerConfig.from_properties({
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "log.dirs": str(tmp_path),
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": login,
    })
    stage = Authenticator(Broker(config), config.listener_security["SASL_PLAINTEXT"],
                          Session("SASL_PLAINTEXT", "SASL_PLAINTEXT"))
    top = served_apis()["ApiVersions"].max_version
    for frame, state in [
        (_api_versions_frame(top + 1, "franz-go"), VERSIONS_OR_HANDSHAKE),  # not served
        (_api_versions_frame(3, "-bad-"), VERSIONS_OR_HANDSHAKE),  # INVALID_REQUEST
        (_api_versions_frame(top, "franz-go"), HANDSHAKE),
    ]:
        assert trio.run(stage.on_frame, frame) is PASS
        assert stage.state == state
    with pytest.raises(AuthenticationFailed, match="ApiVersions during SASL handshake"):
        trio.run(stage.on_frame, _api_versions_frame(top, "franz-go"))
