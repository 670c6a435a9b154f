"""Config change notifications applied on every broker (Kafka's DynamicConfigManager).

A config write made through any broker (AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas)
stores the entity's znode and a sequential notification under /config/changes
(kafkapy.metadata.config_notifications). :class:`ConfigChangeListener` is a ChangeListener
(server/config/change_listener.py: watch, poll in a worker thread, apply on the trio thread, every
notification at startup) that applies each changed entity:

* ``topics/<name>``: the topic's overrides replace the cached ones (what DescribeConfigs, the
  replica manager and the produce path read) and every open log of the topic is reconfigured
  (segment.bytes, retention.ms, cleanup.policy, ... take effect at once, on leaders and followers);
* ``brokers/<default>``: the cluster-wide dynamic defaults, on every broker; ``brokers/<id>``: that
  broker's dynamic configs, on that broker only; either reconfigures every open log;
* ``groups/<group>``: the group's configs (KIP-848 group configs), handed to the group
  coordinator (session timeout and heartbeat interval of the group's members);
* ``users/<user>``: the user's SCRAM credentials replace those in the broker's credential cache
  (server/security/scram_cache.py), so SASL/SCRAM logins on every broker use the new password at
  once;
* ``users/..``, ``clients/..``, ``ips/..``: client quotas, handed to the broker's quota
  enforcement (server/quota_enforcement.py), so new limits apply on every broker at once.

Each value carries its znode's mzxid, so a read older than what the broker already holds (for
example its own write, applied when it was made) is ignored. Every poll also purges notifications
older than 15 minutes. The embedded single-broker store gets the same treatment: it only ever
re-applies its own writes, and its notifications are purged the same way.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafkapy.metadata.client_quotas import DEFAULT as DEFAULT_ENTITY
from kafkapy.metadata.client_quotas import desanitize
from kafkapy.metadata.config_notifications import ConfigChange, ConfigChangeFeed

from .change_listener import ChangeListener
from .config_changes import apply_broker_configs, apply_group_configs

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.config_changes")

QUOTA_ENTITY_TYPES = ("users", "clients", "ips")


class ConfigChangeListener(ChangeListener):
    """Watches /config/changes and applies what the notifications name (see the module doc)."""

    def __init__(self, broker: Broker) -> None:
        super().__init__(broker.store, [ConfigChangeFeed(broker.store)])
        self.broker = broker

    def describe(self, item: ConfigChange) -> str:
        return item.entity_path

    # -- applying (trio thread) -------------------------------------------------------------
    def apply(self, change: ConfigChange) -> bool:
        """Apply one changed entity; returns whether this broker took it."""
        kind, name = change.entity_type, change.entity_name
        if kind == "topics":
            taken = self.broker.topics.apply_config_change(name, change.configs, change.zxid)
        elif kind == "brokers":
            b = self.broker
            before = (b.dynamic_configs, b.dynamic_default_configs)
            taken = apply_broker_configs(b, name, change.configs, change.zxid)
            if taken and before != (b.dynamic_configs, b.dynamic_default_configs):
                log.info("dynamic broker configs of %s are now %s", name, change.configs)
        elif kind == "groups":  # a group's configs (KIP-848), for the group coordinator
            taken = apply_group_configs(self.broker, desanitize(name), change.configs, change.zxid)
        elif kind == "users" and "/" not in name and name != DEFAULT_ENTITY:
            # the user's SCRAM credentials, and its client quotas
            taken = self.broker.scram_credentials.update(desanitize(name), change.configs)
            taken = self.broker.client_quotas.apply_change(kind, name, change.configs) or taken
        elif kind in QUOTA_ENTITY_TYPES:
            taken = self.broker.client_quotas.apply_change(kind, name, change.configs)
        else:
            log.warning("config change for unknown entity type %s ignored", change.entity_path)
            taken = False
        if taken:
            self.applied += 1
        return taken
