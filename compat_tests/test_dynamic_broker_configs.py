"""Kafka 3.9's dynamic broker configs through confluent-kafka's AdminClient: the listener and
SASL settings Kafka reconfigures (librdkafka's 0081_admin sets
sasl.kerberos.min.time.before.relogin with the legacy AlterConfigs) stored and described, and
Kafka's refusals (per-broker configs at the cluster default, unprefixed key store settings,
thread counts beyond double, password configs without an encoder secret); DescribeConfigs hides
password and custom values."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
from kio.schema.alter_configs.v2 import request as ac

from kafkapy.protocol.errors import ErrorCode

from .rawclient import RawClient

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret";'
)


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    # a static password config, whose value DescribeConfigs must not show
    return module_broker_factory(
        {"listener.name.plaintext.plain.sasl.jaas.config": JAAS}, name="dynamic-configs"
    )


@pytest.fixture(scope="module")
def client(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def alter(client, name: str, configs: dict[str, str], validate_only: bool = False) -> None:
    """The legacy AlterConfigs (what librdkafka's rd_kafka_AlterConfigs sends)."""
    res = ConfigResource(ConfigResource.Type.BROKER, name, set_config=configs)
    client.alter_configs([res], validate_only=validate_only)[res].result(timeout=15)


def refused(client, name: str, configs: dict[str, str], validate_only: bool = False):
    with pytest.raises(KafkaException) as e:
        alter(client, name, configs, validate_only)
    return e.value.args[0]


def describe(client, name: str = "0") -> dict:
    res = ConfigResource(ConfigResource.Type.BROKER, name)
    return client.describe_configs([res])[res].result(timeout=15)


def test_listener_and_sasl_configs_are_stored_and_described(client):
    alter(client, "0", {"sasl.kerberos.min.time.before.relogin": "58000"})
    got = describe(client)["sasl.kerberos.min.time.before.relogin"]
    assert (got.value, got.source) == ("58000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    assert not got.is_read_only and not got.is_sensitive
    # the legacy form replaces the whole set: a per-listener setting and a custom config
    alter(client, "0", {"listener.name.plaintext.ssl.client.auth": "required", "my.own": "x"})
    got = describe(client)
    back = got["sasl.kerberos.min.time.before.relogin"]  # every 4.4 config is described
    assert (back.value, back.source) == ("60000", ConfigSource.DEFAULT_CONFIG.value)
    assert got["listener.name.plaintext.ssl.client.auth"].value == "required"
    assert got["my.own"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    assert got["my.own"].value is None and got["my.own"].is_sensitive  # custom: type unknown


def alter_default(broker, configs: dict[str, str]):
    """AlterConfigs of the cluster-wide default (an empty broker name, which confluent-kafka's
    ConfigResource refuses): the resource's (error code, message)."""
    request = ac.AlterConfigsRequest(
        resources=(
            ac.AlterConfigsResource(
                resource_type=4,
                resource_name="",
                configs=tuple(ac.AlterableConfig(name=k, value=v) for k, v in configs.items()),
            ),
        ),
        validate_only=False,
    )
    with RawClient(broker.bootstrap) as rc:
        got = rc.request(request).responses[0]
    return ErrorCode(got.error_code), got.error_message


def test_kafkas_refusals(broker, client):
    code, message = alter_default(broker, {"sasl.kerberos.min.time.before.relogin": "58000"})
    assert code == ErrorCode.invalid_request
    assert message.startswith("Cannot update these configs at default cluster level")
    assert alter_default(broker, {"num.network.threads": "4"}) == (ErrorCode.none, None)
    err = refused(client, "0", {"ssl.keystore.location": "/tmp/ks.pem"})
    assert err.name() == "INVALID_REQUEST"
    assert "only per-listener using the listener prefix" in err.str()
    err = refused(client, "0", {"num.io.threads": "100"})
    assert err.name() == "INVALID_REQUEST"
    assert "should not be greater than double the current value 8" in err.str()
    err = refused(client, "0", {"sasl.login.refresh.buffer.seconds": "x"})
    assert err.name() == "INVALID_REQUEST"
    assert "Invalid value x for configuration sasl.login.refresh.buffer.seconds" in err.str()
    err = refused(client, "0", {"num.partitions": "3"})
    assert "Cannot update these configs dynamically: [num.partitions]" in err.str()
    jaas = {"listener.name.plaintext.plain.sasl.jaas.config": JAAS}
    alter(client, "0", jaas, validate_only=True)  # Kafka validates it, then cannot store it
    err = refused(client, "0", jaas)
    assert err.name() == "INVALID_CONFIG"
    assert "Password encoder secret not configured" in err.str()
    alter(client, "0", {"num.io.threads": "16"})  # double is the limit
    assert describe(client)["num.io.threads"].value == "16"


def test_password_configs_are_hidden(client):
    got = describe(client)["listener.name.plaintext.plain.sasl.jaas.config"]
    assert got.source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert got.value is None and got.is_sensitive
    assert describe(client)["log.retention.ms"].is_read_only is False
    assert describe(client)["log.dirs"].is_read_only is True
