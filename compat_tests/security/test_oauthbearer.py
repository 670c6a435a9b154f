"""SASL/OAUTHBEARER end to end, against one broker process and a small OIDC provider on loopback
(oidc_issuer.py), configured as a Kafka 4.4 operator configures it:

* listener UNSECURED (SASL_PLAINTEXT): Kafka's unsecured-token validator, the JAAS line of
  franz-go's CI (``OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";``);
* listener JWT (SASL_SSL): OAuthBearerValidatorCallbackHandler, the provider's JWKS over HTTP
  (allowed by ``-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls`` in KAFKA_OPTS), expected
  audience and issuer.

confluent-kafka authenticates with unsecured tokens (``sasl.oauthbearer.config``) and with
``sasl.oauthbearer.method=oidc`` against the token endpoint; tokens Kafka refuses (wrong
audience, issuer, expired, not yet valid, badly signed, unsigned) are refused with Kafka's
answers; a session ends with the token (KIP-368); ACLs apply to an OAUTHBEARER principal.
"""

from __future__ import annotations

import ssl
import time
import uuid

import pytest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from compat_tests.rawclient import RawClient, encode_request
from compat_tests.security.helpers import first_error, produce_and_consume
from compat_tests.security.oidc_issuer import (
    AUDIENCE,
    CLIENTS,
    OidcIssuer,
    new_key,
    unsecured_token,
)
from kafkapy.testing import BrokerProcess, free_port

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
SASL_FAILED = 58


@pytest.fixture(scope="module")
def issuer():
    with OidcIssuer() as provider:
        yield provider


