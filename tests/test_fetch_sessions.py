"""The fetch session cache and contexts (server/fetch_sessions.py) follow Kafka 3.9's rules:
session metadata, epochs, errors, what incremental responses include, and eviction."""

from __future__ import annotations

import random
import uuid

import pytest

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.fetch_request import FetchPartition, FetchTopic, ForgottenTopic
from kafkapy.protocol.fetch_response import PartitionResult, TopicResult
from kafkapy.server.fetch_sessions import (
    EVICTION_MS,
    INT32_MAX,
    FetchSessionCache,
    Full,
    Incremental,
    SessionError,
    Sessionless,
    StaleEpoch,
    next_epoch,
)

T0 = 1_000_000


def topics(spec, by_id=False):
    """[(topic, [(partition, fetch offset), ...]), ...] as a request's topics."""
    return [
        FetchTopic(None if by_id else t, t if by_id else None,
                   [FetchPartition(p, off, 1 << 20) for p, off in parts])
        for t, parts in spec
    ]


def answer(context, hw=None, records=None, errors=None):
    """Results for every partition the context reads (all of a full fetch's, all of a
    session's): high watermark ``hw[(topic, p)]`` (default 10), records bytes, errors."""
    out = []
    for ft in context.topics:
        tr = TopicResult(ft.topic or "", ft.topic_id or uuid.UUID(int=0))
        for fp in ft.partitions:
            key = (ft.topic if ft.topic is not None else ft.topic_id, fp.partition)
            pr = PartitionResult(fp.partition, high_watermark=(hw or {}).get(key, 10),
                                 log_start_offset=0, request=fp)
            n = (records or {}).get(key, 0)
            pr.regions = [_Blob(n)] if n else []
            pr.error_code = (errors or {}).get(key, 0)
            tr.partitions.append(pr)
        out.append(tr)
    return out


class _Blob:
    def __init__(self, n):
        self.length = n


def listed(results):
    return [(t.name or t.topic_id, p.partition) for t in results for p in t.partitions]


def open_session(cache, spec, now=T0, version=12, follower=False):
    ctx = cache.new_context(version, 0, 0, follower, topics(spec, version >= 13), [], now)
    assert isinstance(ctx, Full)
    sid, _ = ctx.finish(answer(ctx), now)
    assert sid != 0
    return sid


def test_epochs_count_up_and_wrap():
    assert [next_epoch(e) for e in (-1, 0, 1, INT32_MAX - 1, INT32_MAX)] == [
        -1, 1, 2, INT32_MAX, 1
    ]


def test_full_fetch_opens_a_session_and_incremental_ones_advance_its_epoch():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 5), (1, 5)])])
    session = cache.sessions[sid]
    assert session.epoch == 1 and len(cache) == 1
    for epoch in (1, 2, 3):
        ctx = cache.new_context(12, sid, epoch, False, [], [], T0)
        assert isinstance(ctx, Incremental)
        assert [(t.topic, [p.partition for p in t.partitions]) for t in ctx.topics] == [
            ("t", [0, 1])
        ]
        assert ctx.finish(answer(ctx), T0) == (sid, [])  # nothing changed: nothing listed
    assert session.epoch == 4


def test_session_errors():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 0)])])
    assert cache.new_context(12, sid + 1, 1, False, [], [], T0) == SessionError(
        ErrorCode.fetch_session_id_not_found
    )
    assert cache.new_context(12, sid, 7, False, [], [], T0) == SessionError(
        ErrorCode.invalid_fetch_session_epoch
    )
    # a session opened by topic name cannot go on with topic ids, and the reverse
    assert cache.new_context(13, sid, 1, False, [], [], T0) == SessionError(
        ErrorCode.fetch_session_topic_id_error
    )
    tid = uuid.uuid4()
    by_id = open_session(cache, [(tid, [(0, 0)])], version=13)
    assert cache.new_context(12, by_id, 1, False, [], [], T0) == SessionError(
        ErrorCode.fetch_session_topic_id_error
    )
    assert isinstance(cache.new_context(13, by_id, 1, False, [], [], T0), Incremental)


def test_full_fetches_close_the_named_session_and_epoch_minus_one_opens_none():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 0)])])
    ctx = cache.new_context(12, sid, -1, False, topics([("t", [(0, 0)])]), [], T0)
    assert isinstance(ctx, Sessionless) and sid not in cache.sessions
    assert ctx.finish(answer(ctx), T0)[0] == 0 and len(cache) == 0
    sid = open_session(cache, [("t", [(0, 0)])])
    ctx = cache.new_context(12, sid, 0, False, topics([("t", [(0, 0)])]), [], T0)
    assert isinstance(ctx, Full) and sid not in cache.sessions  # closed, a new one comes
    new, _ = ctx.finish(answer(ctx), T0)
    assert new not in (0, sid) and list(cache.sessions) == [new]


def test_incremental_requests_add_update_and_forget_partitions():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("a", [(0, 0), (1, 0)])])
    changed = topics([("a", [(1, 7)]), ("b", [(0, 3)])])
    ctx = cache.new_context(12, sid, 1, False, changed, [ForgottenTopic("a", None, [0])], T0)
    cached = cache.sessions[sid].partitions.values()
    parts = {(cp.topic, cp.partition): cp.fetch_offset for cp in cached}
    assert parts == {("a", 1): 7, ("b", 0): 3}
    # a new partition is always answered the first time (its high watermark is unknown)
    assert listed(ctx.finish(answer(ctx), T0)[1]) == [("b", 0)]
    # forgetting every partition ends the session: the request is answered sessionless
    ctx = cache.new_context(
        12, sid, 2, False, [], [ForgottenTopic("a", None, [1]), ForgottenTopic("b", None, [0])], T0
    )
    assert isinstance(ctx, Sessionless) and sid not in cache.sessions


