"""ClusterMetadata: the broker's (and later the controller's) view of Kafka's ZooKeeper tree.

Built only on the :class:`~kafkapy.metadata.store.MetadataStore` interface, so it runs unchanged on
the embedded store and on ZooKeeper. Nothing is cached except the topic-id index; every read goes
to the store and every write lands there (multi-node changes in one ``multi``).

This module holds the cluster id, brokers, controller and configs; topics are in cluster_topics.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from urllib.parse import quote, unquote

from kafkapy import clock
from kafkapy.metadata import znodes as zn
from kafkapy.metadata.cluster_topics import ClusterTopics
from kafkapy.metadata.errors import (
    BadVersionError,
    BrokerAlreadyRegisteredError,
    ControllerExistsError,
    NodeExistsError,
    NoNodeError,
)
from kafkapy.metadata.models import BrokerInfo, ControllerInfo, Endpoint
from kafkapy.metadata.names import collides_with, validate_topic_name
from kafkapy.metadata.store import CreateOp, MetadataStore, Op, SetOp, ZNodeStat
from kafkapy.metadata.uuids import random_cluster_id

__all__ = ["ClusterMetadata", "collides_with", "validate_topic_name"]

#: Kafka's reserved.broker.max.id default: generated broker ids start above it
RESERVED_BROKER_MAX_ID = 1000


class ClusterMetadata(ClusterTopics):
    """Cluster id, broker registry, controller, topics, their configs and partition states."""

    def __init__(self, store: MetadataStore, *, ensure_paths: bool = True) -> None:
        self._store = store
        self._ids: dict[uuid.UUID, str] = {}
        if ensure_paths:
            self.ensure_persistent_paths()

    @property
    def store(self) -> MetadataStore:
        return self._store

    def ensure_persistent_paths(self) -> None:
        """Create the containers a Kafka broker expects (/brokers/ids, /config/topics, ...)."""
        for path in zn.PERSISTENT_PATHS:
            self._store.ensure_path(path)

    # --- cluster id -----------------------------------------------------------------------------

    def cluster_id(self) -> str | None:
        got = self._store.get_or_none(zn.CLUSTER_ID.path())
        return zn.CLUSTER_ID.decode(got[0]) if got else None

    def ensure_cluster_id(self, initial_defaults: Mapping[str, str] | None = None) -> str:
        """The cluster id, generated and stored at /cluster/id on first use. The broker that
        creates it also writes ``initial_defaults`` as the cluster-wide dynamic broker configs
        (what Kafka 4.4's storage format records for a new cluster)."""
        existing = self.cluster_id()
        if existing is not None:
            return existing
        new = random_cluster_id()
        try:
            self._store.create(zn.CLUSTER_ID.path(), zn.CLUSTER_ID.encode(new), makepath=True)
            if initial_defaults:
                self.set_broker_configs(
                    "<default>", {**self.broker_configs("<default>"), **initial_defaults}
                )
            return new
        except NodeExistsError:  # another broker won the race
            existing = self.cluster_id()
            assert existing is not None
            return existing

    # --- brokers --------------------------------------------------------------------------------

    def register_broker(
        self,
        broker_id: int,
        host: str,
        port: int,
        rack: str | None = None,
        listeners: Sequence[Endpoint] | None = None,
        *,
        features: Mapping[str, Mapping[str, int]] | None = None,
        jmx_port: int = -1,
    ) -> BrokerInfo:
        """Register this broker (ephemeral /brokers/ids/N). ``listeners`` defaults to one
        PLAINTEXT listener on host:port."""
        endpoints = tuple(listeners) if listeners else (Endpoint("PLAINTEXT", host, port),)
        info = BrokerInfo(
            id=broker_id,
            endpoints=endpoints,
            rack=rack,
            jmx_port=jmx_port,
            timestamp=clock.now_ms(),
            features={k: dict(v) for k, v in (features or {}).items()},
        )
        path, data = zn.BROKER_ID.path(broker_id), zn.BROKER_ID.encode(info)
        while True:
            try:
                self._store.create(path, data, ephemeral=True)
                return info
            except NodeExistsError:
                pass
            stat = self._store.exists(path)
            if stat is None:
                continue  # deleted in between (its session just expired): try again
            if stat.ephemeral_owner == self._store.session_id:
                self._store.set(path, data)  # ours already (Kafka's checked ephemeral create)
                return info
            raise BrokerAlreadyRegisteredError(
                f"broker.id {broker_id} is already registered", owner=stat.ephemeral_owner
            )

    def broker_registration_path(self, broker_id: int) -> str:
        return zn.BROKER_ID.path(broker_id)

    def unregister_broker(self, broker_id: int) -> None:
        try:
            self._store.delete(zn.BROKER_ID.path(broker_id))
        except NoNodeError:
            pass

    def get_broker(self, broker_id: int) -> BrokerInfo | None:
        got = self._store.get_or_none(zn.BROKER_ID.path(broker_id))
        return zn.BROKER_ID.decode(got[0], broker_id) if got else None

    def list_brokers(self) -> dict[int, BrokerInfo]:
        brokers: dict[int, BrokerInfo] = {}
        for name in self._store.children(zn.BROKER_IDS.path()):
            info = self.get_broker(int(name))
            if info is not None:
                brokers[info.id] = info
        return dict(sorted(brokers.items()))

    def generate_broker_id(self, reserved_max_id: int = RESERVED_BROKER_MAX_ID) -> int:
        """A new unique broker id (Kafka's broker.id.generation.enable via /brokers/seqid)."""
        self._store.ensure_path(zn.BROKER_SEQUENCE_ID.path())
        stat = self._store.set(zn.BROKER_SEQUENCE_ID.path(), b"")
        return reserved_max_id + stat.version

    # --- controller -----------------------------------------------------------------------------

    def controller(self) -> ControllerInfo | None:
        got = self._store.get_or_none(zn.CONTROLLER.path())
        return zn.CONTROLLER.decode(got[0]) if got else None

    def controller_id(self) -> int | None:
        info = self.controller()
        return info.broker_id if info else None

    def controller_epoch(self) -> tuple[int, int]:
        """(epoch, znode version) of /controller_epoch; (0, -1) when it does not exist yet."""
        got = self._store.get_or_none(zn.CONTROLLER_EPOCH.path())
        if got is None:
            return zn.ControllerEpochZNode.INITIAL_EPOCH, -1
        return zn.CONTROLLER_EPOCH.decode(got[0]), got[1].version

    def elect_controller(self, broker_id: int) -> int:
        """Become controller: create ephemeral /controller and bump /controller_epoch in one
        multi. Returns the new epoch (the current one if this session already is controller);
        ControllerExistsError when another broker is controller."""
        got = self._store.get_or_none(zn.CONTROLLER.path())
        if got is not None:
            current = zn.CONTROLLER.decode(got[0])
            if current.broker_id == broker_id and got[1].ephemeral_owner == self._store.session_id:
                return self.controller_epoch()[0]
            raise ControllerExistsError(
                f"broker {current.broker_id} is already the controller", current.broker_id
            )
        epoch, version = self.controller_epoch()
        if version < 0:
            try:
                self._store.create(
                    zn.CONTROLLER_EPOCH.path(), zn.CONTROLLER_EPOCH.encode(epoch)
                )
            except NodeExistsError:
                pass
            epoch, version = self.controller_epoch()
        info = ControllerInfo(broker_id=broker_id, timestamp=clock.now_ms())
        try:
            self._store.multi([
                CreateOp(zn.CONTROLLER.path(), zn.CONTROLLER.encode(info), ephemeral=True),
                SetOp(zn.CONTROLLER_EPOCH.path(), zn.CONTROLLER_EPOCH.encode(epoch + 1), version),
            ])
        except (NodeExistsError, BadVersionError):
            winner = self.controller_id()
            raise ControllerExistsError(
                f"broker {winner} became the controller first", -1 if winner is None else winner
            ) from None
        return epoch + 1

    def resign_controller(self, broker_id: int) -> None:
        """Delete /controller if ``broker_id`` holds it."""
        got = self._store.get_or_none(zn.CONTROLLER.path())
        if got is not None and zn.CONTROLLER.decode(got[0]).broker_id == broker_id:
            try:
                self._store.delete(zn.CONTROLLER.path(), got[1].version)
            except (NoNodeError, BadVersionError):
                pass

    # --- broker configs -------------------------------------------------------------------------

    def _config_op(self, entity: zn.ConfigEntityZNode, key: object,
                   configs: Mapping[str, str]) -> Op:
        path = entity.path(key)
        stat = self._store.exists(path)
        data = entity.encode({k: str(v) for k, v in configs.items()})
        return CreateOp(path, data) if stat is None else SetOp(path, data, stat.version)
    def broker_configs(self, broker_id: int | str) -> dict[str, str]:
        """Dynamic configs of a broker, or of ``"<default>"`` (cluster-wide)."""
        got = self._store.get_or_none(zn.BROKER_CONFIG.path(broker_id))
        return zn.BROKER_CONFIG.decode(got[0]) if got else {}

    def set_broker_configs(self, broker_id: int | str, configs: Mapping[str, str]) -> int:
        """Replace a broker's (or ``"<default>"``) dynamic configs and post a config change
        notification; returns the config znode's new mzxid."""
        return self._set_entity_configs(
            zn.BROKER_CONFIG, broker_id, f"brokers/{broker_id}", configs
        )

    # --- group configs (/config/groups/<group>, URL-encoded as Kafka's Sanitizer does) -----------

    def group_configs(self, group: str) -> dict[str, str]:
        """A group's config overrides (KIP-848 group configs; kafkapy's path, see
        server/config/group_configs.py)."""
        got = self._store.get_or_none(zn.CONFIG_ENTITY.path("groups", quote(group, safe="")))
        return zn.CONFIG_ENTITY.decode(got[0]) if got else {}

    def groups_with_configs(self) -> list[str]:
        """The groups that have a config entity (ListConfigResources)."""
        path = zn.CONFIG_ENTITY_TYPE.path("groups")
        if self._store.exists(path) is None:
            return []
        return sorted(unquote(name) for name in self._store.children(path))

    def set_group_configs(self, group: str, configs: Mapping[str, str]) -> int:
        """Replace a group's config overrides and post a config change notification; returns
        the config znode's new mzxid."""
        self._store.ensure_path(zn.CONFIG_ENTITY_TYPE.path("groups"))
        name = quote(group, safe="")
        entity = _GroupConfigEntity()
        return self._set_entity_configs(entity, name, f"groups/{name}", configs)

    def _set_entity_configs(
        self, entity: zn.ConfigEntityZNode, key: object, entity_path: str,
        configs: Mapping[str, str],
    ) -> int:
        """The config write and its change notification in one transaction (Kafka's
        AdminZkClient writes them one after the other); returns the config znode's mzxid."""
        results = self._store.multi([
            self._config_op(entity, key, configs),
            CreateOp(
                zn.CONFIG_CHANGE_NOTIFICATION.path(),
                zn.CONFIG_CHANGE_NOTIFICATION.encode(entity_path),
                sequential=True,
            ),
        ])
        if isinstance(results[0], ZNodeStat):
            return results[0].mzxid
        stat = self._store.exists(entity.path(key))  # created: its creation is our write
        return stat.czxid if stat is not None else -1


class _GroupConfigEntity(zn.ConfigEntityZNode):
    """/config/groups/<group>: a group's config overrides (kafkapy's path; Kafka in ZooKeeper
    mode had no group configs)."""

    TEMPLATE = "/config/groups/{group}"
