"""Reading Kafka's config change notifications (/config/changes), as every ZooKeeper-mode broker
does.

A config write (AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas, kafka-configs) replaces
the entity's znode (/config/<type>/<name>) and creates, in the same transaction, a sequential
notification ``/config/changes/config_change_NNNNNNNNNN`` holding {"version":2,
"entity_path":"<type>/<name>"}. The notification only says *which* entity changed: a broker reads
the entity's znode afresh, so a broker that misses a notification loses nothing as long as it
reads the configs again when it starts.

:class:`ConfigChangeFeed` is the store side of Kafka's ZkNodeChangeNotificationListener (no
threads, no watches: the caller decides when to :meth:`~ConfigChangeFeed.poll`, typically on a
child watch of /config/changes and after a new ZooKeeper session). Each poll:

* lists the notifications in sequence order and takes those numbered above the last one taken
  (the first poll takes all of them: Kafka re-processes every notification at startup, which
  closes the gap between reading the configs and watching for changes);
* reads each changed entity's znode once (several notifications for one entity coalesce into its
  current configs), with the znode's ``mzxid`` so that a reader can tell an older read from a
  newer one;
* deletes the notifications older than ``expiration_ms`` (Kafka's changeExpirationMs, 15 minutes)
  by their creation time. Every broker purges; deletions that race are harmless. Sequence order is
  creation order, so the scan stops at the first notification still young (Kafka checks them all).

Synchronous store calls: run it in a worker thread from trio code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import znodes as zn
from .errors import NoNodeError, StoreError
from .store import MetadataStore

log = logging.getLogger(__name__)

#: Kafka's DynamicConfigManager changeExpirationMs
CHANGE_EXPIRATION_MS = 15 * 60 * 1000
#: mzxid reported for an entity whose config znode does not exist
ABSENT = -1


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """An entity named by a notification, with its configs as read after the notification.

    ``entity_type`` is topics, brokers, users, clients or ips; ``entity_name`` the rest of the
    path as stored (``<default>``, ``u/clients/c``, sanitized quota names). ``zxid`` is the
    config znode's mzxid, :data:`ABSENT` (and empty configs) when the znode does not exist.
    """

    entity_type: str
    entity_name: str
    configs: dict[str, str] = field(default_factory=dict)
    zxid: int = ABSENT

    @property
    def entity_path(self) -> str:
        return f"{self.entity_type}/{self.entity_name}"


def read_entity_config(store: MetadataStore, entity_type: str, entity_name: str) -> ConfigChange:
    """The current configs of one config entity (empty with zxid ABSENT when it has no znode)."""
    got = store.get_or_none(zn.CONFIG_ENTITY.path(entity_type, entity_name))
    if got is None:
        return ConfigChange(entity_type, entity_name)
    return ConfigChange(
        entity_type, entity_name, zn.CONFIG_ENTITY.decode(got[0]), got[1].mzxid
    )


class ConfigChangeFeed:
    """The config change notifications a broker has not processed yet (see the module doc)."""

    def __init__(
        self,
        store: MetadataStore,
        *,
        expiration_ms: int = CHANGE_EXPIRATION_MS,
        clock: Callable[[], int] = _now_ms,
    ) -> None:
        self.store = store
        self.expiration_ms = expiration_ms
        self.clock = clock
        self.last_sequence = -1  # the highest notification taken so far

    def poll(self) -> list[ConfigChange]:
        """Changed entities since the last poll, in notification order (an entity named several
        times appears once, at its last place), then purge the expired notifications."""
        now = self.clock()
        root = zn.CONFIG_CHANGES.path()
        try:
            names = self.store.children(root)
        except NoNodeError:
            return []
        numbered = sorted(
            (seq, name)
            for name in names
            if (seq := zn.CONFIG_CHANGE_NOTIFICATION.sequence(name)) is not None
        )
        entities: dict[tuple[str, str], None] = {}
        last = self.last_sequence
        for seq, name in numbered:
            if seq <= last:
                continue
            entity = self._entity(f"{root}/{name}")
            if entity is not None:
                entities.pop(entity, None)
                entities[entity] = None
            last = seq
        changes = [read_entity_config(self.store, kind, ent) for kind, ent in entities]
        self.last_sequence = last  # only once everything was read: a failed poll is repeated
        try:
            self.purge(now, [f"{root}/{name}" for _, name in numbered])
        except StoreError as e:
            log.warning("purging config change notifications failed: %s", e)
        return changes

    def _entity(self, path: str) -> tuple[str, str] | None:
        got = self.store.get_or_none(path)
        if got is None:
            log.warning("config change notification %s vanished before it was read", path)
            return None
        try:
            return zn.CONFIG_CHANGE_NOTIFICATION.split(zn.CONFIG_CHANGE_NOTIFICATION.decode(got[0]))
        except (ValueError, KeyError, TypeError) as e:
            log.error("ignoring malformed config change notification %s: %s", path, e)
            return None

    def purge(self, now: int, paths: list[str]) -> int:
        """Delete the notifications among ``paths`` (in sequence order) created more than
        ``expiration_ms`` before ``now``; returns how many this call deleted."""
        deleted = 0
        for path in paths:
            stat = self.store.exists(path)
            if stat is None:
                continue
            if now - stat.ctime <= self.expiration_ms:
                break
            try:
                self.store.delete(path)
                deleted += 1
            except NoNodeError:  # another broker purged it first
                pass
        if deleted:
            log.debug("purged %d expired config change notifications", deleted)
        return deleted