@pytest.fixture(scope="module")
def broker(tmp_path_factory, pki, issuer):
    plain, unsecured, secured = free_port(), free_port(), free_port()
    config = {
        "listeners": f"PLAINTEXT://127.0.0.1:{plain},UNSECURED://127.0.0.1:{unsecured},"
                     f"JWT://127.0.0.1:{secured}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,UNSECURED:SASL_PLAINTEXT,"
                                          "JWT:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.unsecured.oauthbearer.sasl.jaas.config":
            f'{MODULE} required unsecuredLoginStringClaim_sub="admin";',
        "listener.name.jwt.oauthbearer.sasl.jaas.config": f"{MODULE} required;",
        "listener.name.jwt.oauthbearer.sasl.server.callback.handler.class": HANDLER,
        "listener.name.jwt.sasl.oauthbearer.jwks.endpoint.url": issuer.jwks_url,
        "listener.name.jwt.sasl.oauthbearer.expected.audience": AUDIENCE,
        "listener.name.jwt.sasl.oauthbearer.expected.issuer": issuer.url,
        "listener.name.jwt.sasl.oauthbearer.clock.skew.seconds": "5",
        "listener.name.jwt.ssl.keystore.location": pki.server_keystore,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        "group.initial.rebalance.delay.ms": "0",
        "connection.failed.authentication.delay.ms": "100",
    }
    env = {"KAFKA_OPTS": f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={issuer.jwks_url}"}
    proc = BrokerProcess(tmp_path_factory.mktemp("oauth-broker"), config, port=plain, env=env)
    proc.start()
    proc.unsecured = f"127.0.0.1:{unsecured}"
    proc.secured = f"127.0.0.1:{secured}"
    yield proc
    proc.stop()


def unsecured_conf(broker, principal: str = "admin", **extra: str) -> dict:
    return {
        "bootstrap.servers": broker.unsecured,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": f"principal={principal}",
        **extra,
    }


def oidc_conf(broker, issuer, pki, client: str = "alice") -> dict:
    return {
        "bootstrap.servers": broker.secured,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": pki.ca,
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.client.id": client,
        "sasl.oauthbearer.client.secret": CLIENTS[client],
        "sasl.oauthbearer.token.endpoint.url": issuer.token_url,
    }


def client_first(token: str, authzid: str = "", **extensions: str) -> bytes:
    kv = "".join(f"{k}={v}\x01" for k, v in extensions.items())
    head = f"n,a={authzid}," if authzid else "n,,"
    return f"{head}\x01auth=Bearer {token}\x01{kv}\x01".encode()


def secured_raw(broker, pki) -> RawClient:
    """A raw client on the JWT listener (TLS)."""
    raw = RawClient(broker.secured)
    ctx = ssl.create_default_context(cafile=pki.ca)
    raw.sock = ctx.wrap_socket(raw.sock, server_hostname="127.0.0.1")
    return raw


def authenticate(raw: RawClient, token: str, **extensions: str):
    """SaslHandshake v1 + SaslAuthenticate v2 with ``token``: (first answer, the answer to the
    client's %x01 after an error document, or None)."""
    assert raw.request(SaslHandshakeRequest(mechanism="OAUTHBEARER")).error_code == 0
    first = raw.request(SaslAuthenticateRequest(auth_bytes=client_first(token, **extensions)))
    if first.error_code or not first.auth_bytes:
        return first, None
    return first, raw.request(SaslAuthenticateRequest(auth_bytes=b"\x01"))


def _metadata_frame() -> bytes:
    return encode_request(MetadataRequest(
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False))


def test_unsecured_tokens_with_confluent_kafka(broker) -> None:
    topic = f"oauth-{uuid.uuid4().hex[:8]}"
    got = produce_and_consume(unsecured_conf(broker), topic, [b"a", b"b"])
    assert got == [b"a", b"b"]


def test_oidc_client_credentials_with_confluent_kafka(broker, issuer, pki) -> None:
    admin_topic = f"oidc-{uuid.uuid4().hex[:8]}"
    produce_and_consume(unsecured_conf(broker), admin_topic, [b"x"])  # create it as admin
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    # alice authenticates through the provider, but holds no ACL yet: not authorized
    err = first_error({**oidc_conf(broker, issuer, pki), "topic.metadata.refresh.interval.ms": 500})
    assert err is None
    admin = AdminClient(unsecured_conf(broker))
    bindings = [
        AclBinding(rt, name, ResourcePatternType.LITERAL, "User:alice", "*", op,
                   AclPermissionType.ALLOW)
        for rt, name, op in (
            (ResourceType.TOPIC, admin_topic, AclOperation.ALL),
            (ResourceType.GROUP, f"g-{admin_topic}", AclOperation.ALL),
        )
    ]
    from confluent_kafka import Producer

    denied = Producer({**oidc_conf(broker, issuer, pki), "message.timeout.ms": 3000})
    results: list = []
    denied.produce(admin_topic, b"no", on_delivery=lambda e, m: results.append(e))
    denied.flush(10)
    assert results and results[0] is not None and "authoriz" in results[0].str().lower()
    for f in admin.create_acls(bindings).values():
        assert f.result(15) is None
    # now alice's produce is acknowledged, and her group reads the topic from the start
    got = produce_and_consume(oidc_conf(broker, issuer, pki), admin_topic, [b"y"])
    assert got == [b"x"]


def _refused(raw: RawClient, token: str) -> tuple[str, str]:
    with raw:
        first, final = authenticate(raw, token)
        assert raw.is_closed_by_peer(5)
    assert first.error_code == 0 and final is not None
    assert final.error_code == SASL_FAILED
    return first.auth_bytes.decode(), final.error_message


@pytest.mark.parametrize(
    "case",
    ["audience", "issuer", "expired", "not_yet_valid", "bad_signature", "unknown_kid", "unsigned",
     "no_iat"],
)
def test_tokens_kafka_refuses_are_refused(broker, issuer, pki, case) -> None:
    now = int(time.time())
    token = {
        "audience": lambda: issuer.mint({"sub": "alice", "aud": "another-cluster"}),
        "issuer": lambda: issuer.mint({"sub": "alice", "iss": "https://elsewhere.example"}),
        "expired": lambda: issuer.mint({"sub": "alice", "iat": now - 600, "exp": now - 60}),
        "not_yet_valid": lambda: issuer.mint({"sub": "alice", "nbf": now + 600}),
        "bad_signature": lambda: issuer.mint({"sub": "alice"}, key=new_key()),
        "unknown_kid": lambda: issuer.mint({"sub": "alice"}, key=new_key(), kid="rotated"),
        "unsigned": lambda: unsecured_token({"sub": "alice", "exp": now + 600, "iat": now}),
        "no_iat": lambda: issuer.mint({"sub": "alice", "iat": None}),
    }[case]()
    document, message = _refused(secured_raw(broker, pki), token)
    assert document == '{"status":"invalid_token"}'
    assert message == '{"status":"invalid_token"}'


def test_a_valid_jwt_bounds_the_session(broker, issuer, pki) -> None:
    token = issuer.mint({"sub": "alice", "exp": int(time.time()) + 120})
    with secured_raw(broker, pki) as raw:
        first, final = authenticate(raw, token, traceId="abc")
        assert first.error_code == 0 and first.auth_bytes == b"" and final is None
        assert 110_000 <= first.session_lifetime.total_seconds() * 1000 <= 120_000


def test_unsecured_token_errors_and_franz_go_s_expired_token(broker) -> None:
    now = int(time.time())
    expired = unsecured_token({"sub": "a", "exp": now - 60})
    document, message = _refused(RawClient(broker.unsecured), expired)
    assert document == message == '{"status":"invalid_token"}'
    document, _ = _refused(RawClient(broker.unsecured), unsecured_token({"exp": now + 60}))
    assert document == '{"status":"invalid_token"}'
    document, _ = _refused(RawClient(broker.unsecured), "not-a-token")
    assert document == '{"status":"invalid_token"}'
    with RawClient(broker.unsecured) as raw:  # not an RFC 7628 client first message
        assert raw.request(SaslHandshakeRequest(mechanism="OAUTHBEARER")).error_code == 0
        first = raw.request(SaslAuthenticateRequest(auth_bytes=b"n,,\x01Bearer x\x01\x01"))
        assert raw.is_closed_by_peer(5)
    assert first.error_code == SASL_FAILED
    assert first.error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism OAUTHBEARER"
    )


