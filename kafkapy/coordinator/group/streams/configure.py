"""Configuring a streams topology against the topics that exist (Kafka 4.4's InternalTopicManager,
RepartitionTopics, CopartitionedTopicsEnforcer and ChangelogTopics).

Given the topology and each topic's partition count, it decides the partition count of every
internal topic: a repartition topic without a fixed count gets the largest partition count of the
inputs of the subtopologies writing to it; co-partitioned topics must agree (a flexible
repartition topic takes the group's count); a changelog topic gets its subtopology's task count
(the largest partition count of its inputs). Each subtopology then has as many tasks as its
largest input.

The outcome is a ``ConfiguredTopology``: ready (``subtopologies`` set) when every source topic
exists and every internal topic exists with the decided partition count; otherwise a status,
with the code and detail the StreamsGroupHeartbeat answer carries: MISSING_SOURCE_TOPICS (1),
INCORRECTLY_PARTITIONED_TOPICS (2) or MISSING_INTERNAL_TOPICS (3), the latter listing the
internal topics to create (``to_create``) — the broker creates them and the topology becomes
ready on a later heartbeat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .model import StreamsTopology, Subtopology

STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5

PartitionCount = Callable[[str], "int | None"]


@dataclass(frozen=True, slots=True)
class InternalTopic:
    name: str
    partitions: int
    replication_factor: int  # -1: the broker's default.replication.factor
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class ConfiguredTopology:
    epoch: int
    # subtopology id -> number of tasks; None when the topology could not be configured
    subtopologies: dict[str, int] | None = None
    internal_partitions: dict[str, int] = field(default_factory=dict)
    to_create: dict[str, InternalTopic] = field(default_factory=dict)
    status: tuple[int, str] | None = None

    @property
    def is_ready(self) -> bool:
        return self.subtopologies is not None and self.status is None


class TopicConfigurationError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def summarize(topics: list[str]) -> str:
    """Up to three names, then how many more (Kafka's summarizeTopics)."""
    if not topics:
        return "<none>"
    shown = ", ".join(topics[:3])
    if len(topics) > 3:
        shown += f" and {len(topics) - 3} additional topics"
    return shown


def configure_topics(
    topology: StreamsTopology, partitions_of: PartitionCount
) -> ConfiguredTopology:
    try:
        missing = sorted(
            {t for s in topology.subtopologies for t in s.source_topics if partitions_of(t) is None}
        )
        if missing:
            raise TopicConfigurationError(
                MISSING_SOURCE_TOPICS, f"Source topics {summarize(missing)} are missing."
            )
        decided = _decide_partition_counts(topology, partitions_of)
        tasks: dict[str, int] = {}
        to_create: dict[str, InternalTopic] = {}

        def count(topic: str) -> int:
            n = partitions_of(topic)
            return n if n is not None else decided[topic]

        for s in topology.subtopologies:
            inputs = s.input_topics()
            tasks[s.subtopology_id] = max((count(t) for t in inputs), default=0)
            for info in (*s.repartition_source_topics, *s.state_changelog_topics):
                n = info.partitions or decided.get(info.name) or count(info.name)
                to_create[info.name] = InternalTopic(
                    info.name, n, info.replication_factor or -1, info.configs
                )
        for name in sorted(topology.required_topics()):
            have = partitions_of(name)
            expected = to_create.get(name)
            if have is not None and expected is not None and have != expected.partitions:
                raise TopicConfigurationError(
                    INCORRECTLY_PARTITIONED_TOPICS,
                    f"Existing topic {name} has different number of partitions: expected "
                    f"{expected.partitions}, found {have}",
                )
        missing = [name for name in to_create if partitions_of(name) is None]
        status = None
        if missing:
            status = (
                MISSING_INTERNAL_TOPICS,
                "Internal topics are missing: " + summarize(sorted(missing)),
            )
        internal = {name: t.partitions for name, t in to_create.items()}
        to_create = {name: to_create[name] for name in missing}
        return ConfiguredTopology(topology.epoch, tasks, internal, to_create, status)
    except TopicConfigurationError as e:
        return ConfiguredTopology(topology.epoch, None, {}, {}, (e.code, str(e)))


def _decide_partition_counts(
    topology: StreamsTopology, partitions_of: PartitionCount
) -> dict[str, int]:
    decided: dict[str, int] = {}

    def known(topic: str) -> int | None:
        n = partitions_of(topic)
        return n if n is not None else decided.get(topic)

    # repartition topics: fixed counts first, then from the writers' inputs until nothing changes
    flexible: set[str] = set()
    for s in topology.subtopologies:
        for info in s.repartition_source_topics:
            if info.partitions:
                decided[info.name] = info.partitions
            elif partitions_of(info.name) is None:
                flexible.add(info.name)
    writers: dict[str, list[Subtopology]] = {}
    for s in topology.subtopologies:
        for t in s.repartition_sink_topics:
            writers.setdefault(t, []).append(s)
    changed = True
    while changed:
        changed = False
        for name in sorted(flexible - set(decided)):
            counts = [known(t) for w in writers.get(name, []) for t in w.input_topics()]
            if counts and all(c is not None for c in counts):
                decided[name] = max(c for c in counts if c is not None)
                changed = True
    if flexible - set(decided):
        raise TopicConfigurationError(
            MISSING_SOURCE_TOPICS,
            "Failed to compute number of partitions for all repartition topics, make sure all "
            "user input topics are created and all Pattern subscriptions match at least one "
            "topic in the cluster",
        )
    _enforce_copartitioning(topology, known, flexible, decided)
    # changelog topics: the largest input of their subtopology
    for s in topology.subtopologies:
        n = max((known(t) or 0 for t in s.input_topics()), default=0)
        for info in s.state_changelog_topics:
            if not info.partitions:
                decided[info.name] = n
    return decided


def _enforce_copartitioning(
    topology: StreamsTopology,
    known: Callable[[str], int | None],
    flexible: set[str],
    decided: dict[str, int],
) -> None:
    for s in topology.subtopologies:
        repartition = [t.name for t in s.repartition_source_topics]
        for sources, repartitions in s.copartition_groups:
            group = [s.source_topics[i] for i in sources if i < len(s.source_topics)]
            group += [repartition[i] for i in repartitions if i < len(repartition)]
            fixed = [t for t in group if t not in flexible]
            counts = {t: known(t) for t in fixed}
            if len(set(counts.values())) > 1:
                shown = ", ".join(f"{t}:{n}" for t, n in sorted(counts.items()))
                raise TopicConfigurationError(
                    INCORRECTLY_PARTITIONED_TOPICS,
                    f"Following topics do not have the same number of partitions: [{shown}]",
                )
            target = next(iter(counts.values()), None)
            if target is None:
                target = max((known(t) or 0 for t in group), default=0)
            for t in group:
                if t in flexible:
                    decided[t] = target
