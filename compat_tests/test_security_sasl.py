"""SASL on real listeners: PLAIN and SCRAM-SHA-256/512 with confluent-kafka (librdkafka),
kafka-python and kafka-configs; wrong passwords, unknown users, a mechanism the listener does not
enable, requests that skip authentication, the failed-authentication delay and re-authentication
(KIP-368).

One broker serves two SASL listeners:
* SASL_PLAINTEXT: PLAIN (users admin, bob), SCRAM-SHA-256, SCRAM-SHA-512 (whose sessions last 2 s:
  ``listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms``);
* SASL_SSL: SCRAM-SHA-512 only.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v0.request import SaslHandshakeRequest as SaslHandshakeV0
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from compat_tests.rawclient import RawClient, encode_request
from compat_tests.secure_setup import (
    ADMIN,
    ADMIN_PASSWORD,
    first_error,
    kafka_python_round_trip,
    kcat_round_trip,
    plain_jaas,
    produce_and_consume,
    sasl_conf,
    scram_jaas,
)
from kafkapy.security.sasl import client_exchange
from kafkapy.security.scram import ScramClient
from kafkapy.testing import BrokerProcess, free_port
from kafkapy.testing_tls import make_pki

ROOT = Path(__file__).resolve().parents[1]
FAILED_AUTH_DELAY_MS = 400
REAUTH_MS = 2000


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory, pki):
    port, ssl_port = free_port(), free_port()
    proc = BrokerProcess(
        tmp_path_factory.mktemp("sasl-broker"),
        {
            "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{ssl_port}",
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas(
                {ADMIN: ADMIN_PASSWORD, "bob": "bob-secret"}
            ),
            "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms": str(REAUTH_MS),
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.ssl.keystore.location": pki.server_keystore,
            "connection.failed.authentication.delay.ms": str(FAILED_AUTH_DELAY_MS),
            "group.initial.rebalance.delay.ms": "0",
        },
        port=port,
    )
    proc.start()
    proc.ssl_bootstrap = f"127.0.0.1:{ssl_port}"
    yield proc
    assert proc.stop() == 0, proc.log_text()[-3000:]


def admin_client(broker):
    from confluent_kafka.admin import AdminClient

    return AdminClient(sasl_conf(broker.bootstrap, "PLAIN", ADMIN, ADMIN_PASSWORD))


@pytest.fixture(scope="module")
def carol(broker):
    """User carol with SCRAM-SHA-256 (8192 iterations) and SCRAM-SHA-512 credentials."""
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = admin_client(broker)
    upserts = [
        UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"carol-secret"
        ),
        UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"carol-secret"
        ),
    ]
    for f in admin.alter_user_scram_credentials(upserts).values():
        assert f.result(15) is None
    return "carol", "carol-secret"


def test_plain_produce_and_consume(broker) -> None:
    conf = sasl_conf(broker.bootstrap, "PLAIN", "bob", "bob-secret")
    values = [b"plain-%d" % i for i in range(20)]
    assert produce_and_consume(conf, "sasl-plain", values) == values


def test_scram_credentials_admin_apis(broker, carol) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    admin = admin_client(broker)
    described = admin.describe_user_scram_credentials(["carol"])["carol"].result(15)
    infos = {(i.mechanism, i.iterations) for i in described.scram_credential_infos}
    assert infos == {(ScramMechanism.SCRAM_SHA_256, 8192), (ScramMechanism.SCRAM_SHA_512, 4096)}
    everyone = admin.describe_user_scram_credentials().result(15)
    assert "carol" in everyone and "bob" not in everyone  # PLAIN users are not SCRAM users
    with pytest.raises(KafkaException, match="does not exist"):
        admin.describe_user_scram_credentials(["nobody"])["nobody"].result(15)
    weak = UserScramCredentialUpsertion(
        "weak", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"x"
    )
    with pytest.raises(KafkaException, match="Too few iterations"):
        admin.alter_user_scram_credentials([weak])["weak"].result(15)
    missing = UserScramCredentialDeletion("nobody", ScramMechanism.SCRAM_SHA_256)
    with pytest.raises(KafkaException, match="delete a user credential that does not exist"):
        admin.alter_user_scram_credentials([missing])["nobody"].result(15)


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [("plain", "SCRAM-SHA-256"), ("plain", "SCRAM-SHA-512"), ("ssl", "SCRAM-SHA-512")],
)
def test_scram_produce_and_consume(broker, carol, pki, listener, mechanism) -> None:
    extra = {"ssl.ca.location": pki.ca} if listener == "ssl" else {}
    bootstrap = broker.ssl_bootstrap if listener == "ssl" else broker.bootstrap
    conf = sasl_conf(bootstrap, mechanism, *carol, **extra)
    topic = f"scram-{listener}-{mechanism.lower()}"
    values = [b"%s-%d" % (topic.encode(), i) for i in range(10)]
    assert produce_and_consume(conf, topic, values) == values


@pytest.mark.parametrize(
    ("mechanism", "user", "password", "message"),
    [
        ("PLAIN", "bob", "wrong", "Authentication failed: Invalid username or password"),
        ("PLAIN", "mallory", "bob-secret", "Authentication failed: Invalid username or password"),
        (
            "SCRAM-SHA-256",
            "carol",
            "wrong",
            "invalid credentials with SASL mechanism SCRAM-SHA-256",
        ),
        ("SCRAM-SHA-512", "mallory", "x", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
    ],
)
def test_wrong_credentials_are_refused(broker, carol, mechanism, user, password, message):
    error = first_error(sasl_conf(broker.bootstrap, mechanism, user, password))
    assert error is not None and "SASL authentication error" in error and message in error


def test_mechanism_not_enabled_on_the_listener(broker, pki) -> None:
    conf = sasl_conf(
        broker.ssl_bootstrap, "PLAIN", "bob", "bob-secret", **{"ssl.ca.location": pki.ca}
    )
    error = first_error(conf)
    assert error is not None and "Unsupported SASL mechanism" in error
    # the handshake's answer lists what the listener enables, then the connection is closed
    with _tls_raw(broker.ssl_bootstrap, pki.ca) as raw:
        reply = raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert reply.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
        assert list(reply.mechanisms) == ["SCRAM-SHA-512"]
        assert raw.is_closed_by_peer(5)


@pytest.mark.parametrize(
    ("listener", "mechanism"),
    [("plain", "PLAIN"), ("plain", "SCRAM-SHA-256"), ("ssl", "SCRAM-SHA-512")],
)
def test_kafka_python_sasl(broker, carol, pki, listener, mechanism) -> None:
    user, password = ("bob", "bob-secret") if mechanism == "PLAIN" else carol
    common = dict(
        bootstrap_servers=broker.ssl_bootstrap if listener == "ssl" else broker.bootstrap,
        security_protocol="SASL_SSL" if listener == "ssl" else "SASL_PLAINTEXT",
        sasl_mechanism=mechanism,
        sasl_plain_username=user,
        sasl_plain_password=password,
    )
    if listener == "ssl":
        common["ssl_cafile"] = pki.ca
    values = [b"v%d" % i for i in range(5)]
    topic = f"kp-{listener}-{mechanism.lower()}"
    assert kafka_python_round_trip(common, topic, values) == values


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
def test_kcat_scram_over_sasl_ssl(broker, carol, pki) -> None:
    """Debian's kcat (librdkafka 2.0) sends a SCRAM final nonce Kafka must tolerate."""
    config = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": carol[0],
        "sasl.password": carol[1],
        "ssl.ca.location": pki.ca,
    }
    assert kcat_round_trip(broker.ssl_bootstrap, config, "kcat-scram") == [b"one", b"two"]


