"""Topic configs as Apache Kafka 4.4 has them, through confluent-kafka's and kafka-python's admin
clients: the 3.x configs Kafka 4.0 removed (message.format.version, message.downconversion.enable,
message.timestamp.difference.max.ms) refused with INVALID_CONFIG "Unknown topic config name" on
CreateTopics, AlterConfigs and IncrementalAlterConfigs, as 4.4 refuses them; the tiered-storage,
throttle and compression-level configs accepted, validated and described, and, where kafkapy has
nothing to apply them to, a warning in the log.

librdkafka's regression test 0092_mixed_msgver sets message.format.version with AlterConfigs (4.4
refuses it too); kafka-reassign-partitions --throttle sets the replication throttles.
"""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException
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


REMOVED = ("message.format.version", "message.downconversion.enable",
           "message.timestamp.difference.max.ms")


@pytest.mark.parametrize("name", REMOVED)
def test_removed_configs_are_unknown(broker, name):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    message = f"Unknown topic config name: {name}"
    topic = f"removed-{name.replace('.', '-')}"
    with pytest.raises(KafkaException) as e:
        client.create_topics([NewTopic(topic, 1, 1, config={name: "1"})])[topic].result(15)
    assert e.value.args[0].name() == "INVALID_CONFIG" and message in e.value.args[0].str()
    client.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    with pytest.raises(KafkaException) as e:
        incremental(client, TOPIC, topic, [set_op(name, "1")])
    assert e.value.args[0].name() == "INVALID_CONFIG" and message in e.value.args[0].str()
    res = ConfigResource(TOPIC, topic, set_config={name: "1"})  # librdkafka's 0092_mixed_msgver
    with pytest.raises(KafkaException) as e:
        client.alter_configs([res])[res].result(timeout=15)
    assert e.value.args[0].name() == "INVALID_CONFIG" and message in e.value.args[0].str()
    assert name not in describe(client, ConfigResource(TOPIC, topic))


def test_create_and_legacy_alter_with_configs_not_applied(broker):
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    created = {
        "leader.replication.throttled.replicas": "0:0",
        "compression.gzip.level": "5",
        "local.retention.ms": "-2",
        "max.decompressed.message.bytes": "1000000",
        "remote.copy.lag.ms": "5",
    }
    client.create_topics([NewTopic("legacy-cfg", 1, 1, config=created)])["legacy-cfg"].result(15)
    got = describe(client, ConfigResource(TOPIC, "legacy-cfg"))
    for name, value in created.items():
        assert got[name].value == value, name
        assert got[name].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value, name
    # defaults and synonyms as Kafka 4.4 shows them
    assert got["compression.zstd.level"].value == "3"
    assert got["follower.replication.throttled.replicas"].value == ""
    assert got["errors.deadletterqueue.group.enable"].value == "false"
    remote = got["remote.storage.enable"]
    assert (remote.value, remote.source) == ("false", ConfigSource.DEFAULT_CONFIG.value)
    assert list(remote.synonyms) == []  # no broker-level synonym
    syn = [(s.name, s.value, s.source) for s in got["remote.copy.lag.ms"].synonyms.values()]
    assert syn == [
        ("remote.copy.lag.ms", "5", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
        ("log.remote.copy.lag.ms", "0", ConfigSource.DEFAULT_CONFIG.value),
    ]
    assert list(got["retention.ms"].synonyms) == []  # log.retention.ms is null in 4.4

    # the legacy (non-incremental) AlterConfigs replaces every override
    res = ConfigResource(TOPIC, "legacy-cfg", set_config={"compression.gzip.level": "7"})
    client.alter_configs([res])[res].result(timeout=15)
    got = describe(client, ConfigResource(TOPIC, "legacy-cfg"))
    assert got["compression.gzip.level"].value == "7"
    assert got["local.retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value

    log = broker.log_text()
    assert "topic config accepted, not applied topic=legacy-cfg config=compression.gzip.level" in (
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
                    configs={"remote.copy.lag.bytes": "4096", "retention.ms": "7200000"},
                )
            ]
        )
    finally:
        kp.close()
    got = describe(client, ConfigResource(TOPIC, "legacy-inc"))
    assert got["remote.copy.lag.bytes"].value == "4096"
    assert got["retention.ms"].value == "7200000"
    assert got["compression.lz4.level"].value == "12"  # kafka-python alters incrementally
    assert got["follower.replication.throttled.replicas"].value == "*"


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("compression.gzip.level", "0", "Value must be between 1 and 9 or equal to -1"),
        ("compression.zstd.level", "23", "Value must be no more than 22"),
        ("local.retention.bytes", "-3", "Value must be at least -2"),
        ("remote.copy.lag.ms", "-2", "Value must be at least -1"),
        ("max.decompressed.message.bytes", "0", "Value must be at least 1"),
        ("errors.deadletterqueue.group.enable", "maybe", "Expected value to be either true or"),
        (
            "leader.replication.throttled.replicas",
            "0:1,x",
            "must be the literal '*' or a list of replicas",
        ),
        ("remote.storage.enable", "true", "Tiered Storage functionality is disabled"),
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
    incremental(client, BROKER, "0", [set_op("log.remote.copy.lag.ms", "9")])
    got = describe(client, ConfigResource(BROKER, "0"))
    assert got["log.remote.copy.lag.ms"].value == "9"
    client.create_topics([NewTopic("legacy-brk", 1, 1)])["legacy-brk"].result(15)
    topic = describe(client, ConfigResource(TOPIC, "legacy-brk"))["remote.copy.lag.ms"]
    assert (topic.value, topic.source) == ("9", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    # log.retention.hours is not reconfigurable on a running 4.4 broker (log.retention.ms is)
    with pytest.raises(KafkaException) as e:
        incremental(client, BROKER, "0", [set_op("log.retention.hours", "2")])
    assert e.value.args[0].name() == "INVALID_REQUEST"
    assert "Cannot update these configs dynamically" in e.value.args[0].str()
