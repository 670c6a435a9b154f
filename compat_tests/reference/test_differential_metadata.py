"""Differential sessions of what a broker says about itself and its topics: Metadata of named
topics (partitions, leaders, epochs, replicas, ISR, authorized operations) and of all topics,
DescribeConfigs of the broker for a fixed set of common keys (values, types, sources, read-only
and sensitive flags, synonyms), the configs CreateTopics returns, and Fetch size limits (a
partition limit below the first batch, a response limit across partitions). Each runs against
Apache Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import (
    create_topic,
    entity_obs,
    produce_ok,
    raw,
)
from kafkapy.protocol.batch_header import BATCH_HEADER_SIZE, parse_batch_header

BROKER_RESOURCE = 4
# broker configs both brokers have and a user commonly asks about; paths (log.dirs) and
# listeners are left out, they differ by construction
BROKER_KEYS = (
    "auto.create.topics.enable", "num.partitions", "default.replication.factor",
    "message.max.bytes", "log.retention.hours", "log.retention.ms", "log.retention.bytes",
    "log.segment.bytes", "log.roll.hours", "log.cleanup.policy", "compression.type",
    "min.insync.replicas", "offsets.topic.replication.factor", "offsets.topic.num.partitions",
    "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
    "group.initial.rebalance.delay.ms", "group.min.session.timeout.ms",
    "group.max.session.timeout.ms", "delete.topic.enable", "unclean.leader.election.enable",
    "log.message.timestamp.type", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "replica.fetch.max.bytes", "socket.request.max.bytes",
    "num.io.threads", "num.network.threads", "broker.id", "node.id", "log.flush.interval.ms",
    "log.cleaner.enable", "max.connections", "transactional.id.expiration.ms",
    "producer.id.expiration.ms", "offsets.retention.minutes", "no.such.broker.config",
)

CLUSTER_KEYS = ("min.insync.replicas", "num.partitions", "log.retention.ms")


def _metadata(target: Target, names: tuple[str, ...] | None, ops: bool) -> Any:
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    with raw(target) as client:
        return client.request(MetadataRequest(
            topics=None if names is None else tuple(
                MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=n) for n in names),
            allow_auto_topic_creation=False, include_topic_authorized_operations=ops))


def metadata(target: Target) -> dict[str, Any]:
    create_topic(target, "diff-meta-three", partitions=3)
    create_topic(target, "diff-meta-compacted", configs={"cleanup.policy": "compact"})
    named = _metadata(target, ("diff-meta-three", "diff-meta-compacted", "diff-meta-missing"),
                      True)
    out: dict[str, Any] = {
        "controller_id": named.controller_id,
        "brokers": entity_obs(named.brokers),
        "named": {t.name: entity_obs(t, drop={"name"}) for t in named.topics},
    }
    everything = _metadata(target, None, False)
    out["all_topics_listed"] = sorted(t.name for t in everything.topics
                                      if t.name.startswith("diff-meta"))
    out["all_topics_ops_not_asked"] = sorted({t.topic_authorized_operations
                                              for t in everything.topics})
    return out


def test_metadata(differential: Differential) -> None:
    outcome = differential.check("metadata", metadata)
    assert outcome.observations > 40


def describe_broker_configs(target: Target) -> dict[str, Any]:
    from kio.schema.describe_configs.v4.request import (
        DescribeConfigsRequest,
        DescribeConfigsResource,
    )

    out: dict[str, Any] = {}
    with raw(target) as client:
        # "" names the cluster-wide defaults: a few keys tell how a broker reads it
        for name, resource, keys in (("by_id", str(target.node_id), BROKER_KEYS),
                                     ("empty_name", "", CLUSTER_KEYS),
                                     ("other_id", "7", BROKER_KEYS)):
            resp = client.request(DescribeConfigsRequest(
                resources=(DescribeConfigsResource(resource_type=BROKER_RESOURCE,
                                                   resource_name=resource,
                                                   configuration_keys=keys),),
                include_synonyms=True, include_documentation=False))
            result = resp.results[0]
            out[name] = {
                "error_code": result.error_code.name, "error_message": result.error_message,
                "configs": {c.name: {"value": c.value, "type": int(c.config_type),
                                     "source": int(c.config_source), "read_only": c.read_only,
                                     "sensitive": c.is_sensitive,
                                     "synonyms": [f"{s.name}={s.value}@{int(s.source)}"
                                                  for s in c.synonyms]}
                            for c in result.configs}}
    return out


def test_describe_broker_configs(differential: Differential) -> None:
    outcome = differential.check("describe_broker_configs", describe_broker_configs)
    assert outcome.observations > 150


def create_topic_configs(target: Target) -> dict[str, Any]:
    """The configs CreateTopics returns with the created topic (v5+)."""
    from kio.schema.create_topics.v7.request import (
        CreatableTopic,
        CreatableTopicConfig,
        CreateTopicsRequest,
    )

    with raw(target) as client:
        resp = client.request(CreateTopicsRequest(
            topics=(CreatableTopic(
                name="diff-create-configs", num_partitions=2, replication_factor=1,
                assignments=(), configs=(CreatableTopicConfig(name="retention.ms",
                                                              value="100000"),)),),
            timeout=datetime.timedelta(seconds=30), validate_only=True))
    topic = resp.topics[0]
    return {"error_code": topic.error_code.name, "num_partitions": topic.num_partitions,
            "replication_factor": topic.replication_factor,
            "configs": {c.name: {"value": c.value, "source": int(c.config_source),
                                 "read_only": c.read_only, "sensitive": c.is_sensitive}
                        for c in topic.configs}}


def test_create_topic_configs(differential: Differential) -> None:
    outcome = differential.check("create_topic_configs", create_topic_configs)
    assert outcome.observations > 100


def _batches(records: bytes) -> dict[str, Any]:
    """The base offsets of the whole batches, and whether a truncated one follows them."""
    offsets, pos = [], 0
    while pos + BATCH_HEADER_SIZE <= len(records):
        header = parse_batch_header(records, pos)
        if pos + header.size > len(records):
            break
        offsets.append(header.base_offset)
        pos += header.size
    return {"batches": offsets, "partial_tail": pos != len(records)}


def fetch_limits(target: Target) -> dict[str, Any]:
    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic

    topic = "diff-fetch-limits"
    create_topic(target, topic, partitions=2)
    base = int(time.time() * 1000)
    for partition in (0, 1):
        for i in range(3):  # three batches of about 1 KiB on each partition
            produce_ok(target, topic, [(base, b"%d" % i * 1000)], partition=partition)
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, (max_bytes, partition_max) in {"partition_limit_below_batch": (1 << 20, 100),
                                                 "partition_limit_two_batches": (1 << 20, 2200),
                                                 "response_limit_below_batch": (100, 1 << 20),
                                                 "response_limit_two_batches": (2200, 1 << 20),
                                                 }.items():
            resp = client.request(FetchRequest(
                replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
                max_bytes=max_bytes, isolation_level=0, session_id=0, session_epoch=-1,
                topics=(FetchTopic(topic=topic, partitions=tuple(FetchPartition(
                    partition=p, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                    log_start_offset=-1, partition_max_bytes=partition_max) for p in (0, 1))),),
                forgotten_topics_data=(), rack_id=""))
            out[name] = {p.partition_index: {"error_code": p.error_code.name,
                                             **_batches(p.records or b"")}
                         for p in resp.responses[0].partitions}
    return out


def test_fetch_limits(differential: Differential) -> None:
    outcome = differential.check("fetch_limits", fetch_limits)
    assert outcome.observations >= 12


GROUP_RESOURCE = 32


def group_configs(target: Target) -> dict[str, Any]:
    """GROUP config resources (KIP-848's group configs): DescribeConfigs of a group, and an
    IncrementalAlterConfigs of a valid and an out-of-range session timeout (validate only)."""
    from kio.schema.describe_configs.v4.request import (
        DescribeConfigsRequest,
        DescribeConfigsResource,
    )
    from kio.schema.incremental_alter_configs.v1.request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    out: dict[str, Any] = {}
    with raw(target) as client:
        resp = client.request(DescribeConfigsRequest(
            resources=(DescribeConfigsResource(resource_type=GROUP_RESOURCE,
                                               resource_name="diff-group-configs",
                                               configuration_keys=None),),
            include_synonyms=False, include_documentation=False))
        result = resp.results[0]
        out["describe"] = {"error_code": result.error_code.name,
                           "error_message": result.error_message,
                           "config_names": ",".join(sorted(c.name for c in result.configs))}
        for name, value in (("valid", "45000"), ("out_of_range", "1")):
            alter = client.request(IncrementalAlterConfigsRequest(
                resources=(AlterConfigsResource(
                    resource_type=GROUP_RESOURCE, resource_name="diff-group-configs",
                    configs=(AlterableConfig(name="consumer.session.timeout.ms",
                                             config_operation=0, value=value),)),),
                validate_only=True))
            out[f"alter_{name}"] = {"error_code": alter.responses[0].error_code.name,
                                    "error_message": alter.responses[0].error_message}
    return out


def test_group_configs(differential: Differential) -> None:
    outcome = differential.check("group_configs", group_configs)
    assert outcome.observations >= 5
