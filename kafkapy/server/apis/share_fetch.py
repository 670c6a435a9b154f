"""ShareFetch (key 78), versions 1-2: a share group member (KIP-932) acquires records of the
share-partitions of its share session and, in the same request, acknowledges earlier ones.

The share session (server/share, kafkapy.coordinator.share.sessions): epoch 0 opens it with the
request's partitions (acknowledgements there: INVALID_REQUEST), later epochs add and forget
partitions, epoch -1 only acknowledges and closes it, releasing what the member still holds.
Then every session partition acquires what is available for the member (records whose lock
expired or that were released, then new records up to the high watermark; at most max_records,
whole batches unless share_acquire_mode is 1, record-limit) and answers the batches holding them
with the acquired ranges and their delivery counts; acquisition_lock_timeout is the group's
share.record.lock.duration.ms. The request's acknowledgements are applied after this first
acquisition, as Kafka runs both side by side: a record the request releases is not taken back
by its first pass, only by its wait when nothing else came. With nothing to acquire the request
waits up to max_wait_ms for
an append, a release or an expired lock. An incremental (epoch > 0) answer lists only the
partitions with records, an error or an acknowledgement result.

Errors: top level GROUP_AUTHORIZATION_FAILED (READ on the group), INVALID_REQUEST,
SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED
(group.share.max.share.sessions); per partition UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED,
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER; acknowledge errors INVALID_RECORD_STATE
(not acquired by this member, or its lock expired) and INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any

import trio

from kafkapy.clock import now_ms
from kafkapy.coordinator.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import build
from ..share.partitions import wake_key
from .group_common import GROUP_DENIED, group_denied
from .share_common import acknowledge, leader_of, manager, share_answer, topic_errors

RECORD_LIMIT = 1


def _answer(R: Any, code: int, lock_ms: int, topics: Any = (), message: str | None = None) -> Any:
    return share_answer(R.ShareFetchResponse, code, lock_ms, topics, message)


@api("ShareFetch")
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
    requested = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions]
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    forgotten = [(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions]
    now = now_ms()
    if epoch == FINAL_EPOCH:
        if any(not p.acknowledgement_batches for t in request.topics for p in t.partitions):
            return _answer(R, ErrorCode.invalid_request, lock_ms)
        if mgr.sessions.get(gid, mid) is None:
            return _answer(R, ErrorCode.share_session_not_found, lock_ms)
        final_acks = acknowledge(ctx, gid, mid, request.topics, now)
        mgr.sessions.close(gid, mid)
        mgr.release_member(gid, mid)
        return _answer(R, ErrorCode.none, lock_ms, _topics(R, ctx, {}, {}, final_acks, None))
    if epoch == INITIAL_EPOCH and has_acks:
        return _answer(R, ErrorCode.invalid_request, lock_ms)
    _, new_errors = topic_errors(ctx, requested)
    err, session, full = mgr.sessions.open_or_update(
        gid, mid, epoch, [k for k in requested if k not in new_errors], forgotten
    )
    if err:
        return _answer(R, err, lock_ms)
    acks: dict = {}
    keys = list(session.partitions)
    deadline = trio.current_time() + max(request.max_wait.total_seconds(), 0.0)
    record_limit = getattr(request, "share_acquire_mode", 0) == RECORD_LIMIT
    while True:
        infos, errors = topic_errors(ctx, keys)
        errors.update(new_errors)
        watched = [(infos[t].name, p) for t, p in keys if t in infos] + [wake_key(gid)]
        with ctx.broker.appended.watch(watched) as w:
            now = now_ms()
            fetched: dict = {}
            budget = max(int(request.max_records), 1)
            max_bytes = max(int(request.max_bytes), 1)
            for key in keys:
                if key in errors or budget <= 0:
                    continue
                info = infos[key[0]]
                sp = mgr.partition(gid, info, key[1], now)
                if sp is None:
                    continue
                got = mgr.read(gid, info, key[1], sp, mid, budget, max_bytes, now,
                               record_limit=record_limit)
                if got.acquired:
                    mgr.persist((gid, key[0], key[1]), sp, now)
                    fetched[key] = got
                    budget -= sum(last - first + 1 for first, last, _ in got.acquired)
                    max_bytes -= len(got.records)
            if has_acks:  # after the first pass, as Kafka acquires before it acknowledges: a
                # record released here goes to the next fetch, not back into this one
                acks = acknowledge(ctx, gid, mid, request.topics, now_ms())
                has_acks = False
            left = deadline - trio.current_time()
            if fetched or left <= 0 or errors:
                break
            lock_at = mgr.next_deadline([(gid, t, p) for t, p in keys])
            wake = deadline
            if lock_at is not None:
                wake = min(deadline, trio.current_time() + max(lock_at - now, 0) / 1000 + 0.001)
            await w.wait(wake)
    listed = None if full else set(fetched) | set(acks) | set(errors)
    partitions = {k: infos.get(k[0]) for k in keys}
    partitions.update({k: None for k in new_errors})
    return _answer(
        R, ErrorCode.none, lock_ms, _topics(R, ctx, partitions, fetched, acks, listed, errors)
    )


def _topics(
    R: Any, ctx: Any, partitions: dict, fetched: dict, acks: dict, listed: set | None,
    errors: dict | None = None,
) -> list:
    errors = errors or {}
    order = list(partitions) + [k for k in acks if k not in partitions]
    by_topic: dict = {}
    for key in order:
        if listed is not None and key not in listed:
            continue
        tid, p = key
        info = partitions.get(key) or ctx.broker.topics.get_by_id(tid)
        leader, epoch = leader_of(ctx, info, p)
        got = fetched.get(key)
        ack_err, ack_msg = acks.get(key, (ErrorCode.none, None))
        by_topic.setdefault(tid, []).append(build(
            R.PartitionData,
            partition_index=p,
            error_code=ErrorCode(errors.get(key, ErrorCode.none)),
            error_message=None,
            acknowledge_error_code=int(ack_err),
            acknowledge_error_message=ack_msg,
            current_leader=build(R.LeaderIdAndEpoch, leader_id=leader, leader_epoch=epoch),
            records=got.records if got is not None else b"",
            acquired_records=tuple(
                build(R.AcquiredRecords, first_offset=f, last_offset=la, delivery_count=c)
                for f, la, c in (got.acquired if got is not None else ())
            ),
        ))
    return [
        build(R.ShareFetchableTopicResponse, topic_id=tid, partitions=tuple(parts))
        for tid, parts in by_topic.items()
    ]
