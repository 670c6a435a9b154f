"""ShareAcknowledge (key 79), versions 1-2: a share group member (KIP-932) acknowledges records
it acquired with ShareFetch, without fetching: ACCEPT (1), RELEASE (2, delivered again, or
archived at share.delivery.count.limit), REJECT (3, archived), GAP (0, an offset with no record)
and RENEW (4, from v2: the lock is extended by share.record.lock.duration.ms). The share session
must exist with this epoch (epoch 0: INVALID_SHARE_SESSION_EPOCH); epoch -1 closes it after the
acknowledgements and releases what the member still holds. The new states are written to
__share_group_state before the answer. Per partition: INVALID_RECORD_STATE (a record not
acquired by this member, or whose lock expired), INVALID_REQUEST, UNKNOWN_TOPIC_ID,
TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER.

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED) and on each topic.
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.share.sessions import FINAL_EPOCH
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import build
from .group_common import GROUP_DENIED, group_denied
from .share_common import acknowledge, leader_of, manager, share_answer


def _answer(R: Any, code: int, lock_ms: int, topics: Any = ()) -> Any:
    return share_answer(R.ShareAcknowledgeResponse, code, lock_ms, topics)


@api("ShareAcknowledge")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    gid = request.group_id or ""
    mid = request.member_id or ""
    if group_denied(ctx, gid):
        return _answer(R, GROUP_DENIED, 0)
    if not gid or not mid:
        return _answer(R, ErrorCode.invalid_request, 0)
    mgr = manager(ctx)
    await mgr.ensure_loaded()
    lock_ms = mgr.lock_duration_ms(gid)
    epoch = request.share_session_epoch
    if epoch == FINAL_EPOCH:
        if mgr.sessions.get(gid, mid) is None:
            return _answer(R, ErrorCode.share_session_not_found, lock_ms)
    else:
        err, _session = mgr.sessions.acknowledge_step(gid, mid, epoch)
        if err:
            return _answer(R, err, lock_ms)
    acks = acknowledge(ctx, gid, mid, request.topics, now_ms())
    if epoch == FINAL_EPOCH:
        mgr.sessions.close(gid, mid)
        mgr.release_member(gid, mid)
    by_topic: dict = {}
    for t in request.topics:
        info = ctx.broker.topics.get_by_id(t.topic_id) if t.topic_id is not None else None
        for p in t.partitions:
            if not p.acknowledgement_batches:  # nothing to answer for it, as in Kafka
                continue
            err, msg = acks.get((t.topic_id, p.partition_index), (ErrorCode.none, None))
            leader, leader_epoch = leader_of(ctx, info, p.partition_index)
            by_topic.setdefault(t.topic_id, []).append(build(
                R.PartitionData, partition_index=p.partition_index, error_code=ErrorCode(err),
                error_message=msg,
                current_leader=build(R.LeaderIdAndEpoch, leader_id=leader,
                                     leader_epoch=leader_epoch),
            ))
    return _answer(R, ErrorCode.none, lock_ms, [
        build(R.ShareAcknowledgeTopicResponse, topic_id=tid, partitions=tuple(parts))
        for tid, parts in by_topic.items()
    ])
