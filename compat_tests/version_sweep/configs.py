"""Checks of the config and quota APIs: DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs, AlterClientQuotas, DescribeClientQuotas, ListConfigResources."""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .common import create_topic
from .env import RETENTION_OVERRIDE, SWEEP, Env, ok


def check_describe_configs(env: Env, v: int) -> None:
    spec: dict[str, Any] = {"include_synonyms": True}
    if v >= 3:
        spec["include_documentation"] = False
    resp = env.request(make("DescribeConfigs", v, env, resources=[{"resource_type": 2}], **spec))
    (r,) = resp.results
    assert ok(r.error_code), r
    assert (r.resource_type, r.resource_name) == (2, SWEEP)
    cfg = {c.name: c for c in r.configs}
    assert {"retention.ms", "cleanup.policy", "segment.bytes"} <= set(cfg)
    ret = cfg["retention.ms"]
    assert (ret.value, ret.config_source, ret.is_sensitive) == (RETENTION_OVERRIDE, 1, False)
    assert (
        ret.synonyms and ret.synonyms[0].source == 1 and ret.synonyms[0].value == RETENTION_OVERRIDE
    )
    assert cfg["cleanup.policy"].value == "delete"
    assert cfg["cleanup.policy"].config_source in (4, 5)
    if v >= 3:
        assert ret.config_type == 5  # LONG
    # Only the keys asked for; a broker resource; an unknown topic.
    resp = env.request(
        make(
            "DescribeConfigs",
            v,
            env,
            resources=[
                {"resource_type": 2, "configuration_keys": ("retention.ms",)},
                {"resource_type": 4, "resource_name": str(env.node_id), "configuration_keys": None},
                {"resource_type": 2, "resource_name": "sweep-absent", "configuration_keys": None},
            ],
            **spec,
        )
    )
    topic_r, broker_r, absent_r = resp.results
    assert ok(topic_r.error_code) and [c.name for c in topic_r.configs] == ["retention.ms"]
    assert ok(broker_r.error_code) and broker_r.configs, broker_r
    assert absent_r.error_code == E.unknown_topic_or_partition
    # Without include_synonyms there are none.
    spec["include_synonyms"] = False
    resp = env.request(make("DescribeConfigs", v, env, resources=[{"resource_type": 2}], **spec))
    assert resp.results[0].configs and all(c.synonyms == () for c in resp.results[0].configs)
    if v >= 3:  # include_documentation: Kafka answers each topic config's documentation
        spec["include_documentation"] = True
        resp = env.request(
            make(
                "DescribeConfigs",
                v,
                env,
                resources=[{"resource_type": 2, "configuration_keys": ("retention.ms",)}],
                **spec,
            )
        )
        (c,) = resp.results[0].configs
        assert c.documentation, c


def _alter_results(resp):
    return [
        (r.resource_type, r.resource_name, r.error_code, r.error_message) for r in resp.responses
    ]


def _retention_of(env: Env, name: str) -> str:
    resp = env.request(
        make(
            "DescribeConfigs",
            1,
            env,
            resources=[
                {"resource_type": 2, "resource_name": name, "configuration_keys": ("retention.ms",)}
            ],
        )
    )
    return resp.results[0].configs[0].value


def check_alter_configs(env: Env, v: int) -> None:
    name = f"sweep-ac-v{v}"
    create_topic(env, name)

    def alter(resources, validate_only=False):
        request = make("AlterConfigs", v, env, resources=resources, validate_only=validate_only)
        return _alter_results(env.request(request))

    def topic(value, key="retention.ms", topic_name=name):
        return {
            "resource_type": 2,
            "resource_name": topic_name,
            "configs": [{"name": key, "value": value}],
        }

    # validate_only changes nothing; a real alter replaces the overrides.
    ((_, _, code, _),) = alter([topic("1234")], validate_only=True)
    assert ok(code) and _retention_of(env, name) == "604800000"
    ((_, rname, code, msg),) = alter([topic("1234")])
    assert ok(code) and rname == name and msg is None and _retention_of(env, name) == "1234"
    ((_, _, code, msg),) = alter([topic("-5")])
    assert code == E.invalid_config and "retention.ms" in msg
    ((_, _, code, _),) = alter([topic("1", topic_name="sweep-absent")])
    assert code == E.unknown_topic_or_partition
    broker_res = {
        "resource_type": 4,
        "resource_name": str(env.node_id),
        "configs": [{"name": "num.partitions", "value": "3"}],
    }
    ((_, _, code, _),) = alter([broker_res], validate_only=True)
    assert code == E.invalid_request