def test_incremental_responses_hold_only_what_changed():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 10), (1, 10), (2, 10), (3, 10)])])

    def fetch(epoch, **kw):
        ctx = cache.new_context(12, sid, epoch, False, [], [], T0)
        return listed(ctx.finish(answer(ctx, **kw), T0)[1])

    assert fetch(1) == []
    assert fetch(2, hw={("t", 1): 12}, records={("t", 1): 100}) == [("t", 1)]
    assert fetch(3, hw={("t", 1): 12}) == []  # same high watermark, no records
    assert fetch(4, hw={("t", 1): 12}, errors={("t", 2): ErrorCode.not_leader_or_follower}) == [
        ("t", 2)
    ]
    # the error is gone: the partition is sent again (its cached high watermark was reset)
    assert fetch(5, hw={("t", 1): 12}) == [("t", 2)]
    assert fetch(6, hw={("t", 1): 12}) == []


def test_partitions_with_records_move_to_the_end():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 0), (1, 0), (2, 0)])])
    ctx = cache.new_context(12, sid, 1, False, [], [], T0)
    ctx.finish(answer(ctx, records={("t", 0): 5}), T0)
    order = [cp.partition for cp in cache.sessions[sid].partitions.values()]
    assert order == [1, 2, 0]
    ctx = cache.new_context(12, sid, 2, False, [], [], T0)
    assert [p.partition for t in ctx.topics for p in t.partitions] == [1, 2, 0]


def test_a_duplicate_request_finds_the_epoch_moved():
    cache = FetchSessionCache(10)
    sid = open_session(cache, [("t", [(0, 0)])])
    first = cache.new_context(12, sid, 1, False, [], [], T0)
    second = cache.new_context(12, sid, 2, False, [], [], T0)  # the client went on meanwhile
    with pytest.raises(StaleEpoch):
        first.finish(answer(first), T0)
    assert second.finish(answer(second), T0)[0] == sid


def test_no_session_without_room_and_stale_sessions_evicted_first():
    cache = FetchSessionCache(2, rng=random.Random(1))
    a = open_session(cache, [("t", [(0, 0)])], now=T0)
    b = open_session(cache, [("t", [(0, 0), (1, 0), (2, 0)])], now=T0 + 1)
    # both young: a consumer's new session of any size evicts neither
    ctx = cache.new_context(12, 0, 0, False, topics([("u", [(p, 0) for p in range(9)])]), [],
                            T0 + 2)
    assert ctx.finish(answer(ctx), T0 + 2)[0] == 0 and set(cache.sessions) == {a, b}
    # b is used again; a is left alone until it is stale: a goes, whatever its size
    cache.new_context(12, b, 1, False, [], [], T0 + EVICTION_MS)
    later = T0 + EVICTION_MS + 10
    c = open_session(cache, [("v", [(0, 0)])], now=later)
    assert set(cache.sessions) == {b, c} and cache.evictions == 1


def test_followers_evict_consumers_and_bigger_sessions_evict_smaller_old_ones():
    cache = FetchSessionCache(2, rng=random.Random(2))
    small = open_session(cache, [("t", [(0, 0)])], now=T0)
    big = open_session(cache, [("t", [(p, 0) for p in range(5)])], now=T0)
    # a follower (privileged) may evict a young consumer session: the smallest goes
    now = T0 + 1000
    for sid, epoch in ((small, 1), (big, 1)):
        cache.new_context(12, sid, epoch, False, [], [], now)
    f = open_session(cache, [("t", [(0, 0)])], now=now, follower=True)
    assert set(cache.sessions) == {big, f}
    # consumer sessions older than the eviction time are evictable by bigger ones
    now = T0 + EVICTION_MS + 5000
    cache.new_context(12, big, 2, False, [], [], now)
    cache.new_context(12, f, 1, True, [], [], now)
    assert open_session_or_zero(cache, 3, now) == 0  # smaller than big: big stays
    assert (sid := open_session_or_zero(cache, 6, now)) != 0
    assert set(cache.sessions) == {f, sid}
    # a consumer's session never evicts a follower's (unless it is stale)
    now += EVICTION_MS + 1
    cache.new_context(12, f, 2, True, [], [], now)
    cache.new_context(12, sid, 1, False, [], [], now)
    assert open_session_or_zero(cache, 7, now) != 0  # bigger than sid: sid goes, f stays
    assert f in cache.sessions and sid not in cache.sessions
    assert open_session_or_zero(cache, 1000, now) == 0


def open_session_or_zero(cache, size, now):
    ctx = cache.new_context(12, 0, 0, False, topics([("w", [(p, 0) for p in range(size)])]), [],
                            now)
    return ctx.finish(answer(ctx), now)[0]


def test_zero_slots_means_no_sessions():
    cache = FetchSessionCache(0)
    ctx = cache.new_context(12, 0, 0, False, topics([("t", [(0, 0)])]), [], T0)
    assert ctx.finish(answer(ctx), T0)[0] == 0 and len(cache) == 0
