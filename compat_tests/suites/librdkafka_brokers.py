"""The kafkapy setups librdkafka's regression suite runs against (librdkafka.py runs the tests),
and what test-runner is told about each: a :class:`Target` (bootstrap list, extra ``test.conf``
lines, extra environment).

* :class:`SingleBroker`: one broker configured as librdkafka's test scenario;
* :class:`ThreeBrokerCluster`: three brokers on a ZooKeeper of their own (replication factor 3);
* :class:`SecureBroker`: one broker with SSL, SASL_PLAINTEXT and SASL_SSL listeners, as trivup
  sets up librdkafka's security test clusters: TLS with client certificates
  (``ssl.client.auth=required``) from a test CA, SASL PLAIN and SCRAM-SHA-256/512 for trivup's
  user ``testuser``. Its targets carry the client side: ``security.protocol``, the CA, the client
  certificate and encrypted key, ``sasl.mechanism`` and the user in test.conf, and the
  certificate files in every encoding 0097_ssl_verify loads (trivup's ``SSL_*`` variables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkapy.testing import BrokerProcess, free_port

# Broker config as librdkafka's own test clusters (trivup) have it: its server.properties
# template plus the "default" scenario's 4 partitions for auto-created topics; everything else,
# group.initial.rebalance.delay.ms included, at Kafka's defaults (tests with two consumers
# joining one after the other rely on the 3 s initial delay to start with both in one generation)
BROKER_CONFIG = {
    "num.partitions": "4",
    # the authorization tests (0109, 0115, 0119, 0081's ACL step) expect Kafka's ACL authorizer,
    # allowing what no ACL names, and deny with kafka-acls.sh
    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
    "allow.everyone.if.no.acl.found": "true",
}
# librdkafka's test scenarios (tests/scenarios/*.json) as broker configs
SCENARIOS = {
    "default": {},
    "noautocreate": {"auto.create.topics.enable": "false"},
}
SECURITY_PROTOCOLS = ("SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
USER, PASSWORD = "testuser", "testpass"  # trivup's SASL user
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"  # the broker's own PLAIN login
KEY_PASSWORD = "use_strong_password_keystore_client"  # the client key's (trivup's SSL_password)


@dataclass(frozen=True)
class Target:
    """What test-runner needs to reach a kafkapy setup."""

    bootstrap: str
    conf: dict[str, str] = field(default_factory=dict)  # extra test.conf properties
    env: dict[str, str] = field(default_factory=dict)


class SingleBroker:
    """One kafkapy broker configured as one of librdkafka's test scenarios."""

    def __init__(self, base: Path, scenario: str) -> None:
        self.broker = BrokerProcess(base / "broker", {**BROKER_CONFIG, **SCENARIOS[scenario]})

    def __enter__(self) -> Target:
        return Target(self.broker.start().bootstrap)

    def __exit__(self, *exc: object) -> None:
        self.broker.stop()


class ThreeBrokerCluster:
    """Three kafkapy brokers on a ZooKeeper of their own, replication factor 3 by default."""

    def __init__(self, base: Path, scenario: str) -> None:
        self.base = base
        # the cluster harness shortens the initial rebalance delay; trivup keeps Kafka's 3 s
        self.config = {**BROKER_CONFIG, **SCENARIOS[scenario], "default.replication.factor": "3",
                       "group.initial.rebalance.delay.ms": "3000"}
        self.zk = None
        self.cluster = None

    def __enter__(self) -> Target:
        from kafkapy.testing.cluster import Cluster
        from kafkapy.testing.zookeeper import ZooKeeperServer

        self.zk = ZooKeeperServer(self.base / "zookeeper")
        self.zk.start()
        self.cluster = Cluster(self.base, self.zk.connect_string)
        for b in self.cluster.brokers.values():
            b.overrides.update(self.config)
        try:
            return Target(self.cluster.start().bootstrap)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        if self.cluster is not None:
            self.cluster.stop()
        if self.zk is not None:
            self.zk.stop()


