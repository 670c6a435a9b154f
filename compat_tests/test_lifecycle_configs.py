"""Topic and broker configs through confluent-kafka's AdminClient: incremental_alter_configs,
alter_configs, describe_configs (sources and synonyms), validate_only, INVALID_CONFIG messages,
and changes applied to open logs at once (null-key rejection on a topic made compact)."""

from __future__ import annotations

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


def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def create(client, name, config=None):
    client.create_topics([NewTopic(name, 1, 1, config=config or {})])[name].result(timeout=15)


def describe(client, resource):
    return client.describe_configs([resource])[resource].result(timeout=15)


def incremental(client, resource, entries, validate_only=False):
    res = ConfigResource(resource.restype, resource.name, incremental_configs=entries)
    return client.incremental_alter_configs([res], validate_only=validate_only)[res].result(
        timeout=15
    )


def test_incremental_alter_and_describe_sources(broker):
    client = admin(broker.bootstrap)
    create(client, "cfg")
    topic = ConfigResource(ConfigResource.Type.TOPIC, "cfg")
    incremental(
        client,
        topic,
        [
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry(
                "cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND
            ),
            ConfigEntry("compression.type", "zstd", incremental_operation=AlterConfigOpType.SET),
        ],
    )
    got = describe(client, topic)
    assert got["retention.ms"].value == "3600000"
    assert got["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert got["cleanup.policy"].value == "delete,compact"
    assert got["compression.type"].value == "zstd"
    assert got["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    syn = [(s.name, s.source) for s in got["retention.ms"].synonyms.values()]
    assert syn[0] == ("retention.ms", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    # subtract and delete
    incremental(
        client,
        topic,
        [
            ConfigEntry(
                "cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT
            ),
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ],
    )
    got = describe(client, topic)
    assert got["cleanup.policy"].value == "compact"
    assert got["retention.ms"].value == "604800000"
    assert got["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value


def test_invalid_values_and_validate_only(broker):
    client = admin(broker.bootstrap)
    create(client, "cfgbad")
    topic = ConfigResource(ConfigResource.Type.TOPIC, "cfgbad")
    with pytest.raises(KafkaException) as e:
        incremental(
            client,
            topic,
            [ConfigEntry("segment.bytes", "10", incremental_operation=AlterConfigOpType.SET)],
        )
    err = e.value.args[0]
    assert err.name() == "INVALID_CONFIG"
    assert "segment.bytes" in err.str() and "at least 14" in err.str()
    with pytest.raises(KafkaException) as e:
        incremental(
            client,
            topic,
            [
                ConfigEntry(
                    "min.cleanable.dirty.ratio", "1.5", incremental_operation=AlterConfigOpType.SET
                )
            ],
        )
    assert "no more than 1.0" in e.value.args[0].str()
    with pytest.raises(KafkaException) as e:
        incremental(
            client,
            topic,
            [ConfigEntry("no.such", "1", incremental_operation=AlterConfigOpType.SET)],
        )
    assert e.value.args[0].name() == "INVALID_CONFIG"
    incremental(
        client,
        topic,
        [ConfigEntry("retention.bytes", "1000", incremental_operation=AlterConfigOpType.SET)],
        validate_only=True,
    )
    assert describe(client, topic)["retention.bytes"].value == "-1"
    missing = ConfigResource(ConfigResource.Type.TOPIC, "nope")
    with pytest.raises(KafkaException) as e:
        incremental(
            client,
            missing,
            [ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)],
        )
    assert e.value.args[0].name() == "UNKNOWN_TOPIC_OR_PART"


def test_legacy_alter_configs_replaces_overrides(broker):
    client = admin(broker.bootstrap)
    create(client, "legacy", {"retention.ms": "1000000", "segment.ms": "100000"})
    res = ConfigResource(
        ConfigResource.Type.TOPIC, "legacy", set_config={"retention.bytes": "5000"}
    )
    client.alter_configs([res])[res].result(timeout=15)
    got = describe(client, ConfigResource(ConfigResource.Type.TOPIC, "legacy"))
    assert got["retention.bytes"].value == "5000"
    assert got["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    assert got["segment.ms"].value == "604800000"


def test_dynamic_broker_configs(broker):
    client = admin(broker.bootstrap)
    create(client, "bt")
    b = ConfigResource(ConfigResource.Type.BROKER, "0")
    incremental(
        client,
        b,
        [ConfigEntry("log.retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET)],
    )
    got = describe(client, b)
    assert got["log.retention.ms"].value == "7200000"
    assert got["log.retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    t = describe(client, ConfigResource(ConfigResource.Type.TOPIC, "bt"))
    assert t["retention.ms"].value == "7200000"
    assert t["retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    # not dynamically updatable
    with pytest.raises(KafkaException) as e:
        incremental(
            client,
            b,
            [ConfigEntry("num.partitions", "3", incremental_operation=AlterConfigOpType.SET)],
        )
    assert e.value.args[0].name() == "INVALID_REQUEST"
    assert "num.partitions" in e.value.args[0].str()
    # survives a restart
    broker.restart()
    t = describe(admin(broker.bootstrap), ConfigResource(ConfigResource.Type.TOPIC, "bt"))
    assert t["retention.ms"].value == "7200000"


def test_compact_topic_rejects_null_keys_live(broker):
    client = admin(broker.bootstrap)
    create(client, "nullkeys")
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    errors = []
    p.produce("nullkeys", value=b"ok", on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    assert errors == [None]
    incremental(
        client,
        ConfigResource(ConfigResource.Type.TOPIC, "nullkeys"),
        [ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET)],
    )
    errors.clear()
    p.produce("nullkeys", value=b"no key", on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    p.produce("nullkeys", key=b"k", value=b"keyed", on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    assert errors[0] is not None and errors[0].name() == "INVALID_RECORD"
    assert errors[1] is None