def test_requests_before_authentication_get_nothing(broker) -> None:
    for first in (
        MetadataRequest(
            topics=None, allow_auto_topic_creation=True, include_topic_authorized_operations=False
        ),
    ):
        with RawClient(broker.bootstrap) as raw:  # no handshake at all
            raw.send_frame(encode_request(first))
            assert raw.is_closed_by_peer(5)
    with RawClient(broker.bootstrap) as raw:  # ApiVersions is allowed, and advertises SASL
        versions = raw.request(
            ApiVersionsRequest(client_software_name="raw", client_software_version="1")
        )
        assert {17, 36} <= {k.api_key for k in versions.api_keys}
        raw.send_frame(encode_request(first))  # but nothing else before authentication
        assert raw.is_closed_by_peer(5)
    with RawClient(broker.bootstrap) as raw:  # bytes that are not a request
        raw.send_frame(b"\x00\x01garbage")
        assert raw.is_closed_by_peer(5)


def _authenticate_v1(raw: RawClient, client) -> int:
    """SASL through SaslHandshake v1 and SaslAuthenticate v2; the session lifetime in ms."""
    assert raw.request(SaslHandshakeRequest(mechanism=client.mechanism)).error_code == 0
    exchange = client_exchange(client)
    token = next(exchange)
    while True:
        reply = raw.request(SaslAuthenticateRequest(auth_bytes=token))
        assert reply.error_code == 0, reply.error_message
        try:
            token = exchange.send(reply.auth_bytes)
        except StopIteration:
            return int(reply.session_lifetime.total_seconds() * 1000)


def _metadata(raw: RawClient):
    return raw.request(
        MetadataRequest(
            topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
        )
    )


