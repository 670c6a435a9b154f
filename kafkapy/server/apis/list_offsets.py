"""ListOffsets (key 2), versions 1-11.

Special timestamps: -2 earliest (log start offset), -1 latest (high watermark; for
read_committed the last stable offset: the first offset of the earliest open transaction), -3
max timestamp (v7+: the offset and timestamp of the record with the largest timestamp), -4
earliest local (v8+: the log start offset, as there is no tiered storage), -5 latest tiered (v9+)
and -6 earliest pending upload (v11+; v11's layout is v10's): offset -1, as Kafka answers when
remote storage is off. Any other timestamp finds the first offset whose timestamp is >= it
through the time index, or -1 if there is none; as in Kafka, a found offset at or past the last
fetchable offset (high watermark, or last stable offset for read_committed) counts as none.
The answer carries the leader epoch (v4+).
A request from a replica (replica_id >= 0: a follower resetting an out-of-range fetch offset)
gets the log end offset for -1, as Kafka answers replicas (no isolation level applies).
A topic needs DESCRIBE (else TOPIC_AUTHORIZATION_FAILED on each of its partitions).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..partition_lookup import lookup
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TOPIC, authorized_names

EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5
READ_COMMITTED = 1


def _offset_for(
    plog, ts: int, epoch: int, replica: bool = False, read_committed: bool = False
) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) answered for one special or real timestamp."""
    if ts in (EARLIEST, EARLIEST_LOCAL):
        return -1, plog.log_start_offset, epoch
    if replica:
        fetchable = plog.log_end_offset
    elif read_committed:
        fetchable = plog.last_stable_offset
    else:
        fetchable = plog.high_watermark
    if ts == LATEST:
        return -1, fetchable, epoch
    if ts == MAX_TIMESTAMP:
        found_ts, off = plog.max_timestamp()
        if off >= fetchable:
            return -1, -1, -1
        return found_ts, off, epoch if off >= 0 else -1
    if ts == LATEST_TIERED:
        return -1, -1, -1
    if ts < 0:
        return -1, -1, -1
    found = plog.offset_for_timestamp(ts)
    if found is None:
        return -1, -1, -1
    off, found_ts = found
    if off >= fetchable:
        return -1, -1, -1
    return found_ts, off, epoch


@api("ListOffsets")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    replica = getattr(request, "replica_id", -1) >= 0
    read_committed = getattr(request, "isolation_level", 0) == READ_COMMITTED
    topics = []
    allowed = authorized_names(ctx, DESCRIBE, TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        parts = []
        for p in t.partitions:
            if t.name not in allowed:
                parts.append(
                    build(
                        R.ListOffsetsPartitionResponse,
                        partition_index=p.partition_index,
                        error_code=ErrorCode.topic_authorization_failed,
                    )
                )
                continue
            ref = lookup(
                ctx.broker, t.name, p.partition_index, getattr(p, "current_leader_epoch", -1)
            )
            if ref.error != ErrorCode.none:
                parts.append(
                    build(
                        R.ListOffsetsPartitionResponse,
                        partition_index=p.partition_index,
                        error_code=ref.error,
                    )
                )
                continue
            ts, off, epoch = _offset_for(
                ref.log, p.timestamp, ref.leader_epoch, replica, read_committed
            )
            parts.append(
                build(
                    R.ListOffsetsPartitionResponse,
                    partition_index=p.partition_index,
                    error_code=ErrorCode.none,
                    timestamp=ts,
                    offset=off,
                    leader_epoch=epoch,
                )
            )
        topics.append(build(R.ListOffsetsTopicResponse, name=t.name, partitions=tuple(parts)))
    return build(R.ListOffsetsResponse, throttle_time=THROTTLE_NONE, topics=tuple(topics))
