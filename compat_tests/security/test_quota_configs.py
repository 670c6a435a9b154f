"""kafka-configs for client quotas (users, clients, ips) with Kafka's flags and output, through
AlterClientQuotas and DescribeClientQuotas on a SASL broker (conftest.py), and a quota set this
way throttling an authenticated user. A module of its own: its default-entity quotas would
otherwise apply to the other modules' clients."""

from __future__ import annotations

import time

from compat_tests.security.helpers import (
    ADMIN,
    ADMIN_PASSWORD,
    kafkapy_tool,
    plain_jaas,
    sasl_conf,
)
from kafkapy.cli.tools import dispatch


def test_kafka_configs_edits_and_describes_client_quotas(broker, tmp_path, capsys) -> None:
    props = tmp_path / "admin.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={plain_jaas({}, (ADMIN, ADMIN_PASSWORD))}\n"
    )
    # the script once, then the tool in this process (a Python start per call costs ~0.6 s)
    assert kafkapy_tool("configs", "--bootstrap-server", broker.bootstrap, "--command-config",
                        str(props), "--describe", "--entity-type", "clients").stdout == ""

    def configs(*args: str, check: bool = True) -> str:
        capsys.readouterr()
        code = dispatch("configs", ["--bootstrap-server", broker.bootstrap,
                                    "--command-config", str(props), *args])
        out, err = capsys.readouterr()
        assert (code == 0) == check, (args, out, err)
        return (out if check else err).strip()

    quinn = ("--entity-type", "users", "--entity-name", "quinn")
    assert configs("--alter", *quinn, "--add-config", "SCRAM-SHA-256=[password=quinn-secret]") \
        == "Completed updating config for user quinn."
    assert configs("--alter", *quinn, "--add-config",
                   "producer_byte_rate=10000,consumer_byte_rate=10485760") \
        == "Completed updating config for user quinn."
    assert configs("--alter", *quinn, "--entity-type", "clients", "--entity-default",
                   "--add-config", "request_percentage=200") \
        == "Completed updating config for user quinn."
    assert configs("--alter", "--client-defaults", "--add-config", "producer_byte_rate=1e9") \
        == "Completed updating default config for clients in the cluster."
    assert configs("--alter", "--ip", "127.0.0.1", "--add-config",
                   "connection_creation_rate=1000") == "Completed updating config for ip 127.0.0.1."
    # Kafka's lines: values as Java doubles, SCRAM credentials after the quotas of users
    assert configs("--describe", *quinn).splitlines() == [
        "Quota configs for user-principal 'quinn' are consumer_byte_rate=1.048576E7, "
        "producer_byte_rate=10000.0",
        "SCRAM credential configs for user-principal 'quinn' are SCRAM-SHA-256=iterations=4096",
    ]
    assert configs("--describe", "--entity-type", "users", "--entity-type", "clients") == (
        "Quota configs for user-principal 'quinn', the default client-id are "
        "request_percentage=200.0")
    assert configs("--describe", "--entity-type", "clients", "--entity-default") == (
        "Quota configs for the default client-id are producer_byte_rate=1.0E9")
    assert configs("--describe", "--entity-type", "ips") == (
        "Quota configs for ip '127.0.0.1' are connection_creation_rate=1000.0")
    # removals, and mistakes refused before anything is sent
    assert configs("--alter", "--client-defaults", "--delete-config", "producer_byte_rate") \
        == "Completed updating default config for clients in the cluster."
    assert configs("--alter", "--ip", "127.0.0.1", "--delete-config",
                   "connection_creation_rate") == "Completed updating config for ip 127.0.0.1."
    assert configs("--describe", "--entity-type", "clients") == ""
    for args, message in (
        (("--alter", *quinn, "--delete-config", "request_percentage"),
         "Invalid config(s): request_percentage"),
        (("--alter", *quinn, "--add-config", "producer_byte_rate=fast"),
         "Cannot parse quota configuration value for producer_byte_rate: fast"),
        (("--alter", *quinn, "--add-config", "SCRAM-SHA-512=[password=x],producer_byte_rate=1"),
         "Cannot alter both quota and SCRAM credential configs simultaneously"),
        (("--alter", "--ip-defaults", "--add-config", "producer_byte_rate=1"),
         "Only connection quota configs can be added for 'ips'"),
        (("--alter", "--entity-type", "users", "--entity-type", "clients", "--entity-name", "a",
          "--add-config", "producer_byte_rate=1"),
         "An entity name must be specified for every entity type"),
        (("--alter", "--entity-type", "users", "--entity-type", "ips", "--entity-name", "a",
          "--entity-name", "1.2.3.4", "--add-config", "producer_byte_rate=1"),
         "Only 'users' and 'clients' entity types may be specified together"),
    ):
        error = configs(*args, check=False)
        assert message in error and "Traceback" not in error, (args, error)

    # the user quota applies to quinn's authenticated connections: 10 kB/s over 11 windows
    # of 1 s lets about 110 kB through before throttling; 300 kB are throttled
    from confluent_kafka import Producer

    throttles: list[int] = []
    producer = Producer({
        **sasl_conf(broker.bootstrap, "SCRAM-SHA-256", "quinn", "quinn-secret"),
        "linger.ms": 5, "throttle_cb": lambda event: throttles.append(event.throttle_time),
    })
    for _ in range(300):
        producer.produce("quinn-quota", b"q" * 1000)
        producer.poll(0)
    assert producer.flush(30) == 0
    deadline = time.monotonic() + 10
    while not any(throttles) and time.monotonic() < deadline:
        producer.poll(0.2)
    assert any(t > 0 for t in throttles), throttles
