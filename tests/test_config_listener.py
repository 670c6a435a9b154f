"""Config change notifications applied on a broker (server/config/config_listener.py): the trio task
wakes on the /config/changes watch and applies topic and broker configs to the registry and the
open logs; values carry their znode's mzxid so that an older read never replaces a newer one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio

from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.config_notifications import ConfigChange
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.security.scram import MECHANISMS, ScramCredential
from kafkapy.server.config.broker_config import BrokerConfig
from kafkapy.server.config.config_changes import apply_broker_configs
from kafkapy.server.config.config_listener import ConfigChangeListener
from kafkapy.server.quota_enforcement import BrokerQuotas
from kafkapy.server.security.scram_cache import ScramCredentialCache
from kafkapy.server.topics import TopicRegistry
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log_manager import LogManager

ME = 1


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Any]:
    store = EmbeddedStore.in_dir(tmp_path / "meta")
    cluster = ClusterMetadata(store)
    cluster.ensure_persistent_paths()
    (tmp_path / "logs").mkdir()
    logs = LogManager([tmp_path / "logs"], LogConfig())
    b = SimpleNamespace(
        store=store, cluster=cluster, logs=logs, broker_id=ME, broker_props={}, replicas=None,
        dynamic_configs={}, dynamic_default_configs={}, dynamic_config_zxids={}, topics=None,
        client_quotas=BrokerQuotas(BrokerConfig()),
        scram_credentials=ScramCredentialCache(),
    )
    b.topics = TopicRegistry(b)  # type: ignore[arg-type]
    try:
        yield b
    finally:
        for plog in logs.logs.values():
            plog.close()
        store.close()


def _segment_bytes(broker: Any, topic: str) -> int:
    return int(broker.logs.get_log(topic, 0).config.segment_bytes)


async def _until(cond: Callable[[], bool]) -> None:
    with trio.fail_after(10):
        while not cond():
            await trio.sleep(0.01)


def test_listener_applies_what_other_writers_change(broker: Any) -> None:
    cluster = broker.cluster
    cluster.create_topic("mine", {0: [ME]})
    cluster.create_topic("early", {0: [ME]})
    cluster.set_topic_configs("early", {"segment.bytes": "100000"})  # before this broker started
    broker.topics.load()
    listener = ConfigChangeListener(broker)
    listener.start()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(listener.run)
            await _until(lambda: _segment_bytes(broker, "early") == 100000)

            def other_broker_writes() -> None:  # another thread, as another broker's writes
                cluster.set_topic_configs("mine", {"segment.bytes": "20000"})
                cluster.set_broker_configs("<default>", {"log.retention.ms": "1234"})
                cluster.set_broker_configs(ME + 1, {"log.retention.ms": "5"})  # not ours

            await trio.to_thread.run_sync(other_broker_writes)
            await _until(lambda: _segment_bytes(broker, "mine") == 20000)
            await _until(lambda: broker.dynamic_default_configs == {"log.retention.ms": "1234"})
            assert broker.topics.get("mine").configs == {"segment.bytes": "20000"}
            assert broker.logs.get_log("early", 0).config.retention_ms == 1234
            assert broker.logs.default_config.retention_ms == 1234
            assert broker.dynamic_configs == {}
            await trio.to_thread.run_sync(
                lambda: cluster.set_broker_configs(ME, {"log.retention.ms": "77"})
            )
            await _until(lambda: broker.dynamic_configs == {"log.retention.ms": "77"})
            assert broker.logs.get_log("mine", 0).config.retention_ms == 77
            nursery.cancel_scope.cancel()

    trio.run(main)
    listener.stop()


def test_registry_keeps_the_newest_configs(broker: Any) -> None:
    cluster = broker.cluster
    cluster.create_topic("t", {0: [ME]})
    broker.topics.load()
    stale = cluster.get_topic("t")  # a read that started before the change below
    zxid = cluster.set_topic_configs("t", {"segment.bytes": "30000"})
    assert broker.topics.apply_config_change("t", {"segment.bytes": "30000"}, zxid)
    assert _segment_bytes(broker, "t") == 30000
    # the stale read lands afterwards: configs and log config stay
    broker.topics._remember(stale)
    broker.topics._open_logs(stale)
    assert broker.topics.get("t").configs == {"segment.bytes": "30000"}
    assert _segment_bytes(broker, "t") == 30000
    assert not broker.topics.apply_config_change("t", {}, zxid - 1)
    assert not broker.topics.apply_config_change("t", {}, -1)  # znode gone: being deleted
    assert broker.topics.get("t").configs == {"segment.bytes": "30000"}


def test_configs_of_a_topic_not_known_yet_wait_for_it(broker: Any) -> None:
    cluster = broker.cluster
    cluster.create_topic("late", {0: [ME]})
    first_read = cluster.get_topic("late")  # the replica manager's read, still in flight
    zxid = cluster.set_topic_configs("late", {"retention.ms": "42"})
    assert not broker.topics.apply_config_change("late", {"retention.ms": "42"}, zxid)
    broker.topics._remember(first_read)
    broker.topics._open_logs(first_read)
    assert broker.topics.get("late").configs == {"retention.ms": "42"}
    assert broker.logs.get_log("late", 0).config.retention_ms == 42


def test_broker_configs_apply_to_their_broker_and_keep_the_newest(broker: Any) -> None:
    assert apply_broker_configs(broker, "<default>", {"log.retention.ms": "10"}, 5)
    assert not apply_broker_configs(broker, "<default>", {"log.retention.ms": "9"}, 4)
    assert broker.dynamic_default_configs == {"log.retention.ms": "10"}
    assert not apply_broker_configs(broker, str(ME + 1), {"log.retention.ms": "1"}, 6)
    assert apply_broker_configs(broker, str(ME), {"log.retention.ms": "1"}, 6)
    assert broker.dynamic_configs == {"log.retention.ms": "1"}
    listener = ConfigChangeListener(broker)
    # a user's client quota reaches the broker's quota enforcement
    assert listener.apply(ConfigChange("users", "alice", {"producer_byte_rate": "1"}, 7))
    assert broker.client_quotas.produce.quota_for("alice", "any-client") == 1.0
    assert not listener.apply(ConfigChange("nonsense", "x", {}, 8))
    assert listener.apply(ConfigChange("brokers", "<default>", {}, 9))
    assert broker.dynamic_default_configs == {} and listener.applied == 2
    # a user's SCRAM credential reaches the broker's credential cache (name sanitized in paths)
    cred = ScramCredential.from_password(MECHANISMS["SCRAM-SHA-256"], "pw")
    assert listener.apply(ConfigChange("users", "a%40b", {"SCRAM-SHA-256": cred.to_config()}, 10))
    assert broker.scram_credentials.get("SCRAM-SHA-256", "a@b") == cred
    assert listener.apply(ConfigChange("users", "a%40b", {}, 11))  # deleted
    assert broker.scram_credentials.get("SCRAM-SHA-256", "a@b") is None
