"""DescribeConfigs (key 32), versions 1-4, as Apache Kafka 4.4 answers it.

What each resource reports comes from server/config/config_descriptions.py: a topic (type 2)
every topic-level config with its effective value, Kafka's source and, with include_synonyms,
its synonyms from most to least specific; a broker (type 4, its id) every broker config 4.4
defines and every other key it was given, with types, read-only flags, synonyms [static, default]
and hidden passwords and custom configs; the cluster-wide defaults (broker resource "") only what
is set there; a group (type 32, server/config/group_configs.py) its 21 group configs, overridden
(GROUP_CONFIG) or from the broker's group.* configs. v3+ adds the config type. Unknown topics get
UNKNOWN_TOPIC_OR_PARTITION, another broker's id or a malformed one INVALID_REQUEST, a group
without a name INVALID_REQUEST "Group name must not be empty", other resource types
INVALID_REQUEST.

Authorization: DESCRIBE_CONFIGS on the cluster for broker resources (CLUSTER_AUTHORIZATION_FAILED),
on the topic (TOPIC_AUTHORIZATION_FAILED) or on the group (GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..config.config_descriptions import Row, broker_rows, cluster_default_rows, topic_rows
from ..config.config_docs import GROUP_CONFIG_DOCS, TOPIC_CONFIG_DOCS
from ..config.group_configs import describe_rows as group_describe_rows
from ..config.log_configs import broker_layers
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE_CONFIGS, config_resource_error

TOPIC, BROKER, GROUP = 2, 4, 32

CONFIG_SOURCES = {
    "UNKNOWN": 0,
    "DYNAMIC_TOPIC_CONFIG": 1,
    "DYNAMIC_BROKER_CONFIG": 2,
    "DYNAMIC_DEFAULT_BROKER_CONFIG": 3,
    "STATIC_BROKER_CONFIG": 4,
    "DEFAULT_CONFIG": 5,
    "GROUP_CONFIG": 8,
}
DENIED_MESSAGES = {
    ErrorCode.topic_authorization_failed: "Topic authorization failed.",
    ErrorCode.cluster_authorization_failed: "Cluster authorization failed.",
    ErrorCode.group_authorization_failed: "Group authorization failed.",
}
CONFIG_TYPES = {
    "BOOLEAN": 1,
    "STRING": 2,
    "INT": 3,
    "SHORT": 4,
    "LONG": 5,
    "DOUBLE": 6,
    "LIST": 7,
    "CLASS": 8,
    "PASSWORD": 9,
}


def topic_config_entries(broker, overrides):
    """(name, value, source, synonyms, type) for every topic config, sorted by name."""
    return [row[:5] for row in topic_rows(broker, overrides)]


def _entries(R, rows, keys, include_synonyms, docs=None):
    """DescribeConfigsResourceResult entries of rows (config_descriptions.Row)."""
    out = []
    for name, value, source, synonyms, type_, read_only, sensitive in rows:
        if keys is not None and name not in keys:
            continue
        syn = (
            tuple(
                build(R.DescribeConfigsSynonym, name=n, value=v, source=CONFIG_SOURCES[s])
                for n, v, s in synonyms
            )
            if include_synonyms
            else ()
        )
        out.append(
            build(
                R.DescribeConfigsResourceResult,
                name=name,
                value=value,
                read_only=read_only,
                config_source=CONFIG_SOURCES[source],
                is_sensitive=sensitive,
                synonyms=syn,
                config_type=CONFIG_TYPES.get(type_ or "", 0),
                documentation=None if docs is None else docs.get(name),
            )
        )
    return tuple(out)


def _rows(broker: Any, resource_type: int, name: str) -> tuple[ErrorCode, str, list[Row]]:
    """The rows of one resource, or the error (code, message) Kafka 4.4 answers."""
    if resource_type == TOPIC:
        info = broker.topics.get(name)
        if info is None:  # Apache Kafka 4.4 says no more than the code
            return ErrorCode.unknown_topic_or_partition, "", []
        return ErrorCode.none, "", topic_rows(broker, info.configs)
    if resource_type == BROKER:
        if name == "":
            return ErrorCode.none, "", cluster_default_rows(broker)
        if name != str(broker.broker_id):
            message = (
                f"Unexpected broker id, expected {broker.broker_id} or empty string, "
                f"but received {name}"
            )
            return ErrorCode.invalid_request, message, []
        return ErrorCode.none, "", broker_rows(broker)
    if resource_type == GROUP:
        if not name:
            return ErrorCode.invalid_request, "Group name must not be empty", []
        overrides = broker.cluster.group_configs(name)
        return ErrorCode.none, "", group_describe_rows(overrides, broker_layers(broker).merged())
    return ErrorCode.invalid_request, f"Unsupported resource type {resource_type}", []


@api("DescribeConfigs")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    results = []
    for res in request.resources:
        keys = set(res.configuration_keys) if res.configuration_keys else None
        # Kafka's result has an empty message unless an error says more
        error, message, configs = ErrorCode.none, "", ()
        denied = config_resource_error(ctx, DESCRIBE_CONFIGS, res.resource_type, res.resource_name)
        if denied is not None:
            error = denied
            message = DENIED_MESSAGES[denied]
        else:
            error, message, rows = _rows(broker, res.resource_type, res.resource_name)
            docs = None
            if getattr(request, "include_documentation", False):
                docs = GROUP_CONFIG_DOCS if res.resource_type == GROUP else TOPIC_CONFIG_DOCS
            configs = _entries(R, rows, keys, request.include_synonyms, docs)
        results.append(
            build(
                R.DescribeConfigsResult,
                error_code=error,
                error_message=message,
                resource_type=res.resource_type,
                resource_name=res.resource_name,
                configs=configs,
            )
        )
    return build(R.DescribeConfigsResponse, throttle_time=THROTTLE_NONE, results=tuple(results))
