"""A three-broker cluster on ZooKeeper whose only listener is SASL_SSL: brokers replicate to each
other over TLS with SCRAM-SHA-512 (the admin user's credential written to ZooKeeper with
``kafka-configs --zookeeper`` before any broker starts, as with Kafka), register their endpoints
in /brokers/ids/N, and a user created through one broker can log in on every broker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.security.helpers import (
    ADMIN,
    ADMIN_PASSWORD,
    first_error,
    plain_jaas,
    produce_and_consume,
    sasl_conf,
    scram_jaas,
)
from kafkapy.testing.cluster import BROKERS, Cluster, wait_for
from kafkapy.testing.tls import make_pki
from kafkapy.testing.zookeeper import ZooKeeperServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def secure_cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("secure-cluster")
    pki = make_pki(base / "pki")
    zk = ZooKeeperServer(base / "zookeeper")
    zk.start()
    try:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kafkapy.cli.main",
                "configs",
                "--zookeeper",
                f"{zk.connect_string}/kafkapy",
                "--entity-type",
                "users",
                "--entity-name",
                ADMIN,
                "--alter",
                "--add-config",
                f"SCRAM-SHA-512=[password={ADMIN_PASSWORD}]",
            ],
            check=True,
            capture_output=True,
            timeout=60,
            cwd=ROOT,
        )

        def overrides(broker_id: int, port: int) -> dict[str, str]:
            return {
                "listeners": f"SASL_SSL://127.0.0.1:{port}",
                "security.inter.broker.protocol": "SASL_SSL",
                "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
                "listener.name.sasl_ssl.plain.sasl.jaas.config": plain_jaas(
                    {"bob": "bob-secret"}, None
                ),
                "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
                "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": scram_jaas(
                    ADMIN, ADMIN_PASSWORD
                ),
                "ssl.keystore.location": pki.server_keystore,
                "ssl.truststore.location": pki.ca,
            }

        client = sasl_conf(
            "", "SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD, **{"ssl.ca.location": pki.ca}
        )
        del client["bootstrap.servers"]
        cluster = Cluster(base, zk.connect_string, overrides=overrides, client_config=client)
        try:
            yield cluster.start()
        finally:
            cluster.stop()
    finally:
        zk.stop()


def test_brokers_register_their_sasl_ssl_endpoints(secure_cluster) -> None:
    for i in BROKERS:
        doc = json.loads(secure_cluster.zk.get(f"/kafkapy/brokers/ids/{i}")[0])
        port = secure_cluster.brokers[i].port
        assert doc["endpoints"] == [f"SASL_SSL://127.0.0.1:{port}"]
        assert doc["listener_security_protocol_map"] == {"SASL_SSL": "SASL_SSL"}


def test_replication_between_authenticated_brokers(secure_cluster) -> None:
    secure_cluster.create_topic("secure", partitions=3, rf=3)  # waits for the full ISR
    conf = {**secure_cluster.client_config, "bootstrap.servers": secure_cluster.bootstrap}
    values = [b"s%d" % i for i in range(30)]
    assert sorted(produce_and_consume(conf, "secure", values)) == sorted(values)
    wait_for(lambda: secure_cluster.converged("secure", 3), what="identical replicas")


def test_a_new_user_logs_in_on_every_broker(secure_cluster) -> None:
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    upsert = UserScramCredentialUpsertion(
        "erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"erin-secret"
    )
    admin = secure_cluster.admin()
    assert admin.alter_user_scram_credentials([upsert])["erin"].result(15) is None
    ca = secure_cluster.client_config["ssl.ca.location"]
    for b in secure_cluster.brokers.values():
        conf = sasl_conf(
            b.bootstrap, "SCRAM-SHA-512", "erin", "erin-secret", **{"ssl.ca.location": ca}
        )
        wait_for(
            lambda conf=conf: first_error(conf, 5) is None,
            timeout=20,
            what=f"erin logged in on {b.bootstrap}",
        )


def test_plain_over_sasl_ssl(secure_cluster) -> None:
    ca = secure_cluster.client_config["ssl.ca.location"]
    conf = sasl_conf(
        secure_cluster.bootstrap, "PLAIN", "bob", "bob-secret", **{"ssl.ca.location": ca}
    )
    values = [b"p%d" % i for i in range(5)]
    assert produce_and_consume(conf, "plain-ssl", values) == values
