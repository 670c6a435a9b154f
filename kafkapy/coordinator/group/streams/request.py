"""A StreamsGroupHeartbeat request as the coordinator sees it, its answer, and the request's own
rules (Kafka 4.4's GroupCoordinatorService.throwIfStreamsGroupHeartbeatRequestIsInvalid and
throwIfInvalidTopology), each refusal with Kafka's error and message."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode as E

from .model import StreamsTopology, TaskKey, Tasks

LEAVE_EPOCH = -1
LEAVE_STATIC_EPOCH = -2


@dataclass(slots=True)
class StreamsHeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology: StreamsTopology | None = None
    active: Tasks | None = None
    standby: Tasks | None = None
    warmup: Tasks | None = None
    process_id: str | None = None
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] | None = None
    task_offsets: dict[TaskKey, int] | None = None
    task_end_offsets: dict[TaskKey, int] | None = None
    shutdown_application: bool = False
    endpoint_information_epoch: int = 0
    client_id: str = ""
    client_host: str = ""
    version: int = 0


# a member's endpoint for interactive queries: ((host, port), active input partitions by topic,
# standby and warm-up input partitions by topic)
Endpoint = tuple[tuple[str, int], dict[str, set[int]], dict[str, set[int]]]


@dataclass(slots=True)
class StreamsHeartbeatResult:
    error: int = E.none
    message: str | None = None
    member_id: str = ""
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    # None: unchanged since the last answer
    active: Tasks | None = None
    standby: Tasks | None = None
    warmup: Tasks | None = None
    status: list[tuple[int, str]] = field(default_factory=list)
    endpoint_information_epoch: int = 0
    # None: unchanged; else (host, port, active partitions, standby partitions) per member
    partitions_by_endpoint: list[Endpoint] | None = None
    # internal topics the broker should create: name -> (partitions, replication factor, configs)
    to_create: dict[str, tuple[int, int, tuple[tuple[str, str], ...]]] = field(default_factory=dict)


class HeartbeatError(Exception):
    def __init__(self, error: int, message: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _blank(value: str | None) -> bool:
    return value is not None and not value.strip()


def validate(r: StreamsHeartbeatRequest) -> None:
    """Raise ``HeartbeatError`` for a request that breaks the API's own rules."""

    def invalid(message: str) -> HeartbeatError:
        return HeartbeatError(E.invalid_request, message)

    if _blank(r.member_id):
        raise invalid("MemberId can't be empty.")
    if _blank(r.group_id):
        raise invalid("GroupId can't be empty.")
    if _blank(r.instance_id):
        raise invalid("InstanceId can't be empty.")
    if _blank(r.rack_id):
        raise invalid("RackId can't be empty.")
    if r.member_epoch == 0:
        if r.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        for tasks, name in (
            (r.active, "ActiveTasks"),
            (r.standby, "StandbyTasks"),
            (r.warmup, "WarmupTasks"),
        ):
            if tasks is None or tasks:
                raise invalid(f"{name} must be empty when (re-)joining.")
        if r.topology is None:
            raise invalid("Topology must be non-null when (re-)joining.")
        for s in r.topology.subtopologies:
            for info in s.state_changelog_topics:
                if info.partitions != 0:
                    raise HeartbeatError(
                        E.streams_invalid_topology,
                        f"Changelog topic {info.name} must have an undefined partition count, "
                        f"but it is set to {info.partitions}.",
                    )
    elif r.member_epoch == LEAVE_STATIC_EPOCH:
        if r.instance_id is None:
            raise invalid("InstanceId can't be null.")
    elif r.member_epoch < LEAVE_STATIC_EPOCH:
        raise invalid(f"MemberEpoch is {r.member_epoch}, but must be greater than or equal to -2.")
    if r.active is not None or r.standby is not None or r.warmup is not None:
        if r.active is None or r.standby is None or r.warmup is None:
            raise invalid("If one task-type is non-null, all must be non-null.")
    if r.member_epoch != 0 and r.topology is not None:
        raise invalid("Topology can only be provided when (re-)joining.")
    if r.topology is not None and any(s.source_topic_regex for s in r.topology.subtopologies):
        raise invalid("Regular expressions for source topics are not supported yet.")
