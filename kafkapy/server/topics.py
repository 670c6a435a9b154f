"""Topic administration on this broker: the topic cache, creation (explicit and automatic),
deletion, partition increases, and the partition logs that go with them.

The metadata store is the truth; this registry mirrors it in memory for the request path and
keeps the local logs in step with it. Kafka's validation rules and error codes apply: invalid
names, partition counts, replication factors and configs are refused with the code Kafka uses.

With the embedded store the lone broker is its own controller and writes the partition states
together with the topic. In ZooKeeper mode it writes only /brokers/topics/T, as Kafka's brokers
do; the controller creates the states (kafkapy.replication.topic_controller) and the registry
learns them through the replica manager's watches. ``wait_for_leaders`` lets CreateTopics and
CreatePartitions wait for them up to the request's timeout, as Kafka's do.

Automatic creation (Metadata of an unknown topic, auto.create.topics.enable) is asynchronous, as
Kafka 4.4's AutoTopicCreationManager: ``request_auto_create`` schedules the creation after the
current request's answer (which says UNKNOWN_TOPIC_OR_PARTITION) and returns at once; the topic
exists shortly after and a client's retried Metadata finds it. A creation that fails (a default
replication factor above the live brokers, a collision) is logged, as Kafka's controller answers
only the broker that asked, and the next Metadata asks again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import trio

from kafkapy.metadata.models import TopicInfo
from kafkapy.metadata.names import validate_topic_name
from kafkapy.protocol.errors import ErrorCode
from kafkapy.replication.assignment import AssignmentError, assign_replicas
from kafkapy.storage.log import PartitionLog

from .config.log_configs import apply_log_configs, log_config_for_broker, validate_topic_configs
from .config.topic_configs import warn_not_applied
from .metadata_cache import TopicBlockCache
from .replication.notify import AppendNotifier

# Kafka's controller refuses an operation that would write more than 10,000 metadata records
# (QuorumController.MAX_RECORDS_PER_USER_OP, one per partition) with POLICY_VIOLATION; without a
# bound, one CreatePartitions asking for 2**31 - 1 partitions stalls the broker for good.
MAX_PARTITIONS_PER_OPERATION = 10_000


def _check_batch_size(
    new_partitions: int, message: str = "Unable to perform excessively large batch operation."
) -> None:
    if new_partitions > MAX_PARTITIONS_PER_OPERATION:
        raise TopicError(ErrorCode.policy_violation, message)

if TYPE_CHECKING:
    from .broker import Broker

log = logging.getLogger("kafkapy.topics")


@dataclass(slots=True)
class TopicError(Exception):
    code: ErrorCode
    message: str | None


class TopicRegistry:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.by_name: dict[str, TopicInfo] = {}
        self.by_id: dict[uuid.UUID, TopicInfo] = {}
        self.changed = AppendNotifier()  # notified whenever a topic's view is replaced
        self.metadata_blocks = TopicBlockCache(self.by_name)  # encoded Metadata topic entries
        # configs read (after a change notification) for topics not known here yet: name ->
        # (configs, mzxid of /config/topics/T); taken by _remember when newer than its read
        self._pending_configs: dict[str, tuple[dict[str, str], int]] = {}
        self.auto_creating: set[str] = set()  # automatic creations scheduled, not yet done

    # -- loading ----------------------------------------------------------------------------
    def load(self) -> None:
        """Mirror every topic from the store and open the logs of partitions assigned here."""
        cluster = self.broker.cluster
        for name in cluster.list_topics():
            info = cluster.get_topic(name)
            if info is not None:
                self._remember(info)
                self._open_logs(info)

    def _remember(self, info: TopicInfo) -> TopicInfo:
        """Take a topic's view, keeping configs newer than the view's (by the config znode's
        mzxid): a read that started before a config change must not undo it here."""
        old = self.by_name.get(info.name)
        if (
            old is not None
            and old.topic_id == info.topic_id
            and old.configs_zxid > info.configs_zxid
        ):
            info = replace(info, configs=old.configs, configs_zxid=old.configs_zxid)
        pending = self._pending_configs.pop(info.name, None)
        if pending is not None and pending[1] > info.configs_zxid:
            info = replace(info, configs=pending[0], configs_zxid=pending[1])
        self.by_name[info.name] = info
        self.by_id[info.topic_id] = info
        self.changed.notify()
        return info

    def apply_config_change(self, name: str, configs: dict[str, str], zxid: int) -> bool:
        """Take a topic's configs read after a config change notification (``zxid``: the mzxid
        of /config/topics/T, negative when it is gone) and apply them to its open logs, unless
        this broker holds newer ones. Returns whether anything was taken."""
        if zxid < 0:
            return False  # no config znode: the topic is being deleted
        info = self.by_name.get(name)
        if info is None:  # created elsewhere and not learnt yet: kept for _remember
            pending = self._pending_configs.get(name)
            if pending is None or pending[1] < zxid:
                self._pending_configs[name] = (dict(configs), zxid)
            return False
        if info.configs_zxid > zxid:
            return False
        if info.configs != configs:
            log.info("topic=%s configs changed to %s", name, configs)
        self._remember(replace(info, configs=dict(configs), configs_zxid=zxid))
        apply_log_configs(self.broker, [name])
        return True

    def has_leaders(self, name: str) -> bool:
        info = self.by_name.get(name)
        return info is not None and all(
            (s := info.states.get(p)) is not None and s.leader >= 0 for p in info.partitions
        )

    async def wait_for_leaders(self, names: Iterable[str], timeout_s: float) -> set[str]:
        """Wait until every partition of ``names`` has a leader here, at most ``timeout_s``;
        returns the topics still without (Kafka's DelayedCreatePartitions)."""
        pending = set(names)
        with trio.move_on_after(max(timeout_s, 0.0)):
            while True:
                waiter = self.changed.waiter()
                pending = {n for n in pending if not self.has_leaders(n)}
                if not pending:
                    break
                await waiter.wait()
        return {n for n in pending if not self.has_leaders(n)}

    def _open_logs(self, info: TopicInfo) -> None:
        current = self.by_name.get(info.name)  # its configs may be newer than info's
        if current is None or current.topic_id != info.topic_id:
            current = info
        cfg = log_config_for_broker(self.broker, current.configs)
        for p, replicas in info.partitions.items():
            if self.broker.broker_id in replicas:
                self.broker.logs.create_log(info.name, p, info.topic_id, cfg)

    # -- lookups ----------------------------------------------------------------------------
    def get(self, name: str) -> TopicInfo | None:
        return self.by_name.get(name)

    def get_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return self.by_id.get(topic_id)

    def log(self, name: str, partition: int) -> PartitionLog | None:
        return self.broker.logs.get_log(name, partition)

    # -- creation ---------------------------------------------------------------------------
    def check_new_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        assignment: dict[int, list[int]] | None,
        configs: dict[str, str],
    ) -> tuple[int, int, dict[int, list[int]]]:
        """Validate a creation request as Kafka does; return (partitions, rf, assignment)."""
        err = validate_topic_name(name)
        if err is not None:
            raise TopicError(ErrorCode.invalid_topic_exception, err)
        if name in self.by_name:
            raise TopicError(ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
        collision = self._collision(name)
        if collision is not None:
            raise TopicError(
                ErrorCode.invalid_topic_exception,
                f"Topic '{name}' collides with existing topic: {collision}",
            )
        brokers = sorted(self.broker.cluster.list_brokers())
        if assignment:
            if num_partitions != -1 or replication_factor != -1:
                raise TopicError(
                    ErrorCode.invalid_request,
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
            parts = sorted(assignment)
            if parts != list(range(len(parts))):
                raise TopicError(
                    ErrorCode.invalid_replica_assignment,
                    "Partitions should be a consecutive 0-based integer sequence",
                )
            sizes = {len(r) for r in assignment.values()}
            if len(sizes) != 1 or 0 in sizes:
                raise TopicError(
                    ErrorCode.invalid_replica_assignment,
                    "All partitions should have the same number of replicas",
                )
            for reps in assignment.values():
                if len(set(reps)) != len(reps):
                    raise TopicError(
                        ErrorCode.invalid_replica_assignment, "Duplicate replica assignment found"
                    )
                unknown = [b for b in reps if b not in brokers]
                if unknown:
                    raise TopicError(
                        ErrorCode.invalid_replica_assignment,
                        f"Unknown broker(s) in replica assignment: {unknown}",
                    )
            num_partitions, replication_factor = len(parts), sizes.pop()
        else:
            if num_partitions == -1:
                num_partitions = self.broker.config.num_partitions
            if replication_factor == -1:
                replication_factor = self.broker.config.default_replication_factor
            # the messages of Apache Kafka 4.4's (KRaft) controller
            if num_partitions <= 0:
                raise TopicError(
                    ErrorCode.invalid_partitions,
                    "Number of partitions was set to an invalid non-positive value.",
                )
            _check_batch_size(num_partitions)
            if replication_factor <= 0:
                raise TopicError(
                    ErrorCode.invalid_replication_factor,
                    "Replication factor must be larger than 0, or -1 to use the default value.",
                )
            if replication_factor > len(brokers):
                raise TopicError(
                    ErrorCode.invalid_replication_factor,
                    f"Unable to replicate the partition {replication_factor} time(s): The target "
                    f"replication factor of {replication_factor} cannot be reached because only "
                    f"{len(brokers)} broker(s) are registered or some brokers have all their log "
                    "directories cordoned.",
                )
            assignment = assign_replicas(
                self._racks(), num_partitions, replication_factor
            )
        msg = validate_topic_configs(configs)
        if msg is not None:
            raise TopicError(ErrorCode.invalid_config, msg)
        return num_partitions, replication_factor, assignment

    def _racks(self) -> dict[int, str | None]:
        """Live broker id -> broker.rack, for replica placement."""
        return {b: info.rack for b, info in self.broker.cluster.list_brokers().items()}

    def _collision(self, name: str) -> str | None:
        if "." not in name and "_" not in name:
            return None
        norm = name.replace(".", "_")
        for other in self.by_name:
            if other != name and other.replace(".", "_") == norm:
                return other
        return None

    def create(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        assignment: dict[int, list[int]] | None = None,
        configs: dict[str, str] | None = None,
    ) -> TopicInfo:
        configs = dict(configs or {})
        _, _, assignment = self.check_new_topic(
            name, num_partitions, replication_factor, assignment, configs
        )
        info = self.broker.cluster.create_topic(
            name, assignment, configs, uuid.uuid4(), with_states=self.broker.replicas is None
        )
        self._remember(info)
        self._open_logs(info)
        if self.broker.replicas is not None:
            self.broker.replicas.apply_topic(info)
        log.info("created topic=%s partitions=%d id=%s", name, len(assignment), info.topic_id)
        warn_not_applied(name, configs)
        return info

    def auto_create(self, name: str) -> TopicInfo:
        """Create a topic with the broker defaults now (num.partitions,
        default.replication.factor)."""
        return self.create(name)

    def request_auto_create(self, name: str) -> None:
        """Schedule the automatic creation of ``name`` (Kafka 4.4's asynchronous one) to run once
        the current task yields; a second request while one is scheduled does nothing."""
        if name in self.auto_creating:
            return
        self.auto_creating.add(name)
        trio.lowlevel.spawn_system_task(self._auto_create_later, name)

    async def _auto_create_later(self, name: str) -> None:
        try:
            await trio.sleep(0)  # after the Metadata answer that asked for it
            if name not in self.by_name:
                self.auto_create(name)
        except TopicError as e:
            log.warning("auto-creation of topic=%s failed: %s %s", name, e.code.name, e)
        except Exception:  # a system task must not raise: it would end the broker's trio run
            log.exception("auto-creation of topic=%s failed", name)
        finally:
            self.auto_creating.discard(name)

    # -- deletion and growth ----------------------------------------------------------------
    def delete(self, name: str) -> TopicInfo:
        info = self.by_name.get(name)
        if info is None:  # Kafka answers with the error's default message
            raise TopicError(
                ErrorCode.unknown_topic_or_partition,
                "This server does not host this topic-partition.",
            )
        self.broker.cluster.delete_topic(name)
        if self.broker.replicas is not None:
            self.broker.replicas.remove_topic(name)
        else:
            del self.by_name[name]
            self.by_id.pop(info.topic_id, None)
            for p in info.partitions:
                self.broker.logs.delete_log(name, p)
        log.info("deleted topic=%s id=%s", name, info.topic_id)
        return info

    def add_partitions(
        self, name: str, count: int, assignments: list[list[int]] | None, validate_only: bool
    ) -> TopicInfo:
        info = self.by_name.get(name)
        if info is None:  # Kafka's controller answers with the code alone
            raise TopicError(ErrorCode.unknown_topic_or_partition, None)
        current = len(info.partitions)
        if count < current:  # the wording of Apache Kafka 4.4's controller
            raise TopicError(
                ErrorCode.invalid_partitions,
                f"The topic {name} currently has {current} partition(s); {count} would not be an "
                "increase.",
            )
        if count == current:
            raise TopicError(
                ErrorCode.invalid_partitions, f"Topic already has {current} partition(s)."
            )
        _check_batch_size(
            count - current, "Excessively large number of additional partitions per request."
        )
        brokers = sorted(self.broker.cluster.list_brokers())
        rf = len(next(iter(info.partitions.values())))
        if assignments is not None:
            if len(assignments) != count - current:
                raise TopicError(
                    ErrorCode.invalid_replica_assignment,
                    f"Increasing the number of partitions by {count - current} but "
                    f"{len(assignments)} assignments provided.",
                )
            for reps in assignments:
                if (
                    len(reps) != rf
                    or any(b not in brokers for b in reps)
                    or len(set(reps)) != len(reps)
                ):
                    raise TopicError(
                        ErrorCode.invalid_replica_assignment,
                        f"Invalid replica assignment {reps} for a topic of replication factor {rf}",
                    )
            new = {current + i: list(r) for i, r in enumerate(assignments)}
        else:
            first = info.partitions.get(0, [brokers[0]])[0]
            try:
                new = assign_replicas(
                    self._racks(),
                    count - current,
                    rf,
                    start_partition=current,
                    start_index=brokers.index(first) if first in brokers else -1,
                )
            except AssignmentError as e:
                raise TopicError(ErrorCode.invalid_replication_factor, str(e)) from None
        if validate_only:
            return info
        self.broker.cluster.add_partitions(name, new, with_states=self.broker.replicas is None)
        updated = self.broker.cluster.get_topic(name)
        assert updated is not None
        self._remember(updated)
        self._open_logs(updated)
        if self.broker.replicas is not None:
            self.broker.replicas.apply_topic(updated)
        return updated

    def set_configs(self, name: str, configs: dict[str, str]) -> None:
        self.broker.cluster.set_topic_configs(name, configs)
        updated = self.broker.cluster.get_topic(name)
        if updated is not None:
            self._remember(updated)
            apply_log_configs(self.broker, [name])
