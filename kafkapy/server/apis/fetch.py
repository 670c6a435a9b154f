"""Fetch (key 1), versions 4-18 (v18 only adds a follower's high watermark tag, skipped).

Long-polls: the response goes out when at least min_bytes of records are available, an error is
to be reported, or max_wait_ms has passed; waiting is on append events, never by sleeping. Reads
whole batches starting with the batch that contains the fetch offset, up to the high watermark,
within partition_max_bytes and the response's max_bytes — except that the first partition with
data always returns at least one whole batch (KIP-74). Reports high watermark, last stable offset
and log start offset; OFFSET_OUT_OF_RANGE outside [log start, log end]; FENCED_LEADER_EPOCH /
UNKNOWN_LEADER_EPOCH for a stale or future current_leader_epoch. With those errors and
KAFKA_STORAGE_ERROR (a read that failed) the three offsets are -1, as Kafka 4.4 answers.
Topics are addressed by name up to v12 and by topic id from v13
(UNKNOWN_TOPIC_ID). Record bytes go from segment files to the socket with os.sendfile. The
request is read by hand (protocol/fetch_request.py), bounded as kio's reader is behind the
guard: a long poll with nothing new is most of what brokers answer. The request's topics are
looked up once per pass over them (again after each wait: they may have changed meanwhile).

isolation_level=1 (read_committed): consumers read up to the last stable offset (the first
offset of the earliest open transaction, bounded by the high watermark) and get, per partition,
the aborted transactions (producer id, first offset) overlapping the batches returned, from the
segments' .txnindex files; control batches are returned like any batch (clients skip them).

ZooKeeper mode: only the leader answers (else NOT_LEADER_OR_FOLLOWER). A fetch from a replica
(replica_id up to v14, replica_state from v15) reads up to the log end offset, and its fetch
offset is recorded as that follower's log end offset (high watermark, ISR expansion).

Fetch sessions (KIP-227, server/fetch_sessions.py): a full fetch (epoch 0) opens a session when
the cache (max.incremental.fetch.session.cache.slots) has room or may evict one; incremental
fetches then name only what changed and are answered with only the partitions that have records,
a new high watermark or log start offset, or an error; FETCH_SESSION_ID_NOT_FOUND,
INVALID_FETCH_SESSION_EPOCH and FETCH_SESSION_TOPIC_ID_ERROR as in Kafka. Followers' sessions are
privileged (they evict consumers'). An unchanged session partition is not even read.

Authorization (with an authorizer): a follower's fetch needs CLUSTER_ACTION on the cluster (else
every partition gets TOPIC_AUTHORIZATION_FAILED and nothing is recorded as its progress); a
consumer's needs READ on each topic (TOPIC_AUTHORIZATION_FAILED; an unknown topic id is still
UNKNOWN_TOPIC_ID, as in Kafka).

Quotas (server/quota_enforcement.py), consumers only: max_bytes is capped at what one quota window
of the consumer byte rate allows; the response's size (computed, not encoded:
protocol/fetch_response.fetch_response_size) counts against it (and the handler time against the
request quota). A throttled fetch is answered without data, with the throttle time,
and the connection is muted for it, as Kafka does.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import trio

from kafkapy import clock
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.fetch_request import parse_fetch_request
from kafkapy.protocol.fetch_response import (
    PartitionResult,
    TopicResult,
    encode_fetch_response,
    fetch_response_size,
)
from kafkapy.protocol.wire import DecodeError
from kafkapy.storage.errors import StorageError
from kafkapy.storage.file_region import FileRegion

from ..fetch_sessions import INVALID_SESSION_ID, Incremental, SessionError, StaleEpoch, next_epoch
from ..registry import api
from ..request_context import CloseConnection, RequestContext
from ..responses import RawResponse
from ..security.authorization import (
    CLUSTER_ACTION,
    READ,
    TOPIC,
    authorize_cluster,
    authorized_names,
)

ZERO_UUID = uuid.UUID(int=0)  # kio reads the zero topic id as None
READ_COMMITTED = 1


class _AllTopics:
    """The topics a follower without CLUSTER_ACTION may not fetch: all of them."""

    def __contains__(self, name: object) -> bool:
        return True


def _denied_topics(ctx, topics, resolved, replica_id):
    """None without an authorizer, else the topic names this fetch may not read."""
    if ctx.broker.authorizer is None:
        return None
    if replica_id >= 0:
        return None if authorize_cluster(ctx, CLUSTER_ACTION) else _AllTopics()
    names = set()
    for ft, info in zip(topics, resolved, strict=True):
        name = info.name if info else getattr(ft, "topic", None)
        if name is not None:
            names.add(name)
    return names - authorized_names(ctx, READ, TOPIC, names)


def _unknown_offsets(pr: PartitionResult) -> None:
    """A read that failed reports no offsets: high watermark, last stable and log start offset
    -1, as Kafka's ReplicaManager answers a read that threw (createLogReadResult(e))."""
    pr.high_watermark = pr.last_stable_offset = pr.log_start_offset = -1


