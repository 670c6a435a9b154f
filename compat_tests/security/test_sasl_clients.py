"""SASL with real clients: PLAIN and SCRAM-SHA-256/512 through confluent-kafka (librdkafka),
kafka-python, kcat, Kafka's Java client and the tools; the SCRAM credential APIs and
kafka-configs; wrong passwords, unknown users, a mechanism the listener does not enable.
The broker: conftest.py (sasl_broker_overrides in helpers.py) (SASL_PLAINTEXT and SASL_SSL)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compat_tests.security.helpers import (
    ADMIN,
    ADMIN_PASSWORD,
    admin_client,
    first_error,
    kafka_python_round_trip,
    kafkapy_tool,
    kcat_round_trip,
    plain_jaas,
    produce_and_consume,
    sasl_conf,
    scram_jaas,
)
from compat_tests.suites import jvm

ROOT = Path(__file__).resolve().parents[2]


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
    out = kafkapy_tool(
        "configs",
        *base,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=dave-secret],SCRAM-SHA-512=[password=dave-secret]",
    ).stdout
    assert out.strip() == "Completed updating config for user dave."
    out = kafkapy_tool("configs", *base, "--describe").stdout.strip()
    assert out == (
        "SCRAM credential configs for user-principal 'dave' are "
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096"
    )
    assert first_error(sasl_conf(broker.bootstrap, "SCRAM-SHA-256", "dave", "dave-secret")) is None
    # a removed credential stops working at once
    kafkapy_tool("configs", *base, "--alter", "--delete-config", "SCRAM-SHA-256")
    error = first_error(sasl_conf(broker.bootstrap, "SCRAM-SHA-256", "dave", "dave-secret"))
    assert error is not None and "invalid credentials" in error
    weak = kafkapy_tool(
        "configs",
        *base,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=10,password=x]",
        check=False,
    )
    assert weak.returncode != 0
    assert "Iterations 10 is less than the minimum 4096" in weak.stderr


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
    out = kafkapy_tool("broker-api-versions", *common).stdout
    assert "SaslHandshake(17): 0 to 1 [usable: 1]" in out
    kafkapy_tool("topics", *common, "--create", "--topic", "tool-secured", "--partitions", "2")
    described = kafkapy_tool("topics", *common, "--describe", "--topic", "tool-secured").stdout
    assert "PartitionCount: 2" in described
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(props.read_text().replace(carol[1], "nope"))
    failed = kafkapy_tool(
        "broker-api-versions",
        "--bootstrap-server",
        broker.ssl_bootstrap,
        "--command-config",
        str(wrong),
        check=False,
    )
    assert failed.returncode != 0 and "SASL authentication failed" in failed.stderr


@pytest.mark.parametrize("client", jvm.CLIENTS)
def test_java_client_scram_with_reauthentication(broker, carol, pki, tmp_path, client) -> None:
    """Kafka's own Java client and tools (4.4's and 3.9's): SCRAM-SHA-512 with 2 s sessions on
    SASL_PLAINTEXT (it re-authenticates on its connections, KIP-368), then reads back over
    SASL_SSL with a PEM trust store."""
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
    # the flags of the tools' own release (4.4 warns of 3.9's spellings, on stdout)
    command_config = {"4.4": "--command-config", "3.9": None}[client]
    expired_before = broker.log_text().count("SASL session expired")
    produced = subprocess.run(
        jvm.java_command("org.apache.kafka.tools.ProducerPerformance", client=client)
        + [
            "--topic",
            f"java-{client}",
            "--num-records",
            "60",
            "--record-size",
            "100",
            "--throughput",
            "12",
            *(("--bootstrap-server", broker.bootstrap, "--command-property", "acks=all")
              if command_config else
              ("--producer-props", f"bootstrap.servers={broker.bootstrap}", "acks=all")),
            command_config or "--producer.config",
            str(plain),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert produced.returncode == 0, produced.stderr[-2000:]
    assert "60 records sent" in produced.stdout
    consumed = subprocess.run(
        jvm.java_command("org.apache.kafka.tools.consumer.ConsoleConsumer", client=client)
        + [
            "--bootstrap-server",
            broker.ssl_bootstrap,
            command_config or "--consumer.config",
            str(tls),
            "--topic",
            f"java-{client}",
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
