"""server.properties parsing, Kafka's defaults and precedence, and config errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kafkapy.server.config.broker_config import (
    LONG_MAX,
    BrokerConfig,
    ConfigError,
    Listener,
    is_known_key,
    parse_listener,
    parse_properties,
)


def cfg(**props: str) -> BrokerConfig:
    return BrokerConfig.from_properties({k.replace("_", "."): v for k, v in props.items()})


# --- properties format ---------------------------------------------------------------------------


def test_properties_separators_and_comments() -> None:
    text = (
        "# comment\n"
        "! also a comment\n"
        "   \n"
        "a=1\n"
        "b: 2\n"
        "c 3\n"
        "  d  =  spaced value  \n"
        "e\n"
        "f=x=y\n"
        "a=override\n"
    )
    assert parse_properties(text) == {
        "a": "override", "b": "2", "c": "3", "d": "spaced value  ", "e": "", "f": "x=y",
    }


def test_properties_continuations_and_escapes() -> None:
    text = (
        "log.dirs=/a,\\\n"
        "         /b\n"
        "path=C:\\\\dir\\\\\n"
        "tab=a\\tb\n"
        "uni=\\u00e9\n"
        "key\\ with\\=sep=v\n"
        "# comment ending in backslash \\\n"
        "next=1\n"
    )
    assert parse_properties(text) == {
        "log.dirs": "/a,/b",
        "path": "C:\\dir\\",
        "tab": "a\tb",
        "uni": "é",
        "key with=sep": "v",
        "next": "1",
    }


def test_properties_crlf_and_trailing_continuation() -> None:
    assert parse_properties("a=1\r\nb=2\\") == {"a": "1", "b": "2"}


def test_bad_unicode_escape() -> None:
    with pytest.raises(ConfigError, match="uxxxx"):
        parse_properties("a=\\u12")


# --- defaults ------------------------------------------------------------------------------------


def test_defaults() -> None:
    c = BrokerConfig.from_properties({})
    assert c == BrokerConfig()
    assert c.broker_id == 0
    assert c.listeners == (Listener("PLAINTEXT", "127.0.0.1", 9092),)
    assert (c.listener_host, c.listener_port) == ("127.0.0.1", 9092)
    assert (c.advertised_host, c.advertised_port) == ("127.0.0.1", 9092)
    assert c.log_dir_paths == [Path("./data/kafka-logs")]
    assert c.num_partitions == 1 and c.default_replication_factor == 1
    assert c.auto_create_topics_enable is True
    assert c.log_segment_bytes == 1073741824
    assert c.log_roll_ms == 168 * 3600 * 1000
    assert c.log_index_interval_bytes == 4096 and c.log_index_size_max_bytes == 10485760
    assert c.message_max_bytes == 1048588 and c.socket_request_max_bytes == 104857600
    assert c.log_flush_interval_messages == LONG_MAX
    assert c.log_flush_interval_ms is None
    assert c.effective_log_flush_interval_ms == c.log_flush_scheduler_interval_ms == LONG_MAX
    assert c.log_message_timestamp_type == "CreateTime"
    assert c.zookeeper_connect is None and not c.uses_zookeeper
    assert c.zookeeper_session_timeout_ms == 18000 == c.zookeeper_connection_timeout_ms
    assert c.broker_rack is None
    assert c.offsets_topic_num_partitions == 50 and c.offsets_topic_replication_factor == 3
    assert c.group_initial_rebalance_delay_ms == 3000
    assert c.log_retention_ms == 168 * 3600 * 1000 and c.log_retention_bytes == -1
    assert c.log_retention_check_interval_ms == 300000
    assert c.num_network_threads == 3 and c.num_io_threads == 8


# --- overrides -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "attr", "expected"),
    [
        ("broker.id", "7", "broker_id", 7),
        ("node.id", "8", "broker_id", 8),
        ("num.partitions", "3", "num_partitions", 3),
        ("default.replication.factor", "2", "default_replication_factor", 2),
        ("auto.create.topics.enable", "FALSE", "auto_create_topics_enable", False),
        ("log.segment.bytes", "14", "log_segment_bytes", 14),
        ("log.roll.hours", "2", "log_roll_ms", 7200000),
        ("log.roll.ms", "5", "log_roll_ms", 5),
        ("log.index.interval.bytes", "10", "log_index_interval_bytes", 10),
        ("log.index.size.max.bytes", "4096", "log_index_size_max_bytes", 4096),
        ("message.max.bytes", "100", "message_max_bytes", 100),
        ("socket.request.max.bytes", "1000", "socket_request_max_bytes", 1000),
        ("log.flush.interval.messages", "1", "log_flush_interval_messages", 1),
        ("log.flush.interval.ms", "100", "log_flush_interval_ms", 100),
        ("log.message.timestamp.type", "LogAppendTime", "log_message_timestamp_type",
         "LogAppendTime"),
        ("zookeeper.connect", "127.0.0.1:2181/kafka", "zookeeper_connect", "127.0.0.1:2181/kafka"),
        ("zookeeper.session.timeout.ms", "6000", "zookeeper_connection_timeout_ms", 6000),
        ("zookeeper.connection.timeout.ms", "100", "zookeeper_connection_timeout_ms", 100),
        ("broker.rack", "rack-1", "broker_rack", "rack-1"),
        ("offsets.topic.num.partitions", "1", "offsets_topic_num_partitions", 1),
        ("offsets.topic.replication.factor", "1", "offsets_topic_replication_factor", 1),
        ("group.initial.rebalance.delay.ms", "0", "group_initial_rebalance_delay_ms", 0),
        ("log.retention.hours", "1", "log_retention_ms", 3600000),
        ("log.retention.minutes", "2", "log_retention_ms", 120000),
        ("log.retention.ms", "-5", "log_retention_ms", -1),
        ("log.retention.bytes", "1000", "log_retention_bytes", 1000),
        ("log.retention.check.interval.ms", "10", "log_retention_check_interval_ms", 10),
        ("num.network.threads", "5", "num_network_threads", 5),
        ("num.io.threads", "2", "num_io_threads", 2),
        ("log.cleanup.policy", "compact,delete", "log_cleanup_policy", ("compact", "delete")),
        ("compression.type", "ZSTD", "compression_type", "zstd"),
        ("log.dir", "/x", "log_dirs", ("/x",)),
        ("log.dirs", "/a, /b", "log_dirs", ("/a", "/b")),
    ],
)
def test_override(key: str, value: str, attr: str, expected: object) -> None:
    assert getattr(BrokerConfig.from_properties({key: value}), attr) == expected
    assert BrokerConfig.from_properties({key: value}).raw[key] == value


def test_precedence() -> None:
    c = BrokerConfig.from_properties({"log.roll.ms": "5", "log.roll.hours": "1"})
    assert c.log_roll_ms == 5
    c = BrokerConfig.from_properties(
        {"log.retention.ms": "7", "log.retention.minutes": "1", "log.retention.hours": "1"}
    )
    assert c.log_retention_ms == 7
    c = BrokerConfig.from_properties({"log.retention.minutes": "1", "log.retention.hours": "1"})
    assert c.log_retention_ms == 60000
    assert cfg(log_dirs="/a", log_dir="/b").log_dirs == ("/a",)
    assert BrokerConfig.from_properties({"broker.id": "3", "node.id": "3"}).broker_id == 3


def test_listeners() -> None:
    c = BrokerConfig.from_properties(
        {"listeners": "PLAINTEXT://0.0.0.0:9093", "advertised.listeners": "PLAINTEXT://h:19093"}
    )
    assert (c.listener_host, c.listener_port) == ("0.0.0.0", 9093)
    assert (c.advertised_host, c.advertised_port) == ("h", 19093)
    c = BrokerConfig.from_properties({
        "listeners": "CLIENT://127.0.0.1:1,INTERNAL://[::1]:2",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
    })
    assert c.listeners[1] == Listener("INTERNAL", "::1", 2, "PLAINTEXT")
    assert c.advertised_listeners == c.listeners
    assert parse_listener("plaintext://h:0") == ("PLAINTEXT", "h", 0)
    c = BrokerConfig.from_properties({"listeners": "PLAINTEXT://:9092"})
    assert c.listener_host == "" and c.advertised_host  # advertises the machine's name


def test_zookeeper_chroot() -> None:
    c = cfg(zookeeper_connect="a:2181,b:2181/kafka/x")
    assert c.zookeeper_hosts == "a:2181,b:2181" and c.zookeeper_chroot == "/kafka/x"
    assert cfg(zookeeper_connect="a:2181").zookeeper_chroot == "/"


def test_from_file_with_overrides(tmp_path: Path) -> None:
    p = tmp_path / "server.properties"
    p.write_text(
        "# kafkapy test\nbroker.id=1\nlog.dirs=/tmp/k\\\n  afka\nnum.partitions : 4\n",
        encoding="utf-8",
    )
    c = BrokerConfig.from_file(p, {"num.partitions": "6"})
    assert (c.broker_id, c.log_dirs, c.num_partitions) == (1, ("/tmp/kafka",), 6)


# --- unknown keys --------------------------------------------------------------------------------


def test_unknown_key_warns_once_per_key(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kafkapy.server.config.broker_config"):
        BrokerConfig.from_properties({
            "no.such.key": "1", "another.bogus": "2", "num.replica.alter.log.dirs.threads": "1",
            "listener.name.plaintext.ssl.keystore.location": "/x", "ssl.keystore.type": "JKS",
        })
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 3
    assert "'no.such.key'" in warned[0] and "'another.bogus'" in warned[1]
    # and one line naming the given 4.4 configs kafkapy does not act on
    assert warned[2].startswith("broker configs accepted, not implemented count=1 configs=")
    assert "num.replica.alter.log.dirs.threads" in warned[2]


def test_known_keys() -> None:
    for key in ("broker.id", "log.dirs", "log.roll.hours", "metric.reporters", "process.roles"):
        assert is_known_key(key)
    assert not is_known_key("broker.idd")


# --- bad values ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("props", "fragment"),
    [
        ({"broker.id": "abc"},
         "Invalid value 'abc' for configuration broker.id: expected an integer"),
        ({"broker.id": "-2"}, "broker.id: value must be at least -1"),
        ({"broker.id": "1", "node.id": "2"}, "node.id: must equal broker.id (1)"),
        ({"broker.id": "1001"}, "reserved.broker.max.id"),
        ({"num.partitions": "0"}, "num.partitions: value must be at least 1"),
        ({"num.partitions": "1.5"}, "expected an integer"),
        ({"num.partitions": "99999999999"}, "num.partitions"),
        ({"log.segment.bytes": "13"},
         "'13' for configuration log.segment.bytes: value must be at least 14"),
        ({"log.roll.ms": "0"}, "log.roll.ms"),
        ({"log.roll.hours": "x"}, "log.roll.hours"),
        ({"log.retention.hours": "x"}, "log.retention.hours"),
        ({"auto.create.topics.enable": "yes"}, "auto.create.topics.enable: expected true or false"),
        ({"log.message.timestamp.type": "Other"}, "allowed values are CreateTime, LogAppendTime"),
        ({"compression.type": "brotli"}, "compression.type"),
        ({"log.cleanup.policy": "keep"}, "log.cleanup.policy"),
        ({"listeners": "localhost:9092"}, "configuration listeners: a listener must look like"),
        ({"listeners": "PLAINTEXT://h:99999"}, "port must be between 0 and 65535"),
        ({"listeners": "PLAINTEXT://h:1,PLAINTEXT://h:2"}, "different name"),
        ({"listeners": "SSL://h:9093"}, "listener SSL: ssl.keystore.location"),
        ({"listeners": "SASL_PLAINTEXT://h:9093"}, "sasl.enabled.mechanisms must be set"),
        ({"listeners": "SASL_PLAINTEXT://h:9093", "sasl.enabled.mechanisms": "GSSAPI"},
         "kafkapy serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
        ({"listeners": "SASL_PLAINTEXT://h:9093", "sasl.enabled.mechanisms": "PLAIN"},
         "listener.name.sasl_plaintext.plain.sasl.jaas.config must give PLAIN's users"),
        ({"listeners": "A://h:1,B://h:2", "listener.security.protocol.map": "A:PLAINTEXT,B:SSL",
          "inter.broker.listener.name": "A", "security.inter.broker.protocol": "SSL"},
         "only one of inter.broker.listener.name and security.inter.broker.protocol"),
        ({"listeners": "A://h:1,B://h:2", "listener.security.protocol.map": "A:PLAINTEXT,B:SSL"},
         "the inter-broker listener PLAINTEXT is not in advertised.listeners (A, B)"),
        ({"ssl.principal.mapping.rules": "RULE:x"}, "ssl.principal.mapping.rules"),
        ({"listeners": "CLIENT://h:9093"}, "CLIENT is not in listener.security.protocol.map"),
        ({"listeners": ""}, "at least one listener"),
        ({"listener.security.protocol.map": "A:NOPE"}, "listener.security.protocol.map"),
        ({"listeners": "PLAINTEXT://0.0.0.0:9092"}, "non-routable meta-address 0.0.0.0"),
        ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "advertised.listeners"),
        ({"advertised.listeners": "OTHER://h:1",
          "listener.security.protocol.map": "OTHER:PLAINTEXT,PLAINTEXT:PLAINTEXT"},
         "OTHER is not defined in listeners"),
        ({"inter.broker.listener.name": "NOPE"}, "inter.broker.listener.name"),
        ({"log.dirs": " , "}, "log.dirs: at least one directory"),
        ({"zookeeper.session.timeout.ms": "0"}, "zookeeper.session.timeout.ms"),
        ({"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"},
         "group.max.session.timeout.ms"),
    ],
)
def test_bad_values(props: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig.from_properties(props)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_get_returns_raw_properties() -> None:
    c = BrokerConfig.from_properties({"log.roll.hours": "2"})
    assert c.get("log.roll.hours") == "2"
    assert c.get("log.roll.ms") is None and c.get("log.roll.ms", "x") == "x"


def test_fetch_session_cache_slots_is_a_broker_config():
    from kafkapy.server.config.broker_config import BrokerConfig

    assert BrokerConfig.from_properties({}).max_incremental_fetch_session_cache_slots == 1000
    cfg = BrokerConfig.from_properties({"max.incremental.fetch.session.cache.slots": "7"})
    assert cfg.max_incremental_fetch_session_cache_slots == 7
