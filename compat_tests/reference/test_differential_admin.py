"""Differential sessions of topic administration: CreateTopics with valid and invalid names,
counts and configs (raw requests, for the exact error fields), what confluent-kafka's AdminClient
sees when it creates, describes and deletes topics, DescribeConfigs of a topic (names, values,
types, sources, synonyms, read-only and sensitive flags) and IncrementalAlterConfigs of valid,
unknown, removed and invalid keys. Each runs against Apache Kafka 4.4 and kafkapy; differences not
in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import json
import time
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw, wait_for_leaders

TOPIC_RESOURCE = 2


def _create(target: Target, name: str, partitions: int = 1, replication: int = 1,
            configs: dict[str, str] | None = None, validate_only: bool = False) -> Any:
    from kio.schema.create_topics.v7.request import (
        CreatableTopic,
        CreatableTopicConfig,
        CreateTopicsRequest,
    )

    with raw(target) as client:
        resp = client.request(CreateTopicsRequest(
            topics=(CreatableTopic(
                name=name, num_partitions=partitions, replication_factor=replication,
                assignments=(), configs=tuple(CreatableTopicConfig(name=k, value=v)
                                              for k, v in (configs or {}).items())),),
            timeout=datetime.timedelta(seconds=30), validate_only=validate_only))
    result = entity_obs(resp.topics[0], drop={"configs"})
    if len(name) > 40:  # long names in paths and messages, shortened for the reader
        result = json.loads(json.dumps(result).replace(name, f"<{len(name)} x {name[0]}>"))
    return result


def create_topics(target: Target) -> dict[str, Any]:
    cases: dict[str, dict[str, Any]] = {
        "valid": {"name": "diff-create-valid", "partitions": 3,
                  "configs": {"cleanup.policy": "compact", "retention.ms": "60000"}},
        "validate_only": {"name": "diff-create-validate-only", "validate_only": True},
        "exists": {"name": "diff-create-valid"},
        "default_counts": {"name": "diff-create-defaults", "partitions": -1, "replication": -1},
        "name_with_space": {"name": "diff bad name"},
        "name_dot": {"name": "."},
        "name_dotdot": {"name": ".."},
        "name_too_long": {"name": "d" * 250},
        "name_empty": {"name": ""},
        "collides_with_dot_underscore": {"name": "diff_create.valid"},
        "zero_partitions": {"name": "diff-create-zero", "partitions": 0},
        "replication_too_high": {"name": "diff-create-rf", "replication": 3},
        "replication_zero": {"name": "diff-create-rf0", "replication": 0},
        "unknown_config": {"name": "diff-create-unknown-config",
                           "configs": {"no.such.config": "1"}},
        "invalid_config_value": {"name": "diff-create-bad-value",
                                 "configs": {"retention.ms": "soon"}},
        "invalid_enum_value": {"name": "diff-create-bad-enum",
                               "configs": {"cleanup.policy": "shred"}},
        "removed_config": {"name": "diff-create-removed",
                           "configs": {"message.format.version": "2.8"}},
        "internal_topic": {"name": "__consumer_offsets"},
    }
    return {name: _create(target, **case) for name, case in cases.items()}


def test_create_topics(differential: Differential) -> None:
    outcome = differential.check("create_topics", create_topics)
    assert outcome.observations > 18 * 5


def admin_client_topics(target: Target) -> dict[str, Any]:
    """What confluent-kafka's AdminClient observes creating, describing and deleting topics."""
    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    out: dict[str, Any] = {}

    def outcome(futures: dict[str, Any]) -> dict[str, Any]:
        result = {}
        for key, fut in futures.items():
            try:
                fut.result(timeout=30)
                result[str(key)] = "ok"
            except KafkaException as exc:
                result[str(key)] = exc.args[0].name()
        return result

    out["create"] = outcome(admin.create_topics([
        NewTopic("diff-admin-a", 2, 1), NewTopic("diff-admin-b", 1, 1),
        NewTopic("diff admin bad", 1, 1), NewTopic("diff-admin-rf", 1, 4)],
        operation_timeout=30))
    wait_for_leaders(target, "diff-admin-a", 2)
    wait_for_leaders(target, "diff-admin-b", 1)
    out["create_partitions"] = outcome(admin.create_partitions([
        NewPartitions("diff-admin-b", 3), NewPartitions("diff-admin-a", 1),
        NewPartitions("diff-admin-missing", 2)]))
    wait_for_leaders(target, "diff-admin-b", 3)
    described = admin.describe_topics(TopicCollection(["diff-admin-a", "diff-admin-b",
                                                      "diff-admin-missing"]))
    desc: dict[str, Any] = {}
    for name, fut in described.items():
        try:
            d = fut.result(timeout=30)
            desc[name] = {"internal": d.is_internal, "partitions": [
                {"id": p.id, "leader": p.leader.id, "replicas": [r.id for r in p.replicas],
                 "isr": [r.id for r in p.isr]} for p in d.partitions]}
        except KafkaException as exc:
            desc[name] = exc.args[0].name()
    out["describe"] = desc
    out["delete"] = outcome(admin.delete_topics(["diff-admin-a", "diff-admin-missing"],
                                                operation_timeout=30))
    # a deletion reaches the broker's metadata cache after the controller confirms it: wait
    deadline = time.monotonic() + 15
    while True:
        listed = sorted(t for t in admin.list_topics(timeout=30).topics
                        if t.startswith("diff-admin"))
        if "diff-admin-a" not in listed or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    out["listed_after_delete"] = listed
    return out


def test_admin_client_topics(differential: Differential) -> None:
    outcome = differential.check("admin_client_topics", admin_client_topics)
    assert outcome.observations > 15


