"""Config changes reach every broker of a three-broker ZooKeeper cluster, not only the one that
received the request: topic configs (segment.bytes, retention.ms, cleanup.policy), the dynamic
cluster default (brokers/<default>) and one broker's dynamic configs (brokers/<id>, written the
way Kafka's own ZooKeeper tooling writes it, with a version 1 notification for a topic too).
Configs given at creation reach the brokers that open the topic's logs later.

DescribeConfigs is sent to each broker in turn, and it answers from the broker's memory; the
effects are checked in the log directories: segments rolled at the new size on the leader and
both followers, old segments deleted by retention on a leader that never saw the request,
null keys refused by the leader of a topic made compact elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Producer
from kio.schema.describe_configs.v4 import request as dc
from kio.schema.incremental_alter_configs.v1 import request as iac

from kafkapy.testing.cluster import BROKERS, Cluster, wait_for

from .rawclient import RawClient

TOPIC, BROKER = 2, 4
SET, DELETE = 0, 1
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT = 1, 2, 3

# the module's cluster (compat_tests/conftest.py): three brokers on their own ZooKeeper, checking
# retention every half second
pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.kafka_cluster(overrides={"log.retention.check.interval.ms": "500"}),
]


def alter(cluster: Cluster, via: int, rtype: int, name: str, ops) -> None:
    """IncrementalAlterConfigs sent to broker ``via`` only."""
    request = iac.IncrementalAlterConfigsRequest(
        resources=(
            iac.AlterConfigsResource(
                resource_type=rtype,
                resource_name=name,
                configs=tuple(
                    iac.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops
                ),
            ),
        ),
        validate_only=False,
    )
    with RawClient(cluster.brokers[via].bootstrap, timeout=30) as rc:
        resp = rc.request(request)
    assert int(resp.responses[0].error_code) == 0, resp


def describe(cluster: Cluster, broker: int, rtype: int, name: str) -> dict[str, tuple]:
    """DescribeConfigs answered by ``broker``: name -> (value, source)."""
    request = dc.DescribeConfigsRequest(
        resources=(
            dc.DescribeConfigsResource(
                resource_type=rtype, resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=False,
        include_documentation=False,
    )
    with RawClient(cluster.brokers[broker].bootstrap, timeout=30) as rc:
        result = rc.request(request).results[0]
    assert int(result.error_code) == 0, result
    return {c.name: (c.value, int(c.config_source)) for c in result.configs}


def everywhere_describes(cluster: Cluster, rtype: int, name: str, key: str, want) -> None:
    for b in BROKERS:
        res = name if rtype == TOPIC or name else str(b)
        wait_for(
            lambda b=b, res=res: describe(cluster, b, rtype, res).get(key) == want,
            what=f"broker {b} describing {key}={want}",
        )


def segments(cluster: Cluster, broker: int, topic: str) -> list[int]:
    """Base offsets of the partition-0 segments on ``broker``."""
    d = Path(cluster.brokers[broker].data_dir) / "logs" / f"{topic}-0"
    return sorted(int(f.stem) for f in d.glob("*.log"))


def produce(cluster: Cluster, topic: str, count: int, key: bytes | None = b"k") -> list:
    """``count`` records of 400 bytes, one batch each; returns the delivery errors."""
    p = Producer({
        "bootstrap.servers": cluster.bootstrap,
        "linger.ms": 0,
        "batch.num.messages": 1,
        "acks": "all",
    })
    errors: list = []
    for _ in range(count):
        p.produce(topic, key=key, value=b"v" * 400, on_delivery=lambda e, m: errors.append(e))
    assert p.flush(30) == 0
    return errors


def not_leader(cluster: Cluster, topic: str) -> list[int]:
    leader = cluster.state(topic, 0)["leader"]
    return [b for b in BROKERS if b != leader]


def test_topic_configs_take_effect_on_every_replica(cluster):
    topic = "prop-segments"
    cluster.create_topic(topic, partitions=1)
    leader = cluster.state(topic, 0)["leader"]
    first, second = not_leader(cluster, topic)
    alter(cluster, first, TOPIC, topic, [("segment.bytes", SET, "4096")])
    everywhere_describes(cluster, TOPIC, topic, "segment.bytes", ("4096", DYNAMIC_TOPIC))
    assert produce(cluster, topic, 60) == [None] * 60
    wait_for(lambda: cluster.converged(topic, 1), what="replicas converged")
    for b in BROKERS:  # leader and both followers rolled at the new size
        assert len(segments(cluster, b, topic)) >= 5, (b, segments(cluster, b, topic))
    # retention changed through the other follower: the leader deletes its old segments
    alter(cluster, second, TOPIC, topic, [("retention.ms", SET, "1000")])
    everywhere_describes(cluster, TOPIC, topic, "retention.ms", ("1000", DYNAMIC_TOPIC))
    wait_for(lambda: segments(cluster, leader, topic)[0] > 0, what="retention on the leader")
    wait_for(
        lambda: all(segments(cluster, b, topic)[0] > 0 for b in BROKERS),
        what="retention on every replica",
    )


def test_cleanup_policy_reaches_the_leader(cluster):
    topic = "prop-compact"
    cluster.create_topic(topic, partitions=1)
    leader = cluster.state(topic, 0)["leader"]
    assert produce(cluster, topic, 1, key=None) == [None]
    alter(cluster, not_leader(cluster, topic)[0], TOPIC, topic,
          [("cleanup.policy", SET, "compact")])
    wait_for(
        lambda: describe(cluster, leader, TOPIC, topic)["cleanup.policy"]
        == ("compact", DYNAMIC_TOPIC),
        what="the leader describing cleanup.policy=compact",
    )
    errors = produce(cluster, topic, 1, key=None)
    assert errors[0] is not None and errors[0].name() == "INVALID_RECORD"
    assert produce(cluster, topic, 1) == [None]


def test_dynamic_default_broker_config_reaches_every_broker(cluster):
    topic = "prop-default"
    cluster.create_topic(topic, partitions=1, **{"segment.bytes": "4096"})
    leader = cluster.state(topic, 0)["leader"]
    via = not_leader(cluster, topic)[0]
    assert produce(cluster, topic, 40) == [None] * 40
    wait_for(lambda: cluster.converged(topic, 1), what="replicas converged")
    for b in BROKERS:  # the brokers that did not create the topic read its configs too
        assert len(segments(cluster, b, topic)) >= 3, (b, segments(cluster, b, topic))
    assert segments(cluster, leader, topic)[0] == 0
    alter(cluster, via, BROKER, "", [("log.retention.ms", SET, "1000")])
    try:
        everywhere_describes(cluster, BROKER, "", "log.retention.ms", ("1000", DYNAMIC_DEFAULT))
        everywhere_describes(cluster, TOPIC, topic, "retention.ms", ("1000", DYNAMIC_DEFAULT))
        wait_for(lambda: segments(cluster, leader, topic)[0] > 0, what="retention on the leader")
    finally:
        alter(cluster, via, BROKER, "", [("log.retention.ms", DELETE, None)])
    for b in BROKERS:
        wait_for(
            lambda b=b: describe(cluster, b, TOPIC, topic)["retention.ms"][1] != DYNAMIC_DEFAULT,
            what=f"broker {b} dropping the default",
        )


def test_configs_written_by_kafka_tooling_in_zookeeper(cluster):
    """AdminZkClient's way: the config znode first, then the notification (no transaction)."""
    zk, root = cluster.zk, "/kafkapy"
    target = 2
    zk.ensure_path(f"{root}/config/brokers")
    doc = json.dumps({"version": 1, "config": {"log.retention.ms": "5000000"}}).encode()
    if zk.exists(f"{root}/config/brokers/{target}"):
        zk.set(f"{root}/config/brokers/{target}", doc)
    else:
        zk.create(f"{root}/config/brokers/{target}", doc)
    zk.create(
        f"{root}/config/changes/config_change_",
        json.dumps({"version": 2, "entity_path": f"brokers/{target}"}).encode(),
        sequence=True,
    )
    wait_for(
        lambda: describe(cluster, target, BROKER, str(target)).get("log.retention.ms")
        == ("5000000", DYNAMIC_BROKER),
        what="the named broker applying its configs",
    )
    for b in BROKERS:
        if b != target:  # not theirs
            assert describe(cluster, b, BROKER, str(b)).get("log.retention.ms", (None, 0))[1] != (
                DYNAMIC_BROKER
            )
    # a topic through a version 1 notification
    topic = "prop-tooling"
    cluster.create_topic(topic, partitions=1)
    doc = json.dumps({"version": 1, "config": {"max.message.bytes": "12345"}}).encode()
    zk.set(f"{root}/config/topics/{topic}", doc)
    zk.create(
        f"{root}/config/changes/config_change_",
        json.dumps({"version": 1, "entity_type": "topics", "entity_name": topic}).encode(),
        sequence=True,
    )
    everywhere_describes(cluster, TOPIC, topic, "max.message.bytes", ("12345", DYNAMIC_TOPIC))
    zk.set(f"{root}/config/brokers/{target}", json.dumps({"version": 1, "config": {}}).encode())
    zk.create(
        f"{root}/config/changes/config_change_",
        json.dumps({"version": 2, "entity_path": f"brokers/{target}"}).encode(),
        sequence=True,
    )
    wait_for(
        lambda: describe(cluster, target, BROKER, str(target)).get("log.retention.ms", (0, 0))[1]
        != DYNAMIC_BROKER,
        what="the named broker dropping its configs",
    )
