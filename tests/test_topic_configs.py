"""Kafka 4.4's topic configs: the table is complete, the 3.x configs 4.0 removed are unknown,
synonyms are listed as Kafka 4.4's ConfigHelper lists them, broker-level synonyms are checked at
start, and the configs kafkapy does not act on are named in one line at start."""

from __future__ import annotations

import logging

import pytest

from kafkapy.server.config.broker_config import BrokerConfig, ConfigError
from kafkapy.server.config.dynamic_broker_configs import config_error
from kafkapy.server.config.log_configs import (
    DYNAMIC_BROKER_KEYS,
    BrokerLayers,
    effective_topic_config,
    log_config_for,
)
from kafkapy.server.config.topic_configs import (
    REMOVED_TOPIC_CONFIGS,
    TOPIC_CONFIGS,
    validate_topic_config,
    validate_topic_configs,
)

# LogConfig.nonInternalConfigNames() of Kafka 4.4.0
KAFKA_44_TOPIC_CONFIGS = """
cleanup.policy compression.gzip.level compression.lz4.level compression.type
compression.zstd.level delete.retention.ms errors.deadletterqueue.group.enable
file.delete.delay.ms flush.messages flush.ms follower.replication.throttled.replicas
index.interval.bytes leader.replication.throttled.replicas local.retention.bytes
local.retention.ms max.compaction.lag.ms max.decompressed.message.bytes max.message.bytes
message.timestamp.after.max.ms message.timestamp.before.max.ms message.timestamp.type
min.cleanable.dirty.ratio min.compaction.lag.ms min.insync.replicas preallocate
remote.copy.lag.bytes remote.copy.lag.ms remote.log.copy.disable remote.log.delete.on.disable
remote.storage.enable retention.bytes retention.ms segment.bytes segment.index.bytes
segment.jitter.ms segment.ms unclean.leader.election.enable
""".split()


def test_every_kafka_44_topic_config_is_known() -> None:
    assert sorted(TOPIC_CONFIGS) == sorted(KAFKA_44_TOPIC_CONFIGS)


@pytest.mark.parametrize("name", sorted(REMOVED_TOPIC_CONFIGS))
def test_configs_removed_in_40_are_unknown(name: str) -> None:
    assert name not in TOPIC_CONFIGS
    assert validate_topic_config(name, "1") == f"Unknown topic config name: {name}"


def test_values_checked_as_44() -> None:
    assert validate_topic_config("max.decompressed.message.bytes", "0") == (
        "Invalid value 0 for configuration max.decompressed.message.bytes: Value must be at least 1"
    )
    assert validate_topic_config("remote.copy.lag.ms", "-1") is None
    lags = {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}
    assert validate_topic_configs(lags) == (
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
    )


def test_no_server_default_configs_have_no_default_synonym() -> None:
    eff = effective_topic_config({}, {"remote.storage.enable": "false"})
    assert eff["leader.replication.throttled.replicas"] == ("", "DEFAULT_CONFIG", [])
    assert eff["remote.storage.enable"][2] == [
        ("remote.storage.enable", "false", "DYNAMIC_TOPIC_CONFIG")
    ]
    assert eff["local.retention.ms"][2] == [("log.local.retention.ms", "-2", "DEFAULT_CONFIG")]


def test_synonyms_start_at_the_first_broker_synonym() -> None:
    """Kafka's configSynonyms drop what comes before the synonym itself: log.retention.hours's
    default is no synonym of retention.ms until log.retention.ms is set."""
    eff = effective_topic_config({}, {})
    assert eff["retention.ms"] == ("604800000", "DEFAULT_CONFIG", [])
    assert eff["segment.ms"][2] == [] and eff["flush.ms"][2] == []
    layers = BrokerLayers({}, {"log.retention.ms": "1000"}, {})
    assert effective_topic_config(layers, {})["retention.ms"] == (
        "1000",
        "DYNAMIC_DEFAULT_BROKER_CONFIG",
        [
            ("log.retention.ms", "1000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            ("log.retention.hours", "168", "DEFAULT_CONFIG"),
        ],
    )
    # a static log.retention.hours sets the value, with no synonym (as 4.4 reports it)
    assert effective_topic_config({"log.retention.hours": "1"}, {})["retention.ms"][0] == "3600000"
    assert log_config_for({"log.retention.hours": "1"}, {}).retention_ms == 3_600_000


def test_dynamic_broker_synonyms() -> None:
    assert "compression.zstd.level" in DYNAMIC_BROKER_KEYS
    assert "log.retention.ms" in DYNAMIC_BROKER_KEYS
    assert "log.retention.hours" not in DYNAMIC_BROKER_KEYS  # read-only in 4.4
    assert config_error({"log.retention.hours": "2"}) == (
        "Cannot update these configs dynamically: [log.retention.hours]"
    )
    assert "at least -2" in config_error({"log.local.retention.bytes": "-9"})


def test_static_synonyms_validated_at_start(caplog) -> None:
    with pytest.raises(ConfigError, match="log.local.retention.ms: Value must be at least -2"):
        BrokerConfig.from_properties({"log.local.retention.ms": "-3"})
    with caplog.at_level(logging.WARNING):
        BrokerConfig.from_properties({"log.local.retention.ms": "-2", "num.partitions": "3"})
    lines = [r.getMessage() for r in caplog.records if "not implemented" in r.getMessage()]
    assert len(lines) == 1
    assert "count=1 configs=log.local.retention.ms (kafkapy has no tiered storage)" in lines[0]


def test_quiet_when_every_config_is_implemented(caplog) -> None:
    with caplog.at_level(logging.WARNING):
        BrokerConfig.from_properties({"num.partitions": "3", "log.retention.hours": "2"})
    assert "not implemented" not in caplog.text
