"""Listener security settings resolved from server.properties: per-listener overrides, SASL
mechanisms and users, re-authentication lifetimes, the inter-broker client side."""

from __future__ import annotations

import pytest

from kafkapy.server.config.broker_config import BrokerConfig, ConfigError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
BASE = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:1,INTERNAL://127.0.0.1:2",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": f'{PLAIN} required user_bob="b";',
    "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512",
    "listener.name.internal.scram-sha-512.sasl.jaas.config": (
        f'{SCRAM} required username="admin" password="admin-secret";'
    ),
    "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
    "connections.max.reauth.ms": "60000",
    "listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms": "5000",
}


def test_per_listener_mechanisms_users_and_reauth() -> None:
    c = BrokerConfig.from_properties(BASE)
    client, internal = c.listener_security["SASL_PLAINTEXT"], c.listener_security["INTERNAL"]
    assert client.mechanisms == ("PLAIN", "SCRAM-SHA-256")
    assert dict(client.plain_users) == {"bob": "b"}
    assert dict(client.reauth_ms) == {"PLAIN": 60000, "SCRAM-SHA-256": 5000}
    assert internal.mechanisms == ("SCRAM-SHA-512",)
    assert dict(internal.reauth_ms) == {"SCRAM-SHA-512": 60000}
    ib = c.inter_broker_security
    assert (ib.listener_name, ib.mechanism, ib.username, ib.password) == (
        "INTERNAL",
        "SCRAM-SHA-512",
        "admin",
        "admin-secret",
    )


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        (
            {"sasl.mechanism.inter.broker.protocol": "PLAIN"},
            "sasl.mechanism.inter.broker.protocol PLAIN must be one of the mechanisms enabled",
        ),
        (
            {"listener.name.internal.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;"},
            "must give username and password",
        ),
        (
            {"listener.name.internal.scram-sha-512.sasl.jaas.config": "nonsense"},
            "Invalid value for configuration listener.name.internal.scram-sha-512.sasl.jaas.config",
        ),
        ({"connections.max.reauth.ms": "soon"}, "connections.max.reauth.ms"),
    ],
)
def test_inter_broker_and_sasl_errors_are_one_line(changes, fragment) -> None:
    props = {**BASE, **changes, "zookeeper.connect": "127.0.0.1:1"}  # ZK mode: peers matter
    with pytest.raises(ConfigError) as info:
        BrokerConfig.from_properties(props)
    assert fragment in str(info.value) and "\n" not in str(info.value)
