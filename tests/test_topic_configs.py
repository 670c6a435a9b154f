"""Kafka 3.9's topic configs: the table is complete, deprecated ones validate as Kafka's
validators do, broker-level synonyms are checked at start, and the deprecated timestamp bound
applies where Kafka 3.9 applies it."""

from __future__ import annotations

import logging

import pytest

from kafkapy.server.config.broker_config import BrokerConfig, ConfigError
from kafkapy.server.config.dynamic_broker_configs import config_error
from kafkapy.server.config.log_configs import (
    DYNAMIC_BROKER_KEYS,
    effective_topic_config,
    log_config_for,
)
from kafkapy.server.config.topic_configs import TOPIC_CONFIGS, validate_topic_config

# LogConfig.configNames() of Kafka 3.9.0
KAFKA_39_TOPIC_CONFIGS = """
cleanup.policy compression.gzip.level compression.lz4.level compression.type
compression.zstd.level delete.retention.ms file.delete.delay.ms flush.messages flush.ms
follower.replication.throttled.replicas index.interval.bytes
leader.replication.throttled.replicas local.retention.bytes local.retention.ms
max.compaction.lag.ms max.message.bytes message.downconversion.enable message.format.version
message.timestamp.after.max.ms message.timestamp.before.max.ms
message.timestamp.difference.max.ms message.timestamp.type min.cleanable.dirty.ratio
min.compaction.lag.ms min.insync.replicas preallocate remote.log.copy.disable
remote.log.delete.on.disable remote.storage.enable retention.bytes retention.ms segment.bytes
segment.index.bytes segment.jitter.ms segment.ms unclean.leader.election.enable
""".split()


def test_every_kafka_39_topic_config_is_known() -> None:
    assert sorted(TOPIC_CONFIGS) == sorted(KAFKA_39_TOPIC_CONFIGS)


@pytest.mark.parametrize(
    "value", ["0.8.2", "0.10.0", "0.10.0-IV1", "0.10.2.1", "2.8", "2.8.1", "2.8-IV1", "3.9"]
)
def test_message_format_versions_kafka_accepts(value: str) -> None:
    assert validate_topic_config("message.format.version", value) is None


@pytest.mark.parametrize("value", ["4.0", "0.10", "1", "3.10", "", "2.8-IV7", "x.y"])
def test_message_format_versions_kafka_refuses(value: str) -> None:
    msg = validate_topic_config("message.format.version", value)
    assert msg == (
        f"Invalid value {value} for configuration message.format.version: "
        f"Version {value} is not a valid version"
    )


def test_no_server_default_configs_have_no_default_synonym() -> None:
    eff = effective_topic_config({}, {"remote.storage.enable": "false"})
    assert eff["leader.replication.throttled.replicas"] == ("", "DEFAULT_CONFIG", [])
    assert eff["remote.storage.enable"][2] == [
        ("remote.storage.enable", "false", "DYNAMIC_TOPIC_CONFIG")
    ]
    assert eff["local.retention.ms"][2] == [("log.local.retention.ms", "-2", "DEFAULT_CONFIG")]


def test_timestamp_difference_applies_where_before_and_after_are_unbounded() -> None:
    cfg = log_config_for({}, {"message.timestamp.difference.max.ms": "5000"})
    assert cfg.message_timestamp_before_max_ms == 5000
    assert cfg.message_timestamp_after_max_ms == 3600000  # 4.0's default is not Long.MAX_VALUE
    cfg = log_config_for(
        {"log.message.timestamp.difference.max.ms": "7000"},
        {
            "message.timestamp.before.max.ms": "9000",
            "message.timestamp.after.max.ms": str(2**63 - 1),
        },
    )
    assert (cfg.message_timestamp_before_max_ms, cfg.message_timestamp_after_max_ms) == (9000, 7000)


def test_dynamic_broker_synonyms() -> None:
    assert "log.message.downconversion.enable" in DYNAMIC_BROKER_KEYS
    assert "compression.zstd.level" in DYNAMIC_BROKER_KEYS
    assert config_error({"log.message.format.version": "2.8"}) == (
        "Cannot update these configs dynamically: [log.message.format.version]"
    )
    assert "at least -2" in config_error({"log.local.retention.bytes": "-9"})


def test_static_synonyms_validated_at_start(caplog) -> None:
    with pytest.raises(ConfigError, match="log.message.format.version: Version 9 is not"):
        BrokerConfig.from_properties({"log.message.format.version": "9"})
    with pytest.raises(ConfigError, match="log.local.retention.ms: Value must be at least -2"):
        BrokerConfig.from_properties({"log.local.retention.ms": "-3"})
    with caplog.at_level(logging.WARNING):
        BrokerConfig.from_properties({"log.message.format.version": "0.10.2"})
    assert "config=log.message.format.version value=0.10.2" in caplog.text
    assert "message format v2" in caplog.text