def delete_topics(target: Target) -> dict[str, Any]:
    import uuid

    from kio.schema.delete_topics.v6.request import DeleteTopicsRequest, DeleteTopicState

    create_topic(target, "diff-delete-me")
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, topic in (("existing", "diff-delete-me"), ("again", "diff-delete-me"),
                            ("unknown", "diff-delete-never"),
                            ("internal", "__consumer_offsets")):
            resp = client.request(DeleteTopicsRequest(
                topics=(DeleteTopicState(name=topic, topic_id=uuid.UUID(int=0)),),
                timeout=datetime.timedelta(seconds=30)))
            out[name] = entity_obs(resp.responses[0])
    return out


def test_delete_topics(differential: Differential) -> None:
    outcome = differential.check("delete_topics", delete_topics)
    assert outcome.observations >= 12


def _describe(target: Target, topic: str) -> Any:
    from kio.schema.describe_configs.v4.request import (
        DescribeConfigsRequest,
        DescribeConfigsResource,
    )

    with raw(target) as client:
        resp = client.request(DescribeConfigsRequest(
            resources=(DescribeConfigsResource(resource_type=TOPIC_RESOURCE, resource_name=topic,
                                               configuration_keys=None),),
            include_synonyms=True, include_documentation=False))
    return resp.results[0]


def _configs(result: Any) -> dict[str, Any]:
    return {c.name: {"value": c.value, "type": int(c.config_type),
                     "source": int(c.config_source), "read_only": c.read_only,
                     "sensitive": c.is_sensitive,
                     "synonyms": [f"{s.name}={s.value}@{int(s.source)}" for s in c.synonyms]}
            for c in result.configs}


def describe_topic_configs(target: Target) -> dict[str, Any]:
    topic = "diff-describe-configs"
    create_topic(target, topic, configs={"retention.ms": "3600000", "cleanup.policy": "compact",
                                         "min.insync.replicas": "1"})
    result = _describe(target, topic)
    out = {"error_code": result.error_code.name, "error_message": result.error_message,
           "configs": _configs(result)}
    missing = _describe(target, "diff-describe-missing")
    out["missing_topic"] = {"error_code": missing.error_code.name,
                            "error_message": missing.error_message,
                            "configs": len(missing.configs)}
    return out


def test_describe_topic_configs(differential: Differential) -> None:
    outcome = differential.check("describe_topic_configs", describe_topic_configs)
    assert outcome.observations > 100


def alter_topic_configs(target: Target) -> dict[str, Any]:
    from kio.schema.incremental_alter_configs.v1.request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    topic = "diff-alter-configs"
    create_topic(target, topic)
    cases = {
        "valid": [("retention.ms", 0, "120000")],
        "valid_delete": [("retention.ms", 1, None)],
        "unknown_key": [("no.such.config", 0, "1")],
        "removed_key": [("message.format.version", 0, "3.0-IV1")],
        "invalid_value": [("retention.ms", 0, "soon")],
        "invalid_enum": [("cleanup.policy", 0, "shred")],
        "append_list": [("cleanup.policy", 2, "compact")],
        "broker_only_key": [("log.retention.ms", 0, "1000")],
        "mixed_valid_invalid": [("segment.ms", 0, "600000"), ("no.such.config", 0, "1")],
        "missing_topic": [("retention.ms", 0, "1000")],
    }
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, ops in cases.items():
            resp = client.request(IncrementalAlterConfigsRequest(
                resources=(AlterConfigsResource(
                    resource_type=TOPIC_RESOURCE,
                    resource_name="diff-alter-missing" if name == "missing_topic" else topic,
                    configs=tuple(AlterableConfig(name=k, config_operation=op, value=v)
                                  for k, op, v in ops)),),
                validate_only=False))
            out[name] = entity_obs(resp.responses[0])
    after = _configs(_describe(target, topic))
    out["after"] = {k: after.get(k, "<absent>")
                    for k in ("retention.ms", "segment.ms", "cleanup.policy",
                              "message.format.version", "no.such.config")}
    return out


def test_alter_topic_configs(differential: Differential) -> None:
    outcome = differential.check("alter_topic_configs", alter_topic_configs)
    assert outcome.observations > 40


def alter_broker_configs(target: Target) -> dict[str, Any]:
    """IncrementalAlterConfigs of broker configs, validate_only (the shared broker does not
    change): a per-broker dynamic config, a cluster-wide default, a read-only one, an unknown
    one, an invalid value, and another broker's id."""
    from kio.schema.incremental_alter_configs.v1.request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    node = str(target.node_id)
    cases = {
        "per_broker_dynamic": (node, "num.io.threads", "4"),
        "cluster_default": ("", "log.retention.ms", "3600000"),
        "per_broker_cluster_only": (node, "log.retention.ms", "3600000"),
        "read_only": (node, "broker.id", "7"),
        "read_only_cluster": ("", "num.partitions", "3"),
        "unknown_key": (node, "no.such.broker.config", "1"),
        "invalid_value": (node, "num.io.threads", "many"),
        "other_broker": ("7", "num.io.threads", "4"),
        "not_a_number_name": ("one", "num.io.threads", "4"),
    }
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, (resource, key, value) in cases.items():
            resp = client.request(IncrementalAlterConfigsRequest(
                resources=(AlterConfigsResource(
                    resource_type=4, resource_name=resource,
                    configs=(AlterableConfig(name=key, config_operation=0, value=value),)),),
                validate_only=True))
            out[name] = entity_obs(resp.responses[0])
    return out


def test_alter_broker_configs(differential: Differential) -> None:
    outcome = differential.check("alter_broker_configs", alter_broker_configs)
    assert outcome.observations >= 36
