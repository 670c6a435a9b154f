"""Applying config changes from AlterConfigs and IncrementalAlterConfigs (shared by both).

Topic resources (type 2): the new override set is validated as a whole (INVALID_CONFIG naming the
key and what is allowed, Kafka's cross-config rules included), stored in /config/topics/<name>
and applied to the topic's open logs at once. Broker resources (type 4): the resource name is
a broker id (/config/brokers/<id>, applied by that broker) or empty for the cluster-wide
default (/config/brokers/<default>, applied by every broker); the new set is checked as Kafka
checks it (server/config/dynamic_broker_configs.py: Kafka's dynamic broker configs, custom ones,
their values; INVALID_REQUEST with Kafka's message, such as "Cannot update these configs
dynamically" for a broker config Kafka does not reconfigure), then stored. Every open log is
reconfigured and the connection limits are updated.

Every write goes with a config change notification (kafkapy.metadata.cluster): the other brokers
apply it through server/config/config_listener.py, and so does this one, idempotently. Configs carry
the mzxid of their znode so that an older read never replaces a newer value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode

from . import dynamic_broker_configs as dynamic_configs
from . import group_configs
from .connection_limit_configs import apply_connection_limits
from .log_configs import (
    TOPIC_CONFIGS,
    apply_log_configs,
    broker_layers,
    validate_topic_configs,
)
from .topic_configs import REMOVED_TOPIC_CONFIGS, warn_not_applied

TOPIC, BROKER, GROUP = 2, 4, 32
DEFAULT_ENTITY = "<default>"
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPS = {SET: "set", DELETE: "delete", APPEND: "append", SUBTRACT: "subtract"}


@dataclass(slots=True)
class ConfigChangeError(Exception):
    code: ErrorCode
    message: str | None  # None: the error code's default message


def current_configs(broker, resource_type: int, name: str) -> dict[str, str]:
    """The stored overrides of a resource (after checking it exists)."""
    if resource_type == TOPIC:
        info = broker.topics.get(name)
        if info is None:  # the wording of Kafka's (KRaft) controller
            raise ConfigChangeError(
                ErrorCode.unknown_topic_or_partition, f"The topic '{name}' does not exist."
            )
        # the 3.x configs 4.0 removed, stored by an older kafkapy, are dropped at the next change
        return {k: v for k, v in info.configs.items() if k not in REMOVED_TOPIC_CONFIGS}
    if resource_type == BROKER:
        return dict(broker.cluster.broker_configs(broker_entity(broker, name)))
    if resource_type == GROUP:
        if not name:
            raise ConfigChangeError(
                ErrorCode.invalid_request, "Default group resources are not allowed."
            )
        return dict(broker.cluster.group_configs(name))
    raise ConfigChangeError(ErrorCode.invalid_request, f"Unsupported resource type {resource_type}")


def broker_entity(broker, name: str) -> str:
    if name == "":
        return DEFAULT_ENTITY
    try:
        int(name)
    except ValueError:
        raise ConfigChangeError(
            ErrorCode.invalid_request, f"Node id must be an integer, but it is: {name}"
        ) from None
    return name


def _list_default(broker, resource_type: int, key: str) -> list[str]:
    if resource_type == TOPIC:
        from .log_configs import effective_topic_config

        value = effective_topic_config(broker_layers(broker), {})[key][0]
    else:
        value = None
    return [x.strip() for x in (value or "").split(",") if x.strip()]


def incremental(broker, resource_type: int, current: dict[str, str], ops) -> dict[str, str]:
    """Apply (name, op, value) operations to ``current``; returns the new override set."""
    new = dict(current)
    seen = set()
    for name, op, value in ops:
        if name in seen:
            raise ConfigChangeError(ErrorCode.invalid_request, "Error due to duplicate config keys")
        seen.add(name)
        if op not in OPS:
            raise ConfigChangeError(ErrorCode.invalid_request, f"Unknown config operation {op}")
        if op == SET:
            if value is None:
                raise ConfigChangeError(
                    ErrorCode.invalid_request, f"Null value not supported for : {name}"
                )
            new[name] = value
        elif op == DELETE:
            new.pop(name, None)
        elif resource_type == GROUP:  # Kafka 4.4 looks a group config's type up among the topics'
            raise ConfigChangeError(
                ErrorCode.invalid_config,
                f"Can't {OPS[op].upper()} to key {name} because its type is not LIST.",
            )
        else:
            d = TOPIC_CONFIGS.get(name) if resource_type == TOPIC else None
            if d is None or d.type != "LIST":
                code = (
                    ErrorCode.invalid_config
                    if resource_type == TOPIC
                    else ErrorCode.invalid_request
                )
                raise ConfigChangeError(
                    code, f"Config value {OPS[op]} is not allowed for config key: {name}"
                )
            items = (
                [x.strip() for x in new[name].split(",") if x.strip()]
                if name in new
                else _list_default(broker, resource_type, name)
            )
            parts = [x.strip() for x in (value or "").split(",") if x.strip()]
            if op == APPEND:
                items += [x for x in parts if x not in items]
            else:
                items = [x for x in items if x not in parts]
            new[name] = ",".join(items)
    return new


def apply(
    broker, resource_type: int, name: str, new: Mapping[str, str | None], validate_only: bool
) -> None:
    """Validate the resource's complete new override set and, unless ``validate_only``, store
    and apply it."""
    if any(v is None for v in new.values()):
        key = next(k for k, v in new.items() if v is None)
        raise ConfigChangeError(ErrorCode.invalid_request, f"Null value not supported for : {key}")
    configs = {k: str(v) for k, v in new.items()}
    if resource_type == TOPIC:
        if broker.topics.get(name) is None:
            raise ConfigChangeError(
                ErrorCode.unknown_topic_or_partition, f"The topic '{name}' does not exist."
            )
        msg = validate_topic_configs(configs)
        if msg is not None:
            raise ConfigChangeError(ErrorCode.invalid_config, msg)
        if not validate_only:
            broker.topics.set_configs(name, configs)
            warn_not_applied(name, configs)
        return
    if resource_type == BROKER:
        entity = broker_entity(broker, name)
        per_broker = entity != DEFAULT_ENTITY
        try:
            dynamic_configs.validate(broker_layers(broker), configs, per_broker)
            if not validate_only:
                dynamic_configs.refuse_passwords(configs, per_broker, name)
        except dynamic_configs.DynamicConfigError as e:
            raise ConfigChangeError(ErrorCode[e.code], str(e)) from None
        if validate_only:
            return
        before = broker.cluster.broker_configs(entity)
        zxid = broker.cluster.set_broker_configs(entity, configs)
        apply_broker_configs(broker, entity, configs, zxid)
        dynamic_configs.warn_not_applied(entity, configs, before)
        return
    if resource_type == GROUP:
        try:
            group_configs.validate(configs, broker_layers(broker).merged())
        except group_configs.GroupConfigError as e:
            raise ConfigChangeError(ErrorCode.invalid_config, str(e)) from None
        if not validate_only:
            zxid = broker.cluster.set_group_configs(name, configs)
            apply_group_configs(broker, name, configs, zxid)
        return
    raise ConfigChangeError(ErrorCode.invalid_request, f"Unsupported resource type {resource_type}")


def apply_broker_configs(broker, entity: str, configs: Mapping[str, str], zxid: int) -> bool:
    """Take the dynamic configs of a broker entity (``<default>``, or this broker's id; other
    brokers' are theirs to apply) and reconfigure every open log, unless this broker holds a
    newer version (``zxid``: the config znode's mzxid, as written or as read after a change
    notification). Returns whether they were taken."""
    if entity == DEFAULT_ENTITY:
        attr = "dynamic_default_configs"
    elif entity == str(broker.broker_id):
        attr = "dynamic_configs"
    else:
        return False
    zxids = broker.dynamic_config_zxids
    if zxid < zxids.get(entity, -1):
        return False
    zxids[entity] = zxid
    setattr(broker, attr, dict(configs))
    apply_log_configs(broker)
    apply_connection_limits(broker)
    return True


def apply_group_configs(broker, group: str, configs: Mapping[str, str], zxid: int) -> bool:
    """Hand a group's config overrides to the group coordinator (session timeout and heartbeat
    interval of its KIP-848 members), unless this broker holds a newer version."""
    zxids = broker.dynamic_config_zxids
    key = f"groups/{group}"
    if zxid < zxids.get(key, -1):
        return False
    zxids[key] = zxid
    groups = getattr(broker, "groups", None)
    if groups is not None:
        settings = group_configs.session_settings(configs)
        overrides = groups.coordinator.config.group_overrides
        if settings:
            overrides[group] = settings
        else:
            overrides.pop(group, None)
    return True


def duplicate_resources(resources) -> set[tuple[int, str]]:
    seen: dict[tuple[int, str], int] = {}
    for r in resources:
        k = (r.resource_type, r.resource_name)
        seen[k] = seen.get(k, 0) + 1
    return {k for k, n in seen.items() if n > 1}


def refuse_duplicate(resource, duplicates: set[tuple[int, str]]) -> None:
    """INVALID_REQUEST for a resource named more than once in one request, as Kafka answers."""
    if (resource.resource_type, resource.resource_name) in duplicates:
        raise ConfigChangeError(
            ErrorCode.invalid_request, "Error due to duplicate resources in the request"
        )
