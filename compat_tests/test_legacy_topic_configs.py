"""Kafka 3.9's deprecated and tiered-storage topic configs that current tools still send, through
confluent-kafka's and kafka-python's admin clients: accepted, validated and described as Kafka 3.9
does in ZooKeeper mode, and, where kafkapy has nothing to apply them to, a warning in the log.

librdkafka's regression test 0092_mixed_msgver sets message.format.version with AlterConfigs;
kafka-reassign-partitions --throttle sets the replication throttles.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType

TOPIC = ConfigResource.Type.TOPIC
BROKER = ConfigResource.Type.BROKER


def describe(client, resource):
    return client.describe_configs([resource])[resource].result(timeout=15)


def incremental(client, restype, name, entries):
    res = ConfigResource(restype, name, incremental_configs=entries)
    return client.incremental_alter_configs([res])[res].result(timeout=15)


def set_op(name, value):
    return ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)


def test_create_and_legacy_alter_with_deprecated_configs(broker):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    created = {
        "message.format.version": "0.10.0",
        "message.downconversion.enable": "false",
        "leader.replication.throttled.replicas": "0:0",
        "compression.gzip.level": "5",
        "local.retention.ms": "-2",
    }
    client.create_topics([NewTopic("legacy-cfg", 1, 1, config=created)])["legacy-cfg"].result(15)
    got = describe(client, ConfigResource(TOPIC, "legacy-cfg"))
    for name, value in created.items():
        assert got[name].value == value, name
        assert got[name].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value, name
    # defaults and synonyms as Kafka 3.9 shows them
    assert got["message.timestamp.difference.max.ms"].value == str(2**63 - 1)
    assert got["compression.zstd.level"].value == "3"
    assert got["follower.replication.throttled.replicas"].value == ""
    remote = got["remote.storage.enable"]
    assert (remote.value, remote.source) == ("false", ConfigSource.DEFAULT_CONFIG.value)
    assert list(remote.synonyms) == []  # no broker-level synonym
    syn = [(s.name, s.value, s.source) for s in got["message.format.version"].synonyms.values()]
    assert syn == [
        ("message.format.version", "0.10.0", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
        ("log.message.format.version", "3.0-IV1", ConfigSource.DEFAULT_CONFIG.value),
    ]

    # librdkafka's 0092_mixed_msgver: the legacy (non-incremental) AlterConfigs
    res = ConfigResource(TOPIC, "legacy-cfg", set_config={"message.format.version": "0.11.0"})
    client.alter_configs([res])[res].result(timeout=15)
    got = describe(client, ConfigResource(TOPIC, "legacy-cfg"))
    assert got["message.format.version"].value == "0.11.0"
    assert got["message.downconversion.enable"].value == "true"  # replaced: back to default

    log = broker.log_text()
    assert "topic config accepted, not applied topic=legacy-cfg config=message.format.version" in (
        log
    )
    assert "config=leader.replication.throttled.replicas value=0:0" in log


def test_incremental_alter_with_kafka_python_and_confluent(broker):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    client.create_topics([NewTopic("legacy-inc", 1, 1)])["legacy-inc"].result(15)
    incremental(
        client,
        TOPIC,
        "legacy-inc",
        [
            set_op("message.downconversion.enable", "false"),
            set_op("follower.replication.throttled.replicas", "*"),
            set_op("compression.lz4.level", "12"),
        ],
    )
    kp = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        kp.alter_configs(
            [
                KpConfigResource(
                    ConfigResourceType.TOPIC,
                    "legacy-inc",
                    configs={"message.format.version": "2.8-IV1", "retention.ms": "7200000"},
                )
            ]
        )
    finally:
        kp.close()
    got = describe(client, ConfigResource(TOPIC, "legacy-inc"))
    assert got["message.format.version"].value == "2.8-IV1"
    assert got["retention.ms"].value == "7200000"
    assert got["compression.lz4.level"].value == "12"  # kafka-python alters incrementally
    assert got["follower.replication.throttled.replicas"].value == "*"


@pytest.mark.parametrize(
    "name, value, message",
    [
        (
            "message.format.version",
            "banana",
            "Invalid value banana for configuration message.format.version: "
            "Version banana is not a valid version",
        ),
        ("message.format.version", "4.0", "Version 4.0 is not a valid version"),
        ("message.downconversion.enable", "maybe", "Expected value to be either true or false"),
        ("compression.gzip.level", "0", "Value must be between 1 and 9 or equal to -1"),
        ("compression.zstd.level", "23", "Value must be no more than 22"),
        ("local.retention.bytes", "-3", "Value must be at least -2"),
        ("message.timestamp.difference.max.ms", "-1", "Value must be at least 0"),
        (
            "leader.replication.throttled.replicas",
            "0:1,x",
            "must be the literal '*' or a list of replicas",
        ),
        ("remote.storage.enable", "true", "Tiered Storage functionality is disabled"),
        ("remote.log.copy.disable", "true", "under Zookeeper's mode"),
    ],
)
def test_bad_values_are_invalid_config(broker, name, value, message):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = f"legacy-bad-{name.replace('.', '-')}"
    client.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    with pytest.raises(KafkaException) as e:
        incremental(client, TOPIC, topic, [set_op(name, value)])
    assert e.value.args[0].name() == "INVALID_CONFIG"
    assert message in e.value.args[0].str()
    with pytest.raises(KafkaException) as e:  # and at creation
        client.create_topics([NewTopic(topic + "-new", 1, 1, config={name: value})])[
            topic + "-new"
        ].result(15)
    assert e.value.args[0].name() == "INVALID_CONFIG"


def test_broker_level_synonyms(broker):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    incremental(client, BROKER, "0", [set_op("log.message.downconversion.enable", "false")])
    got = describe(client, ConfigResource(BROKER, "0"))
    assert got["log.message.downconversion.enable"].value == "false"
    assert got["log.message.format.version"].value == "3.0-IV1"
    client.create_topics([NewTopic("legacy-brk", 1, 1)])["legacy-brk"].result(15)
    topic = describe(client, ConfigResource(TOPIC, "legacy-brk"))["message.downconversion.enable"]
    assert (topic.value, topic.source) == ("false", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    # message.format.version is not reconfigurable on a running broker (Kafka: same)
    with pytest.raises(KafkaException) as e:
        incremental(client, BROKER, "0", [set_op("log.message.format.version", "2.8")])
    assert e.value.args[0].name() == "INVALID_REQUEST"
    assert "Cannot update these configs dynamically" in e.value.args[0].str()


def test_timestamp_difference_max_ms_bounds_old_timestamps(broker):
    """The deprecated config still applies where message.timestamp.before.max.ms is unset."""
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    config = {"message.timestamp.difference.max.ms": "60000"}
    client.create_topics([NewTopic("legacy-ts", 1, 1, config=config)])["legacy-ts"].result(15)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "message.send.max.retries": 0})
    results = []
    now = int(time.time() * 1000)
    for ts in (now - 3_600_000, now):
        producer.produce(
            "legacy-ts", b"v", timestamp=ts, on_delivery=lambda e, m: results.append(e)
        )
        producer.flush(15)
    assert results[0] is not None and results[0].name() == "INVALID_TIMESTAMP", results
    assert results[1] is None, results
