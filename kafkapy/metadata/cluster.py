"""ClusterMetadata: the broker's (and later the controller's) view of Kafka's ZooKeeper tree.

Built only on the :class:`~kafkapy.metadata.store.MetadataStore` interface, so it runs unchanged on
the embedded store and on ZooKeeper. Nothing is cached except the topic-id index; every read goes
to the store and every write lands there (multi-node changes in one ``multi``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.errors import (
    BadVersionError,
    BrokerAlreadyRegisteredError,
    ControllerExistsError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    TopicExistsError,
    UnknownTopicError,
)
from kafkapy.metadata.models import (
    BrokerInfo,
    ControllerInfo,
    Endpoint,
    PartitionState,
    TopicAssignment,
    TopicInfo,
)
from kafkapy.metadata.names import collides_with, validate_topic_name
from kafkapy.metadata.store import CreateOp, DeleteOp, MetadataStore, Op, SetOp, ZNodeStat
from kafkapy.metadata.uuids import random_cluster_id, random_uuid

__all__ = ["ClusterMetadata", "collides_with", "validate_topic_name"]

#: Kafka's reserved.broker.max.id default: generated broker ids start above it
RESERVED_BROKER_MAX_ID = 1000


def validate_assignment(assignment: Mapping[int, Sequence[int]], first_partition: int = 0) -> None:
    """Kafka's rules for a (new) replica assignment; raises InvalidReplicaAssignmentError."""
    if not assignment:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    expected = list(range(first_partition, first_partition + len(assignment)))
    if sorted(assignment) != expected:
        raise InvalidReplicaAssignmentError(
            f"Partitions must be a consecutive integer sequence starting at {first_partition}, "
            f"got {sorted(assignment)}"
        )
    for p, replicas in assignment.items():
        if not replicas:
            raise InvalidReplicaAssignmentError(f"Partition {p} has no replicas")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate replica assignment found: {dict(assignment)}"
            )
    if len({len(r) for r in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError(
            "All partitions should have the same number of replicas"
        )


class ClusterMetadata:
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

    def ensure_cluster_id(self) -> str:
        """The cluster id, generated and stored at /cluster/id on first use."""
        existing = self.cluster_id()
        if existing is not None:
            return existing
        new = random_cluster_id()
        try:
            self._store.create(zn.CLUSTER_ID.path(), zn.CLUSTER_ID.encode(new), makepath=True)
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
            timestamp=zn.now_ms(),
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
        info = ControllerInfo(broker_id=broker_id, timestamp=zn.now_ms())
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

    # --- topics: reads --------------------------------------------------------------------------

    def list_topics(self) -> list[str]:
        return sorted(self._store.children(zn.TOPICS.path()))

    def topic_exists(self, name: str) -> bool:
        return self._store.exists(zn.TOPIC.path(name)) is not None

    def get_topic(self, name: str) -> TopicInfo | None:
        """Everything about ``name``; a topic without an id (written by an old tool) gets one."""
        got = self._store.get_or_none(zn.TOPIC.path(name))
        if got is None:
            return None
        data, stat = got
        assignment = zn.TOPIC.decode(data)
        if assignment.topic_id is None:
            assignment = TopicAssignment(
                assignment.partitions, random_uuid(), assignment.adding_replicas,
                assignment.removing_replicas,
            )
            try:
                stat = self._store.set(zn.TOPIC.path(name), zn.TOPIC.encode(assignment),
                                       stat.version)
            except (BadVersionError, NoNodeError):
                return self.get_topic(name)
        assert assignment.topic_id is not None
        states = {}
        for p in assignment.partitions:
            state = self.get_partition_state(name, p)
            if state is not None:
                states[p] = state
        self._ids[assignment.topic_id] = name
        configs = self._store.get_or_none(zn.TOPIC_CONFIG.path(name))
        return TopicInfo(
            name=name,
            topic_id=assignment.topic_id,
            partitions=assignment.partitions,
            states=states,
            configs=zn.TOPIC_CONFIG.decode(configs[0]) if configs else {},
            zk_version=stat.version,
            configs_zxid=configs[1].mzxid if configs else -1,
        )

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        name = self._ids.get(topic_id)
        if name is not None:
            info = self.get_topic(name)
            if info is not None and info.topic_id == topic_id:
                return info
            self._ids.pop(topic_id, None)
        for name in self.list_topics():
            got = self._store.get_or_none(zn.TOPIC.path(name))
            if got is not None and zn.TOPIC.decode(got[0]).topic_id == topic_id:
                return self.get_topic(name)
        return None

    def get_assignment(self, name: str) -> tuple[TopicAssignment, int] | None:
        """The topic document (/brokers/topics/T) and its znode version, None without topic."""
        got = self._store.get_or_none(zn.TOPIC.path(name))
        return (zn.TOPIC.decode(got[0]), got[1].version) if got else None

    def partitions_with_state(self, name: str) -> set[int]:
        """The partitions of ``name`` that have a /brokers/topics/T/partitions/P node."""
        try:
            return {int(c) for c in self._store.children(zn.TOPIC_PARTITIONS.path(name))}
        except NoNodeError:
            return set()

    def get_partition_state(self, name: str, partition: int) -> PartitionState | None:
        got = self._store.get_or_none(zn.TOPIC_PARTITION_STATE.path(name, partition))
        return zn.TOPIC_PARTITION_STATE.decode(got[0], got[1].version) if got else None

    def topic_configs(self, name: str) -> dict[str, str]:
        got = self._store.get_or_none(zn.TOPIC_CONFIG.path(name))
        return zn.TOPIC_CONFIG.decode(got[0]) if got else {}

    def pending_deletions(self) -> list[str]:
        return sorted(self._store.children(zn.DELETE_TOPICS.path()))

    # --- topics: writes -------------------------------------------------------------------------

    def _state_ops(
        self, name: str, assignment: Mapping[int, Sequence[int]], controller_epoch: int
    ) -> list[Op]:
        ops: list[Op] = []
        for p, replicas in sorted(assignment.items()):
            state = PartitionState(
                leader=replicas[0], leader_epoch=0, isr=list(replicas),
                controller_epoch=controller_epoch,
            )
            ops.append(CreateOp(zn.TOPIC_PARTITION.path(name, p)))
            ops.append(CreateOp(zn.TOPIC_PARTITION_STATE.path(name, p),
                                zn.TOPIC_PARTITION_STATE.encode(state)))
        return ops

    def _config_op(self, entity: zn.ConfigEntityZNode, key: object,
                   configs: Mapping[str, str]) -> Op:
        path = entity.path(key)
        stat = self._store.exists(path)
        data = entity.encode({k: str(v) for k, v in configs.items()})
        return CreateOp(path, data) if stat is None else SetOp(path, data, stat.version)

    def create_topic(
        self,
        name: str,
        assignment: Mapping[int, Sequence[int]],
        configs: Mapping[str, str] | None = None,
        topic_id: uuid.UUID | None = None,
        *,
        controller_epoch: int | None = None,
        with_states: bool = True,
    ) -> TopicInfo:
        """Create a topic atomically: assignment, configs and, ``with_states``, every partition's
        initial state (leader = first replica, leader epoch 0, ISR = replicas). Without, only
        /brokers/topics/T and the configs are written, as a ZooKeeper-mode Kafka broker does: the
        controller creates the partition states."""
        reason = validate_topic_name(name)
        if reason:
            raise InvalidTopicError(reason)
        existing = self.list_topics()
        if name in existing:
            raise TopicExistsError(f"Topic '{name}' already exists.")
        reason = collides_with(name, existing)
        if reason:
            raise InvalidTopicError(reason)
        validate_assignment(assignment)
        tid = topic_id or random_uuid()
        epoch = self.controller_epoch()[0] if controller_epoch is None else controller_epoch
        parts = {int(p): [int(r) for r in reps] for p, reps in assignment.items()}
        ops: list[Op] = [
            CreateOp(zn.TOPIC.path(name), zn.TOPIC.encode(TopicAssignment(parts, tid))),
            self._config_op(zn.TOPIC_CONFIG, name, configs or {}),
        ]
        if with_states:
            ops.append(CreateOp(zn.TOPIC_PARTITIONS.path(name)))
            ops.extend(self._state_ops(name, parts, epoch))
        try:
            self._store.multi(ops)
        except NodeExistsError as e:
            if e.op_index == 0:
                raise TopicExistsError(f"Topic '{name}' already exists.") from None
            raise
        info = self.get_topic(name)
        assert info is not None
        return info

    def _subtree_delete_ops(self, path: str) -> list[Op]:
        ops: list[Op] = []
        for child in self._store.children(path):
            ops.extend(self._subtree_delete_ops(f"{path}/{child}"))
        ops.append(DeleteOp(path))
        return ops

    def delete_topic(self, name: str) -> None:
        """Delete a topic's nodes and configs. /admin/delete_topics/T marks the deletion while it
        runs (see :meth:`resume_pending_deletions` after a crash)."""
        if not self.topic_exists(name):
            raise UnknownTopicError(f"Topic '{name}' does not exist.")
        try:
            self._store.create(zn.DELETE_TOPIC.path(name), makepath=True)
        except NodeExistsError:
            pass
        self._finish_deletion(name)

    def _finish_deletion(self, name: str) -> None:
        for attempt in range(3):
            ops: list[Op] = []
            if self.topic_exists(name):
                ops.extend(self._subtree_delete_ops(zn.TOPIC.path(name)))
            if self._store.exists(zn.TOPIC_CONFIG.path(name)) is not None:
                ops.append(DeleteOp(zn.TOPIC_CONFIG.path(name)))
            ops.append(DeleteOp(zn.DELETE_TOPIC.path(name)))
            try:
                self._store.multi(ops)
                break
            except NotEmptyError:  # the controller created a partition state meanwhile
                if attempt == 2:
                    raise
        self._ids = {k: v for k, v in self._ids.items() if v != name}

    def resume_pending_deletions(self) -> list[str]:
        """Finish deletions a crash interrupted; returns the topics deleted."""
        done = self.pending_deletions()
        for name in done:
            self._finish_deletion(name)
        return done

    def add_partitions(
        self,
        name: str,
        new_assignment: Mapping[int, Sequence[int]],
        *,
        controller_epoch: int | None = None,
        with_states: bool = True,
    ) -> TopicInfo:
        """Add partitions ``new_assignment`` (numbered from the current count) atomically; their
        states too ``with_states`` (else the controller creates them)."""
        got = self._store.get_or_none(zn.TOPIC.path(name))
        if got is None:
            raise UnknownTopicError(f"Topic '{name}' does not exist.")
        data, stat = got
        current = zn.TOPIC.decode(data)
        if not new_assignment:
            raise InvalidPartitionsError(
                f"Topic currently has {len(current.partitions)} partitions, "
                "no new partitions given."
            )
        validate_assignment(new_assignment, first_partition=len(current.partitions))
        rf = {len(r) for r in current.partitions.values()}
        new_rf = len(next(iter(new_assignment.values())))
        if rf and new_rf not in rf:
            raise InvalidReplicaAssignmentError(
                f"Inconsistent replication factor: existing partitions have {min(rf)} replicas, "
                f"new ones {new_rf}"
            )
        parts = dict(current.partitions)
        added = {int(p): [int(r) for r in reps] for p, reps in new_assignment.items()}
        parts.update(added)
        updated = TopicAssignment(
            parts, current.topic_id, current.adding_replicas, current.removing_replicas
        )
        epoch = self.controller_epoch()[0] if controller_epoch is None else controller_epoch
        self._store.multi([
            SetOp(zn.TOPIC.path(name), zn.TOPIC.encode(updated), stat.version),
            *(self._state_ops(name, added, epoch) if with_states else []),
        ])
        info = self.get_topic(name)
        assert info is not None
        return info

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> int:
        """Replace the topic's config overrides and post a config change notification; returns
        the config znode's new mzxid."""
        if not self.topic_exists(name):
            raise UnknownTopicError(f"Topic '{name}' does not exist.")
        return self._set_entity_configs(zn.TOPIC_CONFIG, name, f"topics/{name}", configs)

    def update_partition_state(
        self, name: str, partition: int, state: PartitionState, expected_version: int
    ) -> PartitionState:
        """Conditionally replace a partition's state; returns it with its new ``zk_version``.
        BadVersionError when the state changed since ``expected_version``."""
        stat = self._store.set(
            zn.TOPIC_PARTITION_STATE.path(name, partition),
            zn.TOPIC_PARTITION_STATE.encode(state),
            expected_version,
        )
        return PartitionState(
            leader=state.leader,
            leader_epoch=state.leader_epoch,
            isr=list(state.isr),
            controller_epoch=state.controller_epoch,
            zk_version=stat.version,
            leader_recovery_state=state.leader_recovery_state,
        )

    # --- broker configs -------------------------------------------------------------------------

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