def test_raw_plain_v0_and_v1_exchanges(broker) -> None:
    from kafkapy.security.plain import PlainClient

    with RawClient(broker.bootstrap) as raw:  # v1: SaslAuthenticate requests
        assert _authenticate_v1(raw, PlainClient("bob", "bob-secret")) == 0
        assert len(_metadata(raw).brokers) == 1
        # after authentication, SASL requests are answered ILLEGAL_SASL_STATE (34)
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 34
        again = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0bob\0bob-secret"))
        assert again.error_code == 34
    with RawClient(broker.bootstrap) as raw:  # v0: raw size-prefixed tokens
        assert raw.request(SaslHandshakeV0(mechanism="PLAIN")).error_code == 0
        raw.send_frame(b"\0bob\0bob-secret")
        assert raw.recv_frame() == b""
        assert len(_metadata(raw).brokers) == 1


def test_other_requests_during_the_exchange_get_illegal_sasl_state(broker) -> None:
    """Where a SaslAuthenticate is due, another request gets its own error response with
    ILLEGAL_SASL_STATE (34), as Kafka answers, and the connection is closed."""
    import uuid

    from kio.schema.metadata.v12.request import MetadataRequestTopic

    with RawClient(broker.bootstrap) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
        reply = raw.request(
            MetadataRequest(
                topics=(MetadataRequestTopic(name="secret", topic_id=uuid.UUID(int=0)),),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )
        assert [(t.name, t.error_code) for t in reply.topics] == [("secret", 34)]
        assert reply.brokers == ()
        assert raw.is_closed_by_peer(5)


def test_failed_authentication_is_answered_then_closed_after_the_delay(broker) -> None:
    with RawClient(broker.bootstrap) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
        reply = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0bob\0nope"))
        answered = time.monotonic()
        assert reply.error_code == 58  # SASL_AUTHENTICATION_FAILED
        assert reply.error_message == "Authentication failed: Invalid username or password"
        assert raw.is_closed_by_peer(10)
        assert time.monotonic() - answered >= FAILED_AUTH_DELAY_MS / 1000 * 0.9


def test_reauthentication_and_session_expiry(broker, carol) -> None:
    from confluent_kafka import Producer

    def scram() -> ScramClient:
        return ScramClient("SCRAM-SHA-512", *carol)

    expired, renewed = RawClient(broker.bootstrap), RawClient(broker.bootstrap)
    with expired, renewed:
        assert _authenticate_v1(expired, scram()) == REAUTH_MS
        assert _authenticate_v1(renewed, scram()) == REAUTH_MS
        time.sleep(1.2)
        assert _authenticate_v1(renewed, scram()) == REAUTH_MS  # KIP-368: same connection
        time.sleep(1.0)  # the first sessions are now over
        assert len(_metadata(renewed).brokers) == 1
        expired.send_frame(
            encode_request(
                MetadataRequest(
                    topics=None,
                    allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False,
                )
            )
        )
        assert expired.is_closed_by_peer(5)
    # librdkafka re-authenticates by itself: a producer outliving two sessions sees no error
    errors: list[str] = []
    producer = Producer(
        {
            **sasl_conf(broker.bootstrap, "SCRAM-SHA-512", *carol),
            "error_cb": lambda e: errors.append(e.str()),
        }
    )
    deadline = time.monotonic() + 2.5 * REAUTH_MS / 1000
    sent = 0
    while time.monotonic() < deadline:
        producer.produce("reauth", b"x")
        sent += 1
        producer.poll(0.2)
    assert producer.flush(15) == 0
    assert errors == [] and sent > 10
    # and its connections were never cut for an expired session (only the raw one above was)
    assert broker.log_text().count("SASL session expired") == 1


def _tool(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_kafka_configs_manages_scram_users(broker, tmp_path) -> None:
    admin_props = tmp_path / "admin.properties"
    admin_props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={plain_jaas({}, (ADMIN, ADMIN_PASSWORD))}\n"
    )
    base = [
        "--bootstrap-server",
        broker.bootstrap,
        "--command-config",
        str(admin_props),
        "--entity-type",
        "users",
        "--entity-name",
        "dave",
    ]
    out = _tool(
        "configs",
        *base,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=dave-secret],SCRAM-SHA-512=[password=dave-secret]",
    ).stdout
    assert out.strip() == "Completed updating config for user dave."
    out = _tool("configs", *base, "--describe").stdout.strip()
    assert out == (
        "SCRAM credential configs for user-principal 'dave' are "
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096"
    )
    assert first_error(sasl_conf(broker.bootstrap, "SCRAM-SHA-256", "dave", "dave-secret")) is None
    # a removed credential stops working at once
    _tool("configs", *base, "--alter", "--delete-config", "SCRAM-SHA-256")
    error = first_error(sasl_conf(broker.bootstrap, "SCRAM-SHA-256", "dave", "dave-secret"))
    assert error is not None and "invalid credentials" in error
    weak = _tool(
        "configs",
        *base,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=10,password=x]",
        check=False,
    )
    assert weak.returncode != 0
    assert "Iterations 10 is less than the minimum 4096" in weak.stderr


