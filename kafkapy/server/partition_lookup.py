"""Shared lookup for per-partition admin and offset APIs: topic, partition log, leader epoch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkapy.protocol.errors import ErrorCode


@dataclass(slots=True)
class PartitionRef:
    error: ErrorCode
    log: Any = None
    leader_epoch: int = -1


def lookup(broker, topic: str, partition: int, current_leader_epoch: int = -1) -> PartitionRef:
    """Find a partition led here; check the client's current leader epoch as Kafka does."""
    info = broker.topics.get(topic)
    if info is None or partition not in info.partitions:
        return PartitionRef(ErrorCode.unknown_topic_or_partition)
    plog = broker.topics.log(topic, partition)
    if plog is None:
        return PartitionRef(ErrorCode.not_leader_or_follower)
    if plog.offline:  # its log directory failed
        return PartitionRef(ErrorCode.kafka_storage_error)
    state = info.states.get(partition)
    epoch = state.leader_epoch if state else 0
    if broker.replicas is not None:  # ZooKeeper mode: only the leader answers
        rp = broker.replicas.leader_partition(topic, partition)
        if rp is None:
            return PartitionRef(ErrorCode.not_leader_or_follower)
        epoch = rp.leader_epoch
    if current_leader_epoch >= 0 and current_leader_epoch != epoch:
        code = (
            ErrorCode.fenced_leader_epoch
            if current_leader_epoch < epoch
            else ErrorCode.unknown_leader_epoch
        )
        return PartitionRef(code, plog, epoch)
    return PartitionRef(ErrorCode.none, plog, epoch)