def test_a_token_expiring_mid_session_ends_the_session(broker) -> None:
    """KIP-368: the session lasts until the token's exp; re-authenticating with a fresh token
    keeps the connection, with an expired one fails it, and any request after expiry closes it."""
    now = time.time()

    def token(life_s: float) -> str:
        return unsecured_token({"sub": "admin", "iat": int(now), "exp": now + life_s})

    renewed, lapsed, refused = (RawClient(broker.unsecured) for _ in range(3))
    with renewed, lapsed, refused:
        for raw in (renewed, lapsed, refused):
            first, _ = authenticate(raw, token(2.5))
            assert first.error_code == 0
            assert 1_000 < first.session_lifetime.total_seconds() * 1000 <= 2_500
        time.sleep(1.1)
        first, _ = authenticate(renewed, token(60))  # in place, same principal
        assert first.error_code == 0 and first.session_lifetime.total_seconds() > 50
        time.sleep(max(0.0, now + 2.7 - time.time()))
        doc, final = authenticate(refused, token(-1))
        assert doc.auth_bytes == b'{"status":"invalid_token"}'
        assert final is not None and final.error_code == SASL_FAILED
        assert refused.is_closed_by_peer(5)
        assert len(renewed.request(MetadataRequest(
            topics=None, allow_auto_topic_creation=False,
            include_topic_authorized_operations=False)).brokers) == 1
        lapsed.send_frame(_metadata_frame())
        assert lapsed.is_closed_by_peer(5)


def test_librdkafka_renews_a_short_token_and_reauthenticates(broker) -> None:
    """An unsecured token of 5 s: librdkafka refreshes it and re-authenticates on its open
    connections (KIP-368) before each session ends; the producer never sees an error and no
    connection of it is closed for an expired session."""
    from confluent_kafka import Producer

    errors: list[str] = []
    expired_before = broker.log_text().count("SASL session expired")
    producer = Producer({
        **unsecured_conf(broker, "admin", **{"sasl.oauthbearer.config":
                                             "principal=admin lifeSeconds=5"}),
        "error_cb": lambda e: errors.append(e.str()),
    })
    topic = f"oauth-renew-{uuid.uuid4().hex[:8]}"
    deadline, sent = time.monotonic() + 8, 0
    while time.monotonic() < deadline:
        producer.produce(topic, b"x")
        sent += 1
        producer.poll(0.2)
    assert producer.flush(15) == 0
    assert errors == [] and sent > 20
    assert broker.log_text().count("SASL session expired") == expired_before


