"""Helpers shared by ShareFetch and ShareAcknowledge (not an API itself): resolving a request's
topic ids to share-partitions (UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED without READ on the
topic, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER), applying acknowledgement batches
and writing the share-partitions' new state before the answer."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..responses import THROTTLE_NONE, build
from ..security.authorization import READ, TOPIC, authorized_names

PartitionKey = tuple[uuid.UUID, int]


def manager(ctx: Any) -> Any:
    return ctx.broker.groups.share_partitions


def topic_errors(ctx: Any, keys: list[PartitionKey]) -> tuple[dict, dict[PartitionKey, int]]:
    """(topic id -> TopicInfo of the usable ones, errors of the others)."""
    topics = ctx.broker.topics
    infos: dict[uuid.UUID, Any] = {}
    for tid, _ in keys:
        info = topics.get_by_id(tid) if tid is not None else None
        if info is not None:
            infos[tid] = info
    allowed = authorized_names(ctx, READ, TOPIC, {i.name for i in infos.values()})
    errors: dict[PartitionKey, int] = {}
    me = ctx.broker.broker_id
    for tid, p in keys:
        info = infos.get(tid)
        if info is None:
            errors[(tid, p)] = ErrorCode.unknown_topic_id
        elif info.name not in allowed:
            errors[(tid, p)] = ErrorCode.topic_authorization_failed
        elif p not in info.partitions:
            errors[(tid, p)] = ErrorCode.unknown_topic_or_partition
        elif (st := info.states.get(p)) is not None and st.leader != me:
            errors[(tid, p)] = ErrorCode.not_leader_or_follower
    return infos, errors


def leader_of(ctx: Any, info: Any, p: int) -> tuple[int, int]:
    if info is None:
        return -1, -1
    st = info.states.get(p)
    return (st.leader, st.leader_epoch) if st is not None else (ctx.broker.broker_id, 0)


def acknowledge(
    ctx: Any, group_id: str, member_id: str, topics: Any, now_ms: int
) -> dict[PartitionKey, tuple[int, str | None]]:
    """Apply the acknowledgement batches of ``topics`` (request topics with partitions holding
    ``acknowledgement_batches``): per partition (error, message)."""
    mgr = manager(ctx)
    keys = [(t.topic_id, p.partition_index) for t in topics for p in t.partitions
            if p.acknowledgement_batches]
    infos, errors = topic_errors(ctx, keys)
    out: dict[PartitionKey, tuple[int, str | None]] = {}
    limits = mgr.limits(group_id)
    changed = False
    for t in topics:
        for p in t.partitions:
            key = (t.topic_id, p.partition_index)
            if not p.acknowledgement_batches:
                continue
            if key in errors:
                out[key] = (errors[key], None)
                continue
            info = infos[t.topic_id]
            sp = mgr.partition(group_id, info, p.partition_index, now_ms)
            if sp is None:
                out[key] = (ErrorCode.not_leader_or_follower, None)
                continue
            sp.expire_locks(now_ms, limits)
            batches = [(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                       for b in p.acknowledgement_batches]
            err, msg = sp.acknowledge(member_id, batches, now_ms, limits)
            if not err:
                mgr.persist((group_id, t.topic_id, p.partition_index), sp, now_ms)
                changed = True
            out[key] = (err, msg)
    if changed:
        mgr.notify(group_id)
    return out


def share_answer(
    response_cls: Any, code: int, lock_ms: int, topics: Any = (), message: str | None = None
) -> Any:
    """A ShareFetch or ShareAcknowledge response (their top-level fields are the same); a
    request refused as a whole says no lock timeout, as Kafka's."""
    if code:
        lock_ms = 0
    return build(
        response_cls, throttle_time=THROTTLE_NONE, error_code=ErrorCode(code),
        error_message=message, acquisition_lock_timeout=datetime.timedelta(milliseconds=lock_ms),
        responses=tuple(topics), node_endpoints=(),
    )
