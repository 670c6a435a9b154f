"""Kafka 3.9's dynamic broker config rules (server/config/dynamic_broker_configs.py): which configs
a broker takes at run time, at which level, with which values, and which ones DescribeConfigs
hides."""

from __future__ import annotations

import logging

import pytest

from kafkapy.server.config.dynamic_broker_configs import (
    DynamicConfigError,
    config_error,
    config_type,
    is_dynamic,
    is_sensitive,
    refuse_passwords,
    warn_not_applied,
)
from kafkapy.server.config.log_configs import BrokerLayers


@pytest.mark.parametrize(
    "name,value",
    [
        ("sasl.kerberos.min.time.before.relogin", "58000"),  # librdkafka's 0081_admin
        ("listener.name.sasl_ssl.ssl.keystore.location", "/etc/ks.pem"),
        ("listener.name.ssl.ssl.client.auth", "requested"),
        ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
        ("num.io.threads", "16"),
        ("metric.reporters", ""),
        ("leader.replication.throttled.rate", "1048576"),
        ("producer.id.expiration.ms", "3600000"),
        ("log.retention.ms", "1000"),
        ("max.connections.per.ip", "10"),
        ("my.own.setting", "anything"),  # a custom config: Kafka stores it
    ],
)
def test_accepted_per_broker(name, value) -> None:
    assert config_error({name: value}) is None


@pytest.mark.parametrize(
    "configs,message",
    [
        ({"num.partitions": "3"}, "Cannot update these configs dynamically: [num.partitions]"),
        (
            {"log.message.format.version": "2.8", "log.dirs": "/x"},
            "Cannot update these configs dynamically: [log.dirs, log.message.format.version]",
        ),
        (
            {"ssl.truststore.location": "/x"},
            "These security configs can be dynamically updated only per-listener using the "
            "listener prefix: [ssl.truststore.location]",
        ),
        (
            {"sasl.kerberos.min.time.before.relogin": "x"},
            "Invalid value x for configuration sasl.kerberos.min.time.before.relogin: Not a "
            "number of type LONG",
        ),
        (
            {"listener.name.ssl.ssl.client.auth": "maybe"},
            "Invalid value maybe for configuration listener.name.ssl.ssl.client.auth: String "
            "must be one of: required, requested, none",
        ),
        (
            {"sasl.login.refresh.min.period.seconds": "40000"},
            "Invalid value 40000 for configuration sasl.login.refresh.min.period.seconds: Not a "
            "number of type SHORT",
        ),
        (
            {"transaction.partition.verification.enable": "yes"},
            "Invalid value yes for configuration transaction.partition.verification.enable: "
            "Expected value to be either true or false",
        ),
        (
            {"principal.builder.class": "com.example.Builder"},
            "Invalid value com.example.Builder for configuration principal.builder.class: Class "
            "com.example.Builder could not be found.",
        ),
        (
            {"remote.fetch.max.wait.ms": "0"},
            "Invalid value 0 for configuration remote.fetch.max.wait.ms: Value must be at least 1",
        ),
        (
            {"num.io.threads": "3"},
            "Invalid dynamic configuration: Dynamic thread count update validation failed for "
            "num.io.threads=3, value should be at least half the current value 8",
        ),
    ],
)
def test_refused_per_broker(configs, message) -> None:
    assert config_error(configs) == message


def test_cluster_default_refuses_per_broker_configs() -> None:
    for name in (
        "sasl.kerberos.min.time.before.relogin",
        "listener.name.ssl.ssl.keystore.location",
        "ssl.cipher.suites",
    ):
        assert config_error({name: "1"}, per_broker=False).startswith(
            "Cannot update these configs at default cluster level, broker id must be specified"
        ), name
    # the connection limits and network threads are cluster-wide, with a listener prefix too
    for name in ("max.connections", "listener.name.plaintext.max.connections"):
        assert config_error({name: "100"}, per_broker=False) is None
    assert config_error({"num.network.threads": "4"}, per_broker=False) is None


def test_listener_bindings_are_refused() -> None:
    msg = config_error({"advertised.listeners": "PLAINTEXT://h:9092"})
    assert msg == "Cannot update these configs dynamically: [advertised.listeners]"  # 4.4's
    msg = config_error({"listeners": "PLAINTEXT://h:9092"})  # dynamic in 4.4, not in kafkapy
    assert msg.startswith("Cannot update these configs dynamically: [listeners]")
    assert "restart" in msg


def test_thread_counts_are_checked_against_the_value_in_force() -> None:
    layers = BrokerLayers({"background.threads": "4"}, {}, {"background.threads": "20"})
    assert config_error({"background.threads": "8"}, layers=layers) is None
    assert "double the current value 4" in config_error({"background.threads": "9"}, layers=layers)
    assert config_error({"num.replica.fetchers": "0"}).endswith("value should be at least 1")


def test_passwords_need_an_encoder_secret() -> None:
    refuse_passwords({"num.io.threads": "9"}, True, "0")
    with pytest.raises(DynamicConfigError) as e:
        refuse_passwords({"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "x"}, True, "0")
    assert e.value.code == "invalid_config"
    assert str(e.value).startswith(
        "Invalid config value for resource ConfigResource(type=BROKER, name='0'): Password "
        "encoder secret not configured"
    )
    with pytest.raises(DynamicConfigError) as e:
        refuse_passwords({"listener.name.ssl.ssl.key.password": "x"}, False, "")
    assert "Password config can be defined only at broker level" in str(e.value)


def test_types_sensitivity_and_dynamic_names() -> None:
    assert config_type("listener.name.ssl.ssl.keystore.password") == "PASSWORD"
    assert config_type("listener.name.sasl_plaintext.plain.sasl.jaas.config") == "PASSWORD"
    assert config_type("sasl.kerberos.min.time.before.relogin") == "LONG"
    assert config_type("log.retention.ms") == "LONG"
    assert is_sensitive("listener.name.sasl_plaintext.plain.sasl.jaas.config")
    assert is_sensitive("my.own.setting")  # type unknown: hidden, as Kafka does
    assert not is_sensitive("listener.name.ssl.ssl.keystore.location")
    assert is_sensitive("zookeeper.connect")  # not a Kafka 4.4 config: hidden as 4.4 would
    assert not is_sensitive("num.partitions")
    assert is_dynamic("sasl.enabled.mechanisms") and is_dynamic("log.cleaner.threads")
    assert not is_dynamic("log.dirs") and not is_dynamic("listener.name.ssl.ssl.keystore.type")


def test_not_applied_configs_warn_once(caplog) -> None:
    caplog.set_level(logging.WARNING, "kafkapy.config_changes")
    new = {"num.io.threads": "16", "log.retention.ms": "5", "my.own": "s3cret"}
    warn_not_applied("0", new, {"log.retention.ms": "1"})
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert any("config=num.io.threads" in x and "thread pools" in x for x in lines)
    assert any("config=my.own value=[hidden]" in x for x in lines)
    caplog.clear()
    warn_not_applied("0", new, new)  # unchanged: no warning again
    assert not caplog.records
