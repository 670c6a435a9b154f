"""A streams group (KIP-1071) and its members, as Kafka 4.4's StreamsGroup and StreamsGroupMember.

A streams group runs one Kafka Streams application: its members (one per stream thread, several
per process) send the application's *topology* when they join: subtopologies, each reading
source topics (and repartition topics other subtopologies write), with state changelog topics.
The broker turns each subtopology into tasks, one per partition of its input, and assigns the
tasks to the members: *active* tasks (processing) and *standby* tasks (state replicas on another
process, group.streams.num.standby.replicas).

Tasks are keyed by subtopology id and partition (``Tasks``: subtopology id -> partitions).
Membership, epochs and reconciliation follow the consumer protocol (KIP-848): each member moves
from its current assignment to its target one, revoking active tasks before they are given to
another member (``reconcile``).

Group states (Kafka's StreamsGroupState): Empty (no members), NotReady (the topology is not
validated: source or internal topics missing or wrongly partitioned), Assigning (group epoch
ahead of the assignment epoch), Reconciling (a member not yet at the assignment epoch), Stable,
Dead.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

from ..classic import OffsetAndMetadata

Tasks = dict[str, set[int]]
TaskKey = tuple[str, int]


class MemberState(IntEnum):
    """Kafka's streams MemberState (same byte values)."""

    STABLE = 0
    UNREVOKED_TASKS = 1
    UNRELEASED_TASKS = 2
    UNKNOWN = 127


def copy_tasks(tasks: Tasks) -> Tasks:
    return {s: set(ps) for s, ps in tasks.items() if ps}


def tasks_equal(a: Tasks, b: Tasks) -> bool:
    return copy_tasks(a) == copy_tasks(b)


def merge_tasks(a: Tasks, b: Tasks) -> Tasks:
    out = copy_tasks(a)
    for s, ps in b.items():
        if ps:
            out.setdefault(s, set()).update(ps)
    return out


def contains_any(owned: Tasks, tasks: Tasks) -> bool:
    return any(owned.get(s, set()) & ps for s, ps in tasks.items())


@dataclass(slots=True)
class TasksTuple:
    """Active, standby and warm-up tasks (Kafka's TasksTuple)."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    def copy(self) -> TasksTuple:
        return TasksTuple(
            copy_tasks(self.active), copy_tasks(self.standby), copy_tasks(self.warmup)
        )

    def is_empty(self) -> bool:
        return not (copy_tasks(self.active) or copy_tasks(self.standby) or copy_tasks(self.warmup))

    def contains_any(self, other: TasksTuple) -> bool:
        return (
            contains_any(self.active, other.active)
            or contains_any(self.standby, other.standby)
            or contains_any(self.warmup, other.warmup)
        )

    def merge(self, other: TasksTuple) -> TasksTuple:
        return TasksTuple(
            merge_tasks(self.active, other.active),
            merge_tasks(self.standby, other.standby),
            merge_tasks(self.warmup, other.warmup),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TasksTuple):
            return NotImplemented
        return (
            tasks_equal(self.active, other.active)
            and tasks_equal(self.standby, other.standby)
            and tasks_equal(self.warmup, other.warmup)
        )


EMPTY_TASKS = TasksTuple()


# -- the topology --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """An internal topic of the topology: its name, its partition count (0: the broker decides),
    its replication factor (0: the broker default) and its configs."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    # (source topic indexes, repartition source topic indexes) that must be co-partitioned
    copartition_groups: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    def input_topics(self) -> list[str]:
        return list(self.source_topics) + [t.name for t in self.repartition_source_topics]


@dataclass(frozen=True, slots=True)
class StreamsTopology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]

    def by_id(self) -> dict[str, Subtopology]:
        return {s.subtopology_id: s for s in self.subtopologies}

    def source_topic_map(self) -> dict[str, Subtopology]:
        """Each input topic (source or repartition source) -> the subtopology reading it."""
        out: dict[str, Subtopology] = {}
        for s in self.subtopologies:
            for t in s.input_topics():
                out[t] = s
        return out

    def required_topics(self) -> set[str]:
        out: set[str] = set()
        for s in self.subtopologies:
            out.update(s.source_topics)
            out.update(t.name for t in s.repartition_source_topics)
            out.update(t.name for t in s.state_changelog_topics)
        return out


# -- members -------------------------------------------------------------------------------------


@dataclass(slots=True)
class StreamsMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    task_offsets: dict[TaskKey, int] = field(default_factory=dict)
    task_end_offsets: dict[TaskKey, int] = field(default_factory=dict)
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: TasksTuple = field(default_factory=TasksTuple)
    pending_revocation: TasksTuple = field(default_factory=TasksTuple)
    # the member epoch at which each assigned (or pending revocation) active task was given
    active_epochs: dict[TaskKey, int] = field(default_factory=dict)

    def copy(self, **changes: object) -> StreamsMember:
        m = replace(self, **changes)  # type: ignore[arg-type]
        if "assigned" not in changes:
            m.assigned = self.assigned.copy()
        if "pending_revocation" not in changes:
            m.pending_revocation = self.pending_revocation.copy()
        if "active_epochs" not in changes:
            m.active_epochs = dict(self.active_epochs)
        return m

    def metadata(self) -> tuple[object, ...]:
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.rebalance_timeout_ms,
            self.topology_epoch,
            self.process_id,
            self.user_endpoint,
            tuple(sorted(self.client_tags.items())),
        )

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == epoch


class StreamsGroup:
    group_type = "streams"
    protocol_type = "streams"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.assignment_timestamp_ms = 0
        self.members: dict[str, StreamsMember] = {}
        self.target: dict[str, TasksTuple] = {}
        self.topology: StreamsTopology | None = None
        self.configured: object | None = None  # a configure.ConfiguredTopology
        self.metadata_hash: object = None
        self.validated_topology_epoch = -1
        self.last_assignment_configs: dict[str, str] = {}
        self.shutdown_requested_by: str | None = None
        self.endpoint_information_epoch = 0
        self.offsets: dict[tuple[str, int], OffsetAndMetadata] = {}

    def __repr__(self) -> str:
        return f"StreamsGroup({self.group_id!r}, {self.state}, epoch={self.group_epoch})"

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return "NotReady"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if not m.is_reconciled_to(self.assignment_epoch):
                return "Reconciling"
        return "Stable"

    def is_empty(self) -> bool:
        return not self.members

    def remove_member(self, member_id: str) -> StreamsMember | None:
        self.target.pop(member_id, None)
        member = self.members.pop(member_id, None)
        if not self.members:
            self.shutdown_requested_by = None
        return member

    # -- who holds a task now (Kafka keeps these maps; small groups compute them) --------------
    def active_owner_process(self, subtopology: str, partition: int) -> str | None:
        for m in self.members.values():
            for tasks in (m.assigned.active, m.pending_revocation.active):
                if partition in tasks.get(subtopology, ()):
                    return m.process_id
        return None

    def standby_processes(self, subtopology: str, partition: int) -> set[str]:
        return {
            m.process_id
            for m in self.members.values()
            for tasks in (m.assigned.standby, m.pending_revocation.standby)
            if partition in tasks.get(subtopology, ())
        }

    def warmup_processes(self, subtopology: str, partition: int) -> set[str]:
        return {
            m.process_id
            for m in self.members.values()
            for tasks in (m.assigned.warmup, m.pending_revocation.warmup)
            if partition in tasks.get(subtopology, ())
        }

    def is_subscribed_to(self, topic: str) -> bool:
        if not self.members or self.topology is None:
            return False
        return topic in self.topology.source_topic_map()