def test_kafka_python_with_a_token_provider(broker, issuer, pki) -> None:
    """kafka-python's OAUTHBEARER (an AbstractTokenProvider, with a KIP-342 extension): a JWT
    from the provider on the SASL_SSL listener, an unsecured token on the SASL_PLAINTEXT one."""
    from kafka.net.sasl.oauth import AbstractTokenProvider

    from compat_tests.security.helpers import kafka_python_round_trip

    class Provider(AbstractTokenProvider):
        def __init__(self, token: str) -> None:
            self._token = token

        def token(self) -> str:
            return self._token

        def extensions(self) -> dict[str, str]:
            return {"traceId": "kafka-python"}

    now = int(time.time())
    for common in (
        {"bootstrap_servers": broker.secured, "security_protocol": "SASL_SSL",
         "ssl_cafile": pki.ca,
         "sasl_oauth_token_provider": Provider(issuer.mint({"sub": "admin"}))},
        {"bootstrap_servers": broker.unsecured, "security_protocol": "SASL_PLAINTEXT",
         "sasl_oauth_token_provider": Provider(
             unsecured_token({"sub": "admin", "iat": now, "exp": now + 600}))},
    ):
        topic = f"kp-oauth-{uuid.uuid4().hex[:8]}"
        got = kafka_python_round_trip({**common, "sasl_mechanism": "OAUTHBEARER"}, topic,
                                      [b"1", b"2"])
        assert got == [b"1", b"2"]


def test_java_client_unsecured_and_oidc(broker, issuer, pki, tmp_path) -> None:
    """Kafka 4.4's Java producer: the unsecured login (OAuthBearerLoginModule with
    unsecuredLoginStringClaim_sub) on SASL_PLAINTEXT, and OAuthBearerLoginCallbackHandler's
    client credentials from the provider's token endpoint on SASL_SSL."""
    import subprocess

    from compat_tests.suites import jvm

    jvm.require_kafka_jvm()
    unsecured = tmp_path / "unsecured.properties"
    unsecured.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
        f'sasl.jaas.config={MODULE} required unsecuredLoginStringClaim_sub="admin";\n')
    oidc = tmp_path / "oidc.properties"
    oidc.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
        f"ssl.truststore.type=PEM\nssl.truststore.location={pki.ca}\n"
        "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
        "OAuthBearerLoginCallbackHandler\n"
        f"sasl.oauthbearer.token.endpoint.url={issuer.token_url}\n"
        f"sasl.jaas.config={MODULE} required clientId=\"admin\" clientSecret=\"admin-secret\";\n")
    for bootstrap, config in ((broker.unsecured, unsecured), (broker.secured, oidc)):
        command = jvm.java_command("org.apache.kafka.tools.ProducerPerformance")
        command.insert(1, f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={issuer.token_url}")
        produced = subprocess.run(
            [*command, "--topic", f"java-oauth-{uuid.uuid4().hex[:6]}", "--num-records", "20",
             "--record-size", "10", "--throughput", "-1", "--bootstrap-server", bootstrap,
             "--command-property", "acks=all", "--command-config", str(config)],
            capture_output=True, text=True, timeout=120)
        assert produced.returncode == 0, produced.stderr[-2000:]
        assert "20 records sent" in produced.stdout


def test_a_rotated_signing_key_is_fetched_from_the_jwks(broker, issuer, pki) -> None:
    """The provider rotates its key: a token naming the new key id is refused while the broker's
    key set lacks it, and that asks for an early refresh of the set (Kafka's resolver does the
    same); once fetched, the new key's tokens are accepted. (Last in the module: it rotates.)"""
    fetched = issuer.jwks_requests
    issuer.key, issuer.kid = new_key(), "test-key-2"
    token = issuer.mint({"sub": "alice"})
    with secured_raw(broker, pki) as raw:
        first, _ = authenticate(raw, token)
        assert first.auth_bytes == b'{"status":"invalid_token"}'
    deadline = time.monotonic() + 10
    while issuer.jwks_requests == fetched and time.monotonic() < deadline:
        time.sleep(0.05)
    assert issuer.jwks_requests > fetched
    time.sleep(0.3)
    with secured_raw(broker, pki) as raw:
        first, final = authenticate(raw, token)
        assert first.error_code == 0 and first.auth_bytes == b"" and final is None
