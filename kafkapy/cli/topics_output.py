"""What `kafkapy topics --describe` prints, as Kafka's tool prints it (sans-io): a topic line
(id, partition count, replication factor, non-default configs) and one line per partition
(leader, replicas, ISR, reassignment, ELR), filtered by the partition report options."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PartitionInfo:
    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]
    elr: list[int] | None = None
    last_known_elr: list[int] | None = None
    adding: list[int] | None = None  # set while the partition is being reassigned
    removing: list[int] | None = None

    @property
    def replication_factor(self) -> int:
        if self.adding is None:
            return len(self.replicas)
        return len([r for r in self.replicas if r not in self.adding])


@dataclass
class TopicInfo:
    name: str
    topic_id: str
    partitions: list[PartitionInfo]
    configs: list[tuple[str, str | None, bool]] = field(
        default_factory=list
    )  # name, value, default

    @property
    def overridden(self) -> list[tuple[str, str | None]]:
        return [(n, v) for n, v, is_default in self.configs if not is_default]

    def min_isr(self) -> int:
        for n, v, _ in self.configs:
            if n == "min.insync.replicas" and v is not None:
                try:
                    return int(v)
                except ValueError:
                    return 1
        return 1


def _ids(xs: list[int] | None) -> str:
    return ",".join(str(x) for x in xs or [])


def topic_line(t: TopicInfo) -> str:
    configs = ",".join(f"{n}={'null' if v is None else v}" for n, v in t.overridden)
    parts = [f"Topic: {t.name}"]
    if t.topic_id and t.topic_id != "AAAAAAAAAAAAAAAAAAAAAA":
        parts.append(f"TopicId: {t.topic_id}")
    rf = t.partitions[0].replication_factor if t.partitions else 0
    parts += [
        f"PartitionCount: {len(t.partitions)}",
        f"ReplicationFactor: {rf}",
        f"Configs: {configs}",
    ]
    return "\t".join(parts)


def partition_line(topic: str, p: PartitionInfo) -> str:
    leader = "none" if p.leader is None or p.leader < 0 else str(p.leader)
    elr = "N/A" if p.elr is None else _ids(p.elr)
    lke = "N/A" if p.last_known_elr is None else _ids(p.last_known_elr)
    moving = ""
    if p.adding is not None:
        moving = f"\tAdding Replicas: {_ids(p.adding)}\tRemoving Replicas: {_ids(p.removing)}"
    return (
        f"\tTopic: {topic}\tPartition: {p.partition}\tLeader: {leader}\tReplicas: "
        f"{_ids(p.replicas)}\tIsr: {_ids(p.isr)}{moving}\tElr: {elr}\tLastKnownElr: {lke}"
    )


def describe_lines(topics: list[TopicInfo], opts, live_brokers: set[int]) -> list[str]:
    reports = (
        opts.under_replicated_partitions
        or opts.unavailable_partitions
        or opts.under_min_isr_partitions
        or opts.at_min_isr_partitions
    )
    describe_configs = not reports
    describe_partitions = not opts.topics_with_overrides
    lines: list[str] = []
    for t in topics:
        parts = sorted(t.partitions, key=lambda p: p.partition)
        if describe_configs and parts and (not opts.topics_with_overrides or t.overridden):
            lines.append(topic_line(TopicInfo(t.name, t.topic_id, parts, t.configs)))
        if not describe_partitions:
            continue
        min_isr = t.min_isr()
        for p in parts:
            has_leader = p.leader is not None and p.leader >= 0
            show = describe_configs
            show |= opts.under_replicated_partitions and p.replication_factor - len(p.isr) > 0
            show |= opts.unavailable_partitions and (not has_leader or p.leader not in live_brokers)
            show |= opts.under_min_isr_partitions and (not has_leader or len(p.isr) < min_isr)
            show |= opts.at_min_isr_partitions and len(p.isr) == min_isr
            if show:
                lines.append(partition_line(t.name, p))
    return lines
