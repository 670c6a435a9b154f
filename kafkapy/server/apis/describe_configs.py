"""DescribeConfigs (key 32), versions 1-4.

Topic resources (type 2) report every topic-level config with its effective value, Kafka's source
(topic override, dynamic broker config, dynamic cluster default, static broker config, default),
and with include_synonyms the chain of synonyms from most to least specific; v3+ adds the config
type. Broker resources (type 4) report the broker's dynamic configs (DYNAMIC_BROKER_CONFIG,
DYNAMIC_DEFAULT_BROKER_CONFIG), those set in server.properties (STATIC_BROKER_CONFIG) and the
topic-config synonyms' defaults; as Kafka, the value of a password config (``sasl.jaas.config``,
key store passwords) or of a custom config is hidden (null, is_sensitive), and the configs Kafka
does not reconfigure at run time are read-only. Unknown topics get UNKNOWN_TOPIC_OR_PARTITION,
another broker's id or a malformed one INVALID_REQUEST, other resource types INVALID_REQUEST.

Authorization: DESCRIBE_CONFIGS on the cluster for broker resources (CLUSTER_AUTHORIZATION_FAILED)
or on the topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..config import dynamic_broker_configs as dynamic_configs
from ..config.config_docs import TOPIC_CONFIG_DOCS
from ..config.log_configs import (
    CLEANER_CONFIGS,
    TOPIC_CONFIGS,
    broker_layers,
    effective_topic_config,
)
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE_CONFIGS, config_resource_error

TOPIC, BROKER = 2, 4

CONFIG_SOURCES = {
    "UNKNOWN": 0,
    "DYNAMIC_TOPIC_CONFIG": 1,
    "DYNAMIC_BROKER_CONFIG": 2,
    "DYNAMIC_DEFAULT_BROKER_CONFIG": 3,
    "STATIC_BROKER_CONFIG": 4,
    "DEFAULT_CONFIG": 5,
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
    eff = effective_topic_config(broker_layers(broker), overrides)
    return [
        (name, value, source, synonyms, TOPIC_CONFIGS[name].type)
        for name, (value, source, synonyms) in sorted(eff.items())
    ]


def _entries(R, rows, keys, include_synonyms, include_docs=False, broker=False):
    """Topic rows, or with ``broker`` broker rows: a password or custom config's value hidden
    (is_sensitive), configs Kafka does not reconfigure read-only."""
    out = []
    for name, value, source, synonyms, type_ in rows:
        if keys is not None and name not in keys:
            continue
        hidden = broker and dynamic_configs.is_sensitive(name)
        syn = (
            tuple(
                build(
                    R.DescribeConfigsSynonym,
                    name=n,
                    value=None if hidden else v,
                    source=CONFIG_SOURCES[s],
                )
                for n, v, s in synonyms
            )
            if include_synonyms
            else ()
        )
        out.append(
            build(
                R.DescribeConfigsResourceResult,
                name=name,
                value=None if hidden else value,
                read_only=broker and not dynamic_configs.is_dynamic(name),
                config_source=CONFIG_SOURCES[source],
                is_sensitive=hidden,
                synonyms=syn,
                config_type=CONFIG_TYPES.get(type_, 0),
                documentation=TOPIC_CONFIG_DOCS.get(name) if include_docs else None,
            )
        )
    return tuple(out)


def _broker_rows(broker):
    layers = broker_layers(broker)
    defaults = {
        d.synonyms[0]: (d.default, d.type)
        for d in TOPIC_CONFIGS.values()
        if d.synonyms and d.default is not None
    }
    defaults.update({k: (v[2], v[0]) for k, v in CLEANER_CONFIGS.items()})
    rows = []
    keys = set(layers.dynamic) | set(layers.dynamic_default) | set(layers.static)
    for key in keys:
        synonyms = [
            (key, layer[key], source)
            for layer, source in (
                (layers.dynamic, "DYNAMIC_BROKER_CONFIG"),
                (layers.dynamic_default, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
                (layers.static, "STATIC_BROKER_CONFIG"),
            )
            if key in layer
        ]
        if key in defaults:
            synonyms.append((key, defaults[key][0], "DEFAULT_CONFIG"))
        value, source = synonyms[0][1], synonyms[0][2]
        type_ = dynamic_configs.config_type(key) or defaults.get(key, (None, "STRING"))[1]
        rows.append((key, value, source, synonyms, type_))
    for key, (default, type_) in defaults.items():
        if key not in keys:
            rows.append((key, default, "DEFAULT_CONFIG", [(key, default, "DEFAULT_CONFIG")], type_))
    return sorted(rows)


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
            message = (
                "Topic authorization failed."
                if denied == ErrorCode.topic_authorization_failed
                else "Cluster authorization failed."
            )
        elif res.resource_type == TOPIC:
            info = broker.topics.get(res.resource_name)
            if info is None:  # Apache Kafka 4.4 says no more than the code
                error, message = ErrorCode.unknown_topic_or_partition, ""
            else:
                rows = topic_config_entries(broker, info.configs)
                configs = _entries(
                    R,
                    rows,
                    keys,
                    request.include_synonyms,
                    getattr(request, "include_documentation", False),
                )
        elif res.resource_type == BROKER:
            if res.resource_name not in ("", str(broker.broker_id)):
                error, message = (
                    ErrorCode.invalid_request,
                    (
                        f"Unexpected broker id, expected {broker.broker_id} or empty string, "
                        f"but received {res.resource_name}"
                    ),
                )
            else:
                configs = _entries(
                    R, _broker_rows(broker), keys, request.include_synonyms, broker=True
                )
        else:
            error, message = (
                ErrorCode.invalid_request,
                (f"Unsupported resource type {res.resource_type}"),
            )
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
