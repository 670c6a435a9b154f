"""Config change notifications applied on every broker (Kafka's DynamicConfigManager).

A config write made through any broker (AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas)
stores the entity's znode and a sequential notification under /config/changes
(kafkapy.metadata.config_notifications). Each broker keeps a persistent watch on /config/changes;
the watch callback (ZooKeeper's dispatcher thread, or the writing thread with the embedded store)
only wakes this task. The task reads the new notifications and the entities they name in a worker
thread, then applies them on the trio thread, the only one that touches logs and the broker's
in-memory configs:

* ``topics/<name>``: the topic's overrides replace the cached ones (what DescribeConfigs, the
  replica manager and the produce path read) and every open log of the topic is reconfigured
  (segment.bytes, retention.ms, cleanup.policy, ... take effect at once, on leaders and followers);
* ``brokers/<default>``: the cluster-wide dynamic defaults, on every broker; ``brokers/<id>``: that
  broker's dynamic configs, on that broker only; either reconfigures every open log;
* ``users/<user>``: the user's SCRAM credentials replace those in the broker's credential cache
  (server/scram_cache.py), so SASL/SCRAM logins on every broker use the new password at once;
* ``users/..``, ``clients/..``, ``ips/..``: client quotas are stored and described, not enforced,
  so there is nothing else to apply.

The first poll, at startup, takes every notification still present (as Kafka does): that closes
the window between the configs read at startup and the watch. A new ZooKeeper session polls again.
Each value carries its znode's mzxid, so a read older than what the broker already holds (for
example its own write, applied when it was made) is ignored. Every poll also purges notifications
older than 15 minutes. The embedded single-broker store gets the same treatment: it only ever
re-applies its own writes, and its notifications are purged the same way.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.client_quotas import DEFAULT as DEFAULT_ENTITY
from kafkapy.metadata.client_quotas import desanitize
from kafkapy.metadata.config_notifications import ConfigChange, ConfigChangeFeed
from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.store import WatchEvent

from .config_changes import apply_broker_configs

if TYPE_CHECKING:
    from .broker import Broker

log = logging.getLogger("kafkapy.config_changes")

RETRY_S = 0.5  # after a failed poll (ZooKeeper unreachable)
QUOTA_ENTITY_TYPES = ("users", "clients", "ips")


class ConfigChangeListener:
    """Watches /config/changes and applies what the notifications name (see the module doc)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.feed = ConfigChangeFeed(broker.store)
        self._watch: int | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._wake = trio.Event()
        self.applied = 0  # entity changes taken (for tests and logs)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the notifications (blocking store calls; before serving)."""
        store = self.broker.store
        store.ensure_path(zn.CONFIG_CHANGES.path())
        self._watch = store.add_watch(zn.CONFIG_CHANGES.path(), self._on_event)
        on_reconnected = getattr(store, "on_reconnected", None)  # ZooKeeper only
        if on_reconnected is not None:
            on_reconnected(self._on_reconnected)

    def stop(self) -> None:
        if self._watch is not None and self.broker.store is not None:
            self.broker.store.remove_watch(self._watch)
        self._watch = None
        self._token = None

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Poll on every wake-up, starting with one that takes every notification present."""
        self._token = trio.lowlevel.current_trio_token()
        self._wake.set()
        task_status.started()
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            try:
                changes = await trio.to_thread.run_sync(self.feed.poll)
            except (StoreError, OSError) as e:
                log.warning("reading config change notifications failed, retrying: %s", e)
                await trio.sleep(RETRY_S)
                self._wake.set()
                continue
            for change in changes:
                try:
                    self.apply(change)
                except Exception:
                    log.exception("applying config change %s failed", change.entity_path)

    # -- wake-ups (any thread) --------------------------------------------------------------
    def _on_event(self, event: WatchEvent) -> None:
        self._poke()

    def _on_reconnected(self, new_session: bool) -> None:
        self._poke()

    def _poke(self) -> None:
        token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self._wake_up)
            except trio.RunFinishedError:
                pass

    def _wake_up(self) -> None:
        self._wake.set()

    # -- applying (trio thread) -------------------------------------------------------------
    def apply(self, change: ConfigChange) -> bool:
        """Apply one changed entity; returns whether this broker took it."""
        kind, name = change.entity_type, change.entity_name
        if kind == "topics":
            if self.broker.topics is None:
                return False
            taken = self.broker.topics.apply_config_change(name, change.configs, change.zxid)
        elif kind == "brokers":
            b = self.broker
            before = (b.dynamic_configs, b.dynamic_default_configs)
            taken = apply_broker_configs(b, name, change.configs, change.zxid)
            if taken and before != (b.dynamic_configs, b.dynamic_default_configs):
                log.info("dynamic broker configs of %s are now %s", name, change.configs)
        elif kind == "users" and "/" not in name and name != DEFAULT_ENTITY:
            # the user's SCRAM credentials (its client quotas are stored, not enforced)
            taken = self.broker.scram_credentials.update(desanitize(name), change.configs)
        elif kind in QUOTA_ENTITY_TYPES:
            log.debug("client quota change %s (stored, not enforced)", change.entity_path)
            taken = False
        else:
            log.warning("config change for unknown entity type %s ignored", change.entity_path)
            taken = False
        if taken:
            self.applied += 1
        return taken