def _tls_raw(bootstrap: str, cafile: str) -> RawClient:
    raw = RawClient(bootstrap)
    ctx = ssl.create_default_context(cafile=cafile)
    raw.sock = ctx.wrap_socket(raw.sock, server_hostname="127.0.0.1")
    return raw


def test_plaintext_bytes_on_a_tls_listener_get_no_kafka_answer(broker) -> None:
    """The SASL_SSL listener refuses plain bytes: a plaintext client gets no Kafka answer."""
    host, port = broker.ssl_bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(struct.pack(">i", 10) + b"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00")
        s.settimeout(5)
        try:
            data = s.recv(64)
        except ConnectionResetError:
            data = b""
        assert not data.startswith(b"\x00\x00")  # nothing that looks like a Kafka response


def test_tools_speak_sasl_over_tls(broker, carol, pki, tmp_path) -> None:
    """Kafka's tools take the Java client's security properties: the wire-level ones
    (broker-api-versions, topics --describe) authenticate over TLS as librdkafka's do."""
    props = tmp_path / "carol.properties"
    props.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        f"sasl.jaas.config={scram_jaas(*carol)}\n"
        f"ssl.truststore.type=PEM\nssl.truststore.location={pki.ca}\n"
    )
    common = ["--bootstrap-server", broker.ssl_bootstrap, "--command-config", str(props)]
    out = _tool("broker-api-versions", *common).stdout
    assert "SaslHandshake(17): 0 to 1 [usable: 1]" in out
    _tool("topics", *common, "--create", "--topic", "tool-secured", "--partitions", "2")
    described = _tool("topics", *common, "--describe", "--topic", "tool-secured").stdout
    assert "PartitionCount: 2" in described
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(props.read_text().replace(carol[1], "nope"))
    failed = _tool(
        "broker-api-versions",
        "--bootstrap-server",
        broker.ssl_bootstrap,
        "--command-config",
        str(wrong),
        check=False,
    )
    assert failed.returncode != 0 and "SASL authentication failed" in failed.stderr


def _java_classpath() -> str | None:
    """Kafka 3.9's Java client and tools (the shared JVM directory) with PySpark's jars."""
    if shutil.which("java") is None:
        return None
    for base in (ROOT.parent / "shared" / "jvm", Path("/work/shared/jvm")):
        if (base / "kafka" / "kafka-clients-3.9.0.jar").exists():
            try:
                import pyspark
            except ImportError:
                return None
            return f"{base / 'kafka'}/*:{Path(pyspark.__file__).parent / 'jars'}/*"
    return None


JAVA_CP = _java_classpath()


@pytest.mark.skipif(JAVA_CP is None, reason="Kafka's Java client jars or java are not here")
def test_java_client_scram_with_reauthentication(broker, carol, pki, tmp_path) -> None:
    """Kafka's own Java client: SCRAM-SHA-512 with 2 s sessions on SASL_PLAINTEXT (it
    re-authenticates on its connections, KIP-368), then reads back over SASL_SSL with a PEM
    trust store."""
    jaas = scram_jaas(*carol)
    plain = tmp_path / "plain.properties"
    plain.write_text(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={jaas}\n"
    )
    tls = tmp_path / "tls.properties"
    tls.write_text(
        f"security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={jaas}\n"
        f"ssl.truststore.type=PEM\nssl.truststore.location={pki.ca}\n"
    )
    expired_before = broker.log_text().count("SASL session expired")
    produced = subprocess.run(
        [
            "java",
            "-cp",
            JAVA_CP,
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic",
            "java",
            "--num-records",
            "60",
            "--record-size",
            "100",
            "--throughput",
            "12",
            "--producer-props",
            f"bootstrap.servers={broker.bootstrap}",
            "acks=all",
            "--producer.config",
            str(plain),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert produced.returncode == 0, produced.stderr[-2000:]
    assert "60 records sent" in produced.stdout
    consumed = subprocess.run(
        [
            "java",
            "-cp",
            JAVA_CP,
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            broker.ssl_bootstrap,
            "--consumer.config",
            str(tls),
            "--topic",
            "java",
            "--from-beginning",
            "--max-messages",
            "60",
            "--timeout-ms",
            "30000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert consumed.returncode == 0, consumed.stderr[-2000:]
    assert len(consumed.stdout.split()) == 60
    # 5 s of producing over 2 s sessions, and no connection was cut for an expired session
    assert broker.log_text().count("SASL session expired") == expired_before
