"""Shared pieces of the security tests: JAAS strings, client configs, waiting for a client error."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kafkapy.testing import BrokerProcess
from kafkapy.testing.tls import Pki

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"


def plain_jaas(users: dict[str, str], me: tuple[str, str] | None = (ADMIN, ADMIN_PASSWORD)) -> str:
    """PLAIN's JAAS config for a listener: its users, and optionally the broker's own login."""
    options = " ".join(f'user_{u}="{p}"' for u, p in users.items())
    login = f'username="{me[0]}" password="{me[1]}" ' if me else ""
    return f"{PLAIN_MODULE} required {login}{options};"


def scram_jaas(user: str, password: str) -> str:
    return f'{SCRAM_MODULE} required username="{user}" password="{password}";'


def sasl_conf(bootstrap: str, mechanism: str, user: str, password: str, **extra: Any) -> dict:
    """A librdkafka client config for SASL_PLAINTEXT (SASL_SSL when ssl.ca.location is given)."""
    protocol = "SASL_SSL" if "ssl.ca.location" in extra else "SASL_PLAINTEXT"
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        **extra,
    }


def first_error(conf: dict, timeout: float = 10.0) -> str | None:
    """Connect a librdkafka producer with ``conf``; the first error it reports, or None when it
    fetched metadata without one."""
    from confluent_kafka import Producer

    errors: list[str] = []
    producer = Producer({**conf, "error_cb": lambda e: errors.append(e.str())})
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and not errors:
            try:
                producer.list_topics(timeout=0.5)
                return None
            except Exception:
                producer.poll(0.1)
        return errors[0] if errors else "no answer"
    finally:
        producer.flush(0)


def produce_and_consume(conf: dict, topic: str, values: list[bytes], timeout: float = 20.0) -> list:
    """Produce ``values`` with acks=all, consume them back from the start; the values read."""
    from confluent_kafka import Consumer, Producer

    producer = Producer({**conf, "acks": "all"})
    for v in values:
        producer.produce(topic, v)
    assert producer.flush(timeout) == 0, "not every message was acknowledged"
    consumer = Consumer(
        {
            **conf,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < len(values) and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
    finally:
        consumer.close()
    return got


def kafka_python_round_trip(common: dict, topic: str, values: list[bytes]) -> list[bytes]:
    """Produce ``values`` with kafka-python (acks=all), read them back from the start."""
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(acks="all", **common)
    for v in values:
        producer.send(topic, v).get(timeout=15)
    producer.close()
    consumer = KafkaConsumer(
        topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **common
    )
    got: list[bytes] = []
    for message in consumer:
        got.append(message.value)
        if len(got) == len(values):
            break
    consumer.close()
    return got


def kafkapy_tool(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``kafkapy <tool> args...`` (a Kafka-named tool), its output captured; exit 0 asserted
    unless ``check`` is false."""
    proc = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        stdin=subprocess.DEVNULL,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def kcat_round_trip(bootstrap: str, config: dict[str, str], topic: str) -> list[bytes]:
    """Produce two lines with kcat (``-X`` ``config``), consume the topic from the start."""
    options = [x for k, v in config.items() for x in ("-X", f"{k}={v}")]
    base = ["kcat", "-b", bootstrap, *options, "-t", topic]
    subprocess.run([*base, "-P"], input=b"one\ntwo\n", check=True, timeout=30)
    out = subprocess.run(
        [*base, "-C", "-o", "beginning", "-e", "-q"], capture_output=True, check=True, timeout=30
    ).stdout
    return out.split()


FAILED_AUTH_DELAY_MS = 400
REAUTH_MS = 2000


def sasl_broker_overrides(port: int, ssl_port: int, pki: Pki) -> dict[str, str]:
    """The settings of a broker with two SASL listeners (the SASL test modules' broker):

    * SASL_PLAINTEXT (``broker.bootstrap``): PLAIN (users admin, bob), SCRAM-SHA-256 and
      SCRAM-SHA-512, whose sessions last REAUTH_MS
      (``listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms``);
    * SASL_SSL (``broker.ssl_bootstrap``): SCRAM-SHA-512 only.

    A failed authentication is answered and closed after FAILED_AUTH_DELAY_MS."""
    return {
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
    }


def admin_client(broker: BrokerProcess) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(sasl_conf(broker.bootstrap, "PLAIN", ADMIN, ADMIN_PASSWORD))


def create_carol(broker: BrokerProcess) -> tuple[str, str]:
    """User carol with SCRAM-SHA-256 (8192 iterations) and SCRAM-SHA-512 credentials."""
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    upserts = [
        UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"carol-secret"
        ),
        UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"carol-secret"
        ),
    ]
    admin = admin_client(broker)  # kept alive until the futures resolve
    for f in admin.alter_user_scram_credentials(upserts).values():
        assert f.result(15) is None
    return "carol", "carol-secret"