def _resolve(broker, version, topics_req):
    """The TopicInfo each request topic refers to (by name up to v12, by id from v13), None
    for those unknown: looked up once per pass over the request."""
    topics = broker.topics
    if version >= 13:
        return [topics.get_by_id(ft.topic_id) for ft in topics_req]
    return [topics.get(ft.topic) for ft in topics_req]


def _watched(topics_req, resolved):
    """The (topic, partition) keys a waiting fetch is woken by."""
    keys = []
    for ft, info in zip(topics_req, resolved, strict=True):
        if info is not None:
            keys += [(info.name, fp.partition) for fp in ft.partitions]
    return keys


def _watch(broker, topics, resolved, context):
    """An armed watch on the fetch's partitions: an incremental session's own persistent one
    (re-armed: free however many partitions it has), else a new one."""
    if isinstance(context, Incremental) and context.cache.sessions.get(context.session.id) is (
        context.session
    ):  # a session still in the cache (an evicted one would leave its watch behind)
        session = context.session
        w = session.watch
        if w is None or w.closed:
            w = session.watch = broker.appended.watch(
                _watched(topics, resolved), persistent=True
            )
            return w
        if w.task is None:  # not in use by another request of this session (a duplicate)
            w.rearm()
            return w
    return broker.appended.watch(_watched(topics, resolved))


def replica_id_of(version, request) -> int:
    """The fetching replica's broker id (replica_id up to v14, replica_state from v15); -1 for
    consumers."""
    if version >= 15:
        state = getattr(request, "replica_state", None)
        return -1 if state is None else int(state.replica_id)
    return int(getattr(request, "replica_id", -1))


def _read_all(
    broker,
    version,
    request,
    topics_req,
    resolved,
    replica_id=-1,
    refused=None,
    denied=None,
    max_bytes=None,
    incremental=False,
):
    """One pass over the requested partitions. Returns (topic results, bytes, any error).

    ``incremental``: ``topics_req`` holds a session's cached partitions (server/
    fetch_sessions.py); one with nothing to read whose high watermark and log start offset are
    those it was last answered with is left out of the results (an incremental response would
    leave it out anyway) without reading its log."""
    remaining = request.max_bytes if max_bytes is None else max_bytes
    replicas = broker.replicas
    from_replica = replica_id >= 0 and replicas is not None
    total = 0
    errors = False
    read_committed = getattr(request, "isolation_level", 0) == READ_COMMITTED
    results = []
    missing_code = (
        ErrorCode.unknown_topic_id if version >= 13 else ErrorCode.unknown_topic_or_partition
    )
    for ft, info in zip(topics_req, resolved, strict=True):
        name = info.name if info else getattr(ft, "topic", "")
        tid = info.topic_id if info else getattr(ft, "topic_id", None) or ZERO_UUID
        tr = TopicResult(name=name or "", topic_id=tid)
        # a session partition found unchanged last time, whose log and topic view are the same
        # and whose log's stamp has not moved since, is unchanged still: skipped unread
        skip_same = incremental and info is not None and (denied is None or name not in denied)
        for fp in ft.partitions:
            if (
                skip_same
                and fp.info is info
                and fp.plog is not None
                and fp.plog.stamp == fp.stamp
                and (not refused or (name, fp.partition) not in refused)
            ):
                continue
            pr = PartitionResult(
                partition=fp.partition, aborted=[] if read_committed else None, request=fp
            )
            tr.partitions.append(pr)
            if denied is not None and (info is not None or version < 13) and name in denied:
                pr.error_code = ErrorCode.topic_authorization_failed
                pr.aborted = []  # refused before any read: an empty list, as Kafka's
                errors = True
                continue
            plog = broker.topics.log(info.name, fp.partition) if info else None
            if info is None or plog is None:
                pr.error_code = (
                    missing_code if info is None else ErrorCode.unknown_topic_or_partition
                )
                pr.aborted = []
                errors = True
                continue
            state = info.states.get(fp.partition)
            epoch = state.leader_epoch if state else 0
            if replicas is not None:
                rp = replicas.leader_partition(info.name, fp.partition)
                refusal = (refused or {}).get((info.name, fp.partition))
                if rp is None or refusal:
                    pr.error_code = refusal or ErrorCode.not_leader_or_follower
                    errors = True
                    continue
                epoch = rp.leader_epoch
            hw = pr.high_watermark = plog.high_watermark
            pr.last_stable_offset = plog.last_stable_offset if plog.has_transactions else hw
            start = pr.log_start_offset = plog.log_start_offset
            cle = fp.current_leader_epoch
            if cle >= 0 and cle != epoch:
                pr.error_code = (
                    ErrorCode.fenced_leader_epoch if cle < epoch else ErrorCode.unknown_leader_epoch
                )
                _unknown_offsets(pr)
                errors = True
                continue
            if incremental:
                fp.plog = None  # skipped next time only if found unchanged now
                if fp.high_watermark == hw and fp.local_log_start == start:
                    # nothing readable below ``end`` and still in range: nothing to say
                    leo = plog.log_end_offset
                    end = leo if from_replica else pr.last_stable_offset if read_committed else hw
                    if end <= fp.fetch_offset <= leo and start <= fp.fetch_offset:
                        if not plog.offline:
                            tr.partitions.pop()
                            fp.info, fp.plog, fp.stamp = info, plog, plog.stamp
                            continue
            limit = min(fp.partition_max_bytes, max(remaining, 0))
            try:
                if read_committed and not from_replica:
                    data, aborted = plog.read_committed(
                        fp.fetch_offset, limit, min_one_batch=(total == 0)
                    )
                    pr.aborted = [(a.producer_id, a.first_offset) for a in aborted]
                else:
                    data = plog.read(
                        fp.fetch_offset,
                        limit,
                        max_offset=None if from_replica else hw,
                        min_one_batch=(total == 0),
                    )
            except StorageError as e:  # OFFSET_OUT_OF_RANGE, KAFKA_STORAGE_ERROR
                pr.error_code = ErrorCode(e.error_code)
                _unknown_offsets(pr)
                errors = True
                continue
            pr.regions = data.regions
            total += data.size
            remaining -= data.size
        results.append(tr)
    return results, total, errors


