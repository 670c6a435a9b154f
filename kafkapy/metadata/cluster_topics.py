"""The topics of the cluster metadata (mixed into ClusterMetadata): reading a topic's
assignment, partition states and configs; creating, deleting and extending topics atomically
(one ``multi`` each), with Kafka's rules for names and replica assignments; resuming deletions a
crash interrupted; conditional partition state updates."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.errors import (
    BadVersionError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    TopicExistsError,
    UnknownTopicError,
)
from kafkapy.metadata.models import PartitionState, TopicAssignment, TopicInfo
from kafkapy.metadata.names import collides_with, validate_topic_name
from kafkapy.metadata.store import CreateOp, DeleteOp, Op, SetOp
from kafkapy.metadata.uuids import random_uuid

if TYPE_CHECKING:
    from kafkapy.metadata.cluster import ClusterMetadata


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



class ClusterTopics:
    """Topic reads and writes of :class:`ClusterMetadata`."""

    # --- topics: reads --------------------------------------------------------------------------

    def list_topics(self: ClusterMetadata) -> list[str]:
        return sorted(self._store.children(zn.TOPICS.path()))

    def topic_exists(self: ClusterMetadata, name: str) -> bool:
        return self._store.exists(zn.TOPIC.path(name)) is not None

    def get_topic(self: ClusterMetadata, name: str) -> TopicInfo | None:
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

    def topic_by_id(self: ClusterMetadata, topic_id: uuid.UUID) -> TopicInfo | None:
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

    def get_assignment(self: ClusterMetadata, name: str) -> tuple[TopicAssignment, int] | None:
        """The topic document (/brokers/topics/T) and its znode version, None without topic."""
        got = self._store.get_or_none(zn.TOPIC.path(name))
        return (zn.TOPIC.decode(got[0]), got[1].version) if got else None

    def partitions_with_state(self: ClusterMetadata, name: str) -> set[int]:
        """The partitions of ``name`` that have a /brokers/topics/T/partitions/P node."""
        try:
            return {int(c) for c in self._store.children(zn.TOPIC_PARTITIONS.path(name))}
        except NoNodeError:
            return set()

    def get_partition_state(
        self: ClusterMetadata, name: str, partition: int
    ) -> PartitionState | None:
        got = self._store.get_or_none(zn.TOPIC_PARTITION_STATE.path(name, partition))
        return zn.TOPIC_PARTITION_STATE.decode(got[0], got[1].version) if got else None

    def topic_configs(self: ClusterMetadata, name: str) -> dict[str, str]:
        got = self._store.get_or_none(zn.TOPIC_CONFIG.path(name))
        return zn.TOPIC_CONFIG.decode(got[0]) if got else {}

    def pending_deletions(self: ClusterMetadata) -> list[str]:
        return sorted(self._store.children(zn.DELETE_TOPICS.path()))

    # --- topics: writes -------------------------------------------------------------------------

    def _state_ops(
        self: ClusterMetadata,
        name: str,
        assignment: Mapping[int, Sequence[int]],
        controller_epoch: int,
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

    def create_topic(
        self: ClusterMetadata,
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

    def _subtree_delete_ops(self: ClusterMetadata, path: str) -> list[Op]:
        ops: list[Op] = []
        for child in self._store.children(path):
            ops.extend(self._subtree_delete_ops(f"{path}/{child}"))
        ops.append(DeleteOp(path))
        return ops

    def delete_topic(self: ClusterMetadata, name: str) -> None:
        """Delete a topic's nodes and configs. /admin/delete_topics/T marks the deletion while it
        runs (see :meth:`resume_pending_deletions` after a crash)."""
        if not self.topic_exists(name):
            raise UnknownTopicError(f"Topic '{name}' does not exist.")
        try:
            self._store.create(zn.DELETE_TOPIC.path(name), makepath=True)
        except NodeExistsError:
            pass
        self._finish_deletion(name)

    def _finish_deletion(self: ClusterMetadata, name: str) -> None:
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

    def resume_pending_deletions(self: ClusterMetadata) -> list[str]:
        """Finish deletions a crash interrupted; returns the topics deleted."""
        done = self.pending_deletions()
        for name in done:
            self._finish_deletion(name)
        return done

    def add_partitions(
        self: ClusterMetadata,
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

    def set_topic_configs(self: ClusterMetadata, name: str, configs: Mapping[str, str]) -> int:
        """Replace the topic's config overrides and post a config change notification; returns
        the config znode's new mzxid."""
        if not self.topic_exists(name):
            raise UnknownTopicError(f"Topic '{name}' does not exist.")
        return self._set_entity_configs(zn.TOPIC_CONFIG, name, f"topics/{name}", configs)

    def update_partition_state(
        self: ClusterMetadata,
        name: str,
        partition: int,
        state: PartitionState,
        expected_version: int,
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
