"""Reading Kafka's config change notifications (/config/changes), as every ZooKeeper-mode broker
does.

A config write (AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas, kafka-configs) replaces
the entity's znode (/config/<type>/<name>) and creates, in the same transaction, a sequential
notification ``/config/changes/config_change_NNNNNNNNNN`` holding {"version":2,
"entity_path":"<type>/<name>"}. :class:`ConfigChangeFeed` is the generic notification feed
(kafkapy.metadata.change_notifications: sequence order, first poll takes everything, coalescing,
purge after 15 minutes) whose keys are config entities, read with the znode's ``mzxid`` so that a
reader can tell an older read from a newer one.

Synchronous store calls: run it in a worker thread from trio code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import znodes as zn
from .change_notifications import CHANGE_EXPIRATION_MS, ChangeNotificationFeed, now_ms
from .store import MetadataStore

#: mzxid reported for an entity whose config znode does not exist
ABSENT = -1


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


def _entity(data: bytes) -> tuple[str, str]:
    return zn.CONFIG_CHANGE_NOTIFICATION.split(zn.CONFIG_CHANGE_NOTIFICATION.decode(data))


def _read(store: MetadataStore, entity: tuple[str, str]) -> ConfigChange:
    return read_entity_config(store, *entity)


class ConfigChangeFeed(ChangeNotificationFeed[tuple[str, str], ConfigChange]):
    """The config change notifications a broker has not processed yet (see the module doc)."""

    def __init__(
        self,
        store: MetadataStore,
        *,
        expiration_ms: int = CHANGE_EXPIRATION_MS,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        super().__init__(
            store,
            zn.CONFIG_CHANGES.path(),
            zn.CONFIG_CHANGE_NOTIFICATION.sequence,
            _entity,
            _read,
            expiration_ms=expiration_ms,
            clock=clock,
        )