def check_incremental_alter_configs(env: Env, v: int) -> None:
    name = f"sweep-iac-v{v}"
    create_topic(env, name)

    def alter(configs, validate_only=False, topic_name=name):
        res = {"resource_type": 2, "resource_name": topic_name, "configs": configs}
        return _alter_results(
            env.request(
                make(
                    "IncrementalAlterConfigs", v, env, resources=[res], validate_only=validate_only
                )
            )
        )

    ((_, _, code, _),) = alter([{"name": "retention.ms", "config_operation": 0, "value": "99"}])
    assert ok(code) and _retention_of(env, name) == "99"
    ((_, _, code, _),) = alter([{"name": "retention.ms", "config_operation": 1, "value": None}])
    assert ok(code) and _retention_of(env, name) == "604800000"
    ((_, _, code, msg),) = alter(
        [{"name": "segment.bytes", "config_operation": 0, "value": "1"}], validate_only=True
    )
    assert code == E.invalid_config and "segment.bytes" in msg
    ((_, _, code, _),) = alter(
        [{"name": "retention.ms", "config_operation": 0, "value": "1"}], topic_name="sweep-absent"
    )
    assert code == E.unknown_topic_or_partition


def _quota_entity(v: int) -> list[dict[str, Any]]:
    return [{"entity_type": "user", "entity_name": f"sweep-user-{v}"}]


def check_alter_client_quotas(env: Env, v: int) -> None:
    ops = [
        {"key": "producer_byte_rate", "value": 1024.0, "remove": False},
        {"key": "request_percentage", "value": 12.5, "remove": False},
    ]
    resp = env.request(
        make(
            "AlterClientQuotas",
            v,
            env,
            validate_only=False,
            entries=[
                {"entity": _quota_entity(v), "ops": ops},
                {
                    "entity": _quota_entity(v),
                    "ops": [{"key": "bogus", "value": 1.0, "remove": False}],
                },
                {
                    "entity": [{"entity_type": "ip", "entity_name": "not-an-ip"}],
                    "ops": [{"key": "connection_creation_rate", "value": 1.0, "remove": False}],
                },
            ],
        )
    )
    assert [e.error_code for e in resp.entries] == [0, E.invalid_request, E.invalid_request], resp
    assert [(x.entity_type, x.entity_name) for x in resp.entries[0].entity] == [
        ("user", f"sweep-user-{v}")
    ]
    assert _described_quotas(env, 1, f"sweep-user-{v}") == {
        "producer_byte_rate": 1024.0,
        "request_percentage": 12.5,
    }


def _described_quotas(env: Env, v: int, user: str) -> dict[str, float] | None:
    resp = env.request(
        make(
            "DescribeClientQuotas",
            v,
            env,
            strict=True,
            components=[{"entity_type": "user", "match_type": 0, "match": user}],
        )
    )
    assert ok(resp.error_code), resp
    if not resp.entries:
        return None
    (entry,) = resp.entries
    assert [(x.entity_type, x.entity_name) for x in entry.entity] == [("user", user)]
    return {x.key: x.value for x in entry.values}


def check_describe_client_quotas(env: Env, v: int) -> None:
    user = f"sweep-quota-{v}"
    resp = env.request(
        make(
            "AlterClientQuotas",
            1,
            env,
            validate_only=False,
            entries=[
                {
                    "entity": [{"entity_type": "user", "entity_name": user}],
                    "ops": [{"key": "consumer_byte_rate", "value": 2048.0, "remove": False}],
                }
            ],
        )
    )
    assert ok(resp.entries[0].error_code), resp
    assert _described_quotas(env, v, user) == {"consumer_byte_rate": 2048.0}
    assert _described_quotas(env, v, user + "-none") is None
    resp = env.request(
        make(
            "DescribeClientQuotas",
            v,
            env,
            strict=False,
            components=[{"entity_type": "group", "match_type": 2, "match": None}],
        )
    )
    assert resp.error_code == E.unsupported_version and resp.entries is None, resp


def check_list_config_resources(env: Env, v: int) -> None:
    if v == 0:  # ListClientMetricsResources: kafkapy has no client metrics resources
        resp = env.request(make("ListConfigResources", v, env))
        assert ok(resp.error_code) and resp.config_resources == (), resp
        return
    resp = env.request(make("ListConfigResources", v, env, resource_types=()))
    assert ok(resp.error_code), resp
    listed = {(r.resource_type, r.resource_name) for r in resp.config_resources}
    assert {(2, SWEEP), (4, str(env.node_id)), (8, str(env.node_id))} <= listed, listed
    resp = env.request(make("ListConfigResources", v, env, resource_types=(7,)))
    assert resp.error_code == E.unsupported_version, resp