def parse_security(text: str) -> tuple[str, str]:
    """``PROTOCOL`` or ``PROTOCOL:MECHANISM`` (SASL's defaults to PLAIN) -> (protocol,
    mechanism); ValueError for anything else."""
    protocol, _, mechanism = text.upper().partition(":")
    if protocol not in SECURITY_PROTOCOLS:
        raise ValueError(f"security protocol {protocol!r}: one of {', '.join(SECURITY_PROTOCOLS)}")
    if protocol == "SSL":
        if mechanism:
            raise ValueError("SSL takes no SASL mechanism")
        return protocol, ""
    mechanism = mechanism or "PLAIN"
    if mechanism not in SASL_MECHANISMS:
        raise ValueError(f"SASL mechanism {mechanism!r}: one of {', '.join(SASL_MECHANISMS)}")
    return protocol, mechanism


class SecureBroker:
    """One broker with SSL, SASL_PLAINTEXT and SASL_SSL listeners (and PLAINTEXT between
    brokers); ``targets()`` gives the client side of each ``PROTOCOL[:MECHANISM]``."""

    def __init__(self, base: Path, scenario: str, config: dict[str, str] | None = None) -> None:
        self.base = base
        self.scenario = scenario
        self.extra = dict(config or {})  # on top of the listeners' (a suite version's)
        self.ports = {p: free_port() for p in SECURITY_PROTOCOLS}
        self.broker: BrokerProcess | None = None
        self.files: dict[str, str] = {}

    def __enter__(self) -> SecureBroker:
        from compat_tests.security.helpers import plain_jaas
        from compat_tests.suites.librdkafka_certs import make_client_files

        self.files = make_client_files(self.base / "pki", KEY_PASSWORD)
        port = free_port()
        listeners = ",".join(
            [f"PLAINTEXT://127.0.0.1:{port}"]
            + [f"{p}://127.0.0.1:{self.ports[p]}" for p in SECURITY_PROTOCOLS]
        )
        jaas = plain_jaas({ADMIN: ADMIN_PASSWORD, USER: PASSWORD}, (ADMIN, ADMIN_PASSWORD))
        config = {
            **BROKER_CONFIG,
            **SCENARIOS[self.scenario],
            "listeners": listeners,
            "inter.broker.listener.name": "PLAINTEXT",
            "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "ssl.keystore.location": self.files["server_keystore"],
            "ssl.truststore.location": self.files["ca"],
            "listener.name.ssl.ssl.client.auth": "required",
        }
        for listener in ("sasl_plaintext", "sasl_ssl"):
            config[f"listener.name.{listener}.plain.sasl.jaas.config"] = jaas
        config.update(self.extra)
        self.broker = BrokerProcess(self.base / "broker", config, port=port).start()
        try:
            self._create_scram_user()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _create_scram_user(self) -> None:
        from confluent_kafka.admin import (
            AdminClient,
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )

        assert self.broker is not None
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        upserts = [
            UserScramCredentialUpsertion(USER, ScramCredentialInfo(m, 4096), PASSWORD.encode())
            for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
        ]
        for f in admin.alter_user_scram_credentials(upserts).values():
            f.result(30)

    def target(self, security: str) -> Target:
        protocol, mechanism = parse_security(security)
        conf = {"security.protocol": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            conf["ssl.ca.location"] = self.files["ca"]
        if protocol == "SSL":
            conf.update({
                "ssl.certificate.location": self.files["SSL_pub_pem"],
                "ssl.key.location": self.files["SSL_priv_pem"],
                "ssl.key.password": KEY_PASSWORD,
            })
        else:
            conf.update({"sasl.mechanism": mechanism, "sasl.username": USER,
                         "sasl.password": PASSWORD})
        env = {k: v for k, v in self.files.items() if k.startswith("SSL_")}
        return Target(f"127.0.0.1:{self.ports[protocol]}", conf, env)

    def __exit__(self, *exc: object) -> None:
        if self.broker is not None:
            self.broker.stop()