@api("Fetch", raw=True)
async def handle(ctx: RequestContext, _request: Any) -> Any:
    try:
        request = parse_fetch_request(ctx.frame, ctx.header.body_offset, ctx.version)
    except DecodeError as e:
        raise CloseConnection(f"fetch request does not decode: {e}") from None
    broker = ctx.broker
    version = ctx.version
    replica_id = replica_id_of(version, request)
    context = broker.fetch_sessions.new_context(
        version,
        request.session_id,
        request.session_epoch,
        replica_id >= 0,
        request.topics,
        request.forgotten_topics_data,
        clock.monotonic_ms(),
    )
    if isinstance(context, SessionError):
        return RawResponse(encode_fetch_response(version, [], error_code=context.error))
    topics = context.topics  # the request's, or an incremental session's cached partitions
    incremental = isinstance(context, Incremental)
    max_wait = request.max_wait_ms / 1000
    deadline = trio.current_time() + max(max_wait, 0.0)
    resolved = _resolve(broker, version, topics)
    denied = _denied_topics(ctx, topics, resolved, replica_id)
    quotas = broker.client_quotas if broker.client_quotas.enabled and replica_id < 0 else None
    max_bytes = quotas.fetch_max_bytes(ctx, request.max_bytes) if quotas else None
    refused = {}
    if replica_id >= 0 and broker.replicas is not None and denied is None:
        # a follower's fetch: its fetch offset is its log end offset (moves the HW, the ISR)
        for ft, info in zip(topics, resolved, strict=True):
            if info is None:
                continue
            for fp in ft.partitions:
                err = broker.replicas.on_replica_fetch(
                    replica_id, info.name, fp.partition, fp.fetch_offset
                )
                if err:
                    refused[(info.name, fp.partition)] = err
    while True:
        results, total, errors = _read_all(
            broker,
            version,
            request,
            topics,
            resolved,
            replica_id,
            refused,
            denied,
            max_bytes,
            incremental,
        )
        if total >= request.min_bytes or errors or trio.current_time() >= deadline:
            break
        # watched from right after the read (nothing else ran in between): no change is missed
        await _watch(broker, topics, resolved, context).wait(deadline)
        resolved = _resolve(broker, version, topics)  # the topics may have changed meanwhile
    if quotas is not None:
        size = fetch_response_size(version, results)  # charged before the response is built
        throttle = quotas.fetch_throttle(ctx, size)
        if throttle:  # answered empty; a session stays as it is (Kafka's throttled response)
            error, session_id = ErrorCode.none, INVALID_SESSION_ID
            if isinstance(context, Incremental):  # ``incremental``, as mypy sees it
                session_id = context.session.id
                if context.session.epoch != next_epoch(context.request_epoch):
                    error = ErrorCode.invalid_fetch_session_epoch
            body = encode_fetch_response(
                version, [], error_code=error, session_id=session_id, throttle_ms=throttle
            )
            return RawResponse(body)
    try:
        session_id, results = context.finish(results, clock.monotonic_ms())
    except StaleEpoch as e:  # a later request of the session was served meanwhile
        body = encode_fetch_response(
            version, [], error_code=ErrorCode.invalid_fetch_session_epoch, session_id=e.session_id
        )
        return RawResponse(body)
    return RawResponse(
        encode_fetch_response(version, _own_regions(results), session_id=session_id)
    )


def _own_regions(results):
    """Give the response its own descriptors for the file regions it sends.

    A segment may be deleted (DeleteRecords, topic deletion) while the response is still being
    written; a duplicated descriptor keeps the file readable until the send is done, and the
    connection closes it afterwards (see channel.py, the connection's send).
    """
    for t in results:
        for p in t.partitions:
            p.regions = [FileRegion(os.dup(r.fileno), r.position, r.length) for r in p.regions]
    return results
