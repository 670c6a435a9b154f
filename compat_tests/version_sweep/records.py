"""Checks of the record APIs: Produce, Fetch, ListOffsets, DeleteRecords,
OffsetForLeaderEpoch."""

from __future__ import annotations

import uuid

from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, encode_batch

from ..rawclient import encode_request
from .builder import make
from .common import create_topic, decode_all, fetch_rows, list_offset, produce, seed_records
from .env import NOW_MS, SEED, SEED_TS_STEP, SWEEP, Env, ok


def check_produce(env: Env, v: int) -> None:
    recs = [
        Record(offset=i, timestamp=NOW_MS + 1 + i, key=None, value=f"p{v}-{i}".encode(), headers=[])
        for i in range(3)
    ]
    resp = env.request(
        make(
            "Produce",
            v,
            env,
            topic_data=[{"partition_data": [{"index": 0, "records": encode_batch(recs)}]}],
        )
    )
    (t,) = resp.responses
    if v >= 13:  # topics named by id (KIP-516), in the request and the answer
        assert t.topic_id == env.topic_id, t
    else:
        assert t.name == SWEEP
    (p,) = t.partition_responses
    assert p.index == 0
    assert ok(p.error_code), p
    assert p.base_offset == env.hw[0], f"base_offset {p.base_offset}, expected {env.hw[0]}"
    env.hw[0] = p.base_offset + len(recs)
    assert p.log_append_time is None, p  # -1: CreateTime topic
    if v >= 5:
        assert p.log_start_offset == 0, p
    if v >= 8:
        assert p.record_errors == () and p.error_message is None, p
    # The records are readable at the offsets the broker gave them.
    rows = [r for r in fetch_rows(env, 0, p.base_offset) if r.offset >= p.base_offset]
    assert [(r.offset, r.value) for r in rows[:3]] == [
        (p.base_offset + i, f"p{v}-{i}".encode()) for i in range(3)
    ]
    # acks=1 is answered like acks=-1; acks=0 gets no answer, and the connection goes on.
    one = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"a1-{v}".encode())]
    resp = env.request(
        make(
            "Produce",
            v,
            env,
            acks=1,
            topic_data=[{"partition_data": [{"records": encode_batch(one)}]}],
        )
    )
    p = resp.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[0], p
    env.hw[0] += 1
    zero = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"a0-{v}".encode())]
    with env.client() as c:
        req = make(
            "Produce",
            v,
            env,
            acks=0,
            topic_data=[{"partition_data": [{"records": encode_batch(zero)}]}],
        )
        c._corr += 1
        c.send_frame(encode_request(req, c._corr))
        resp = c.request(make("ApiVersions", 3, env))  # asserts the correlation id matches
        assert ok(resp.error_code)
    env.hw[0] += 1
    assert list_offset(env, SWEEP, 0, -1).offset == env.hw[0]
    # Errors: bad acks, an unknown topic (an unknown topic id from v13), an unknown partition.
    absent_topic = (
        ({"topic_data": [{"topic_id": uuid.uuid4(), "partition_data": [{}]}]}, E.unknown_topic_id)
        if v >= 13
        else (
            {"topic_data": [{"name": "sweep-absent", "partition_data": [{}]}]},
            E.unknown_topic_or_partition,
        )
    )
    for spec, want in (
        ({"acks": 2}, E.invalid_required_acks),
        absent_topic,
        ({"topic_data": [{"partition_data": [{"index": 9}]}]}, E.unknown_topic_or_partition),
    ):
        resp = env.request(make("Produce", v, env, **{"records": encode_batch(one), **spec}))
        p = resp.responses[0].partition_responses[0]
        assert p.error_code == want, (spec, p)
    assert list_offset(env, SWEEP, 0, -1).offset == env.hw[0]


def check_fetch(env: Env, v: int) -> None:
    by_id = v >= 13
    resp = env.request(
        make(
            "Fetch",
            v,
            env,
            topics=[
                {
                    "partitions": [
                        {"partition": 0, "fetch_offset": 0},
                        {"partition": 1, "fetch_offset": 1},
                    ]
                }
            ],
        )
    )
    if v >= 7:
        assert ok(resp.error_code), resp
    (t,) = resp.responses
    if by_id:
        assert t.topic_id == env.topic_id
    else:
        assert t.topic == SWEEP
    parts = {p.partition_index: p for p in t.partitions}
    assert set(parts) == {0, 1}
    for index, start in ((0, 0), (1, 1)):
        p = parts[index]
        assert ok(p.error_code), p
        assert p.high_watermark == env.hw[index], (index, p.high_watermark, env.hw[index])
        assert p.last_stable_offset == env.hw[index]
        if v >= 5:
            assert p.log_start_offset == 0
        rows = decode_all(p.records)
        offsets = [r.offset for r in rows if r.offset >= start]
        assert offsets == list(range(start, env.hw[index])), (index, offsets)
        seed = {r.offset: r for r in seed_records(index, SEED[index])}
        for r in rows:
            if r.offset in seed:
                s = seed[r.offset]
                assert (r.key, r.value, r.timestamp, r.headers) == (
                    s.key,
                    s.value,
                    s.timestamp,
                    s.headers,
                )
        assert p.aborted_transactions in ((), None)
        if v >= 11:
            assert p.preferred_read_replica == -1
    # KIP-74: a limit smaller than the first batch still returns that whole batch.
    resp = env.request(
        make(
            "Fetch",
            v,
            env,
            max_bytes=1,
            topics=[{"partitions": [{"partition": 0, "partition_max_bytes": 1}]}],
        )
    )
    p = resp.responses[0].partitions[0]
    assert ok(p.error_code), p
    rows = decode_all(p.records)
    assert rows and rows[0].offset == 0 and rows[0].value == b"seed-0-0", rows
    # At the high watermark: an empty answer after max_wait; past it: OFFSET_OUT_OF_RANGE.
    for offset, want in ((env.hw[0], E.none), (env.hw[0] + 1, E.offset_out_of_range)):
        resp = env.request(
            make("Fetch", v, env, topics=[{"partitions": [{"fetch_offset": offset}]}])
        )
        p = resp.responses[0].partitions[0]
        hw = env.hw[0] if want == E.none else -1  # OFFSET_OUT_OF_RANGE: no offsets, as 4.4
        assert (p.error_code, p.high_watermark) == (want, hw), (offset, p)
        assert not p.records
    # read_committed sees the same records (no transactions): the LSO is the high watermark.
    resp = env.request(make("Fetch", v, env, isolation_level=1))
    p = resp.responses[0].partitions[0]
    assert ok(p.error_code) and p.last_stable_offset == env.hw[0], p
    assert [r.offset for r in decode_all(p.records)] == list(range(env.hw[0]))
    # An unknown partition of a known topic.
    resp = env.request(make("Fetch", v, env, topics=[{"partitions": [{"partition": 7}]}]))
    assert resp.responses[0].partitions[0].error_code == E.unknown_topic_or_partition
    if v >= 7:  # a full fetch that asks for a session (epoch 0) is served, session or not
        resp = env.request(make("Fetch", v, env, session_id=0, session_epoch=0))
        assert ok(resp.error_code) and resp.session_id >= 0, resp
        p = resp.responses[0].partitions[0]
        assert ok(p.error_code) and p.high_watermark == env.hw[0], p
    # An unknown topic is refused per partition, by name or by id as the version uses.
    unknown = {"topic_id": uuid.uuid4()} if by_id else {"topic": "sweep-no-such-topic"}
    resp = env.request(
        make("Fetch", v, env, topics=[{**unknown, "partitions": [{"partition": 0}]}])
    )
    p = resp.responses[0].partitions[0]
    assert p.error_code == (E.unknown_topic_id if by_id else E.unknown_topic_or_partition), p


def check_list_offsets(env: Env, v: int) -> None:
    hw = env.hw[0]
    epoch = env.leader_epoch

    def one(ts: int):
        p = list_offset(env, SWEEP, 0, ts, version=v)
        assert p.partition_index == 0 and ok(p.error_code), (ts, p)
        if v >= 4:
            if p.offset >= 0:
                assert p.leader_epoch == epoch, (ts, p)
        return p.timestamp, p.offset

    assert one(-2) == (-1, 0)
    assert one(-1) == (-1, hw)
    # The first record at or after a real timestamp: seed record 2 has NOW_MS + 20.
    assert one(NOW_MS + 15) == (NOW_MS + 20, 2)
    assert one(NOW_MS) == (NOW_MS, 0)
    assert one(NOW_MS + 10**9) == (-1, -1)
    if v >= 7:  # max timestamp: the last seed record (produced records are older)
        last = SEED[0] - 1
        assert one(-3) == (NOW_MS + SEED_TS_STEP * last, last)
    if v >= 8:
        assert one(-4) == (-1, 0)
    # Partition 1 too, in the same request as partition 0.
    resp = env.request(
        make(
            "ListOffsets",
            v,
            env,
            isolation_level=0,
            topics=[
                {
                    "partitions": [
                        {"partition_index": 0, "timestamp": -1},
                        {"partition_index": 1, "timestamp": -1},
                    ]
                }
            ],
        )
    )
    (t,) = resp.topics
    assert t.name == SWEEP
    got = {p.partition_index: (int(p.error_code), p.offset) for p in t.partitions}
    assert got == {0: (0, env.hw[0]), 1: (0, env.hw[1])}
    if v >= 2:  # read_committed: the last stable offset, equal to the HW without transactions
        resp = env.request(
            make(
                "ListOffsets",
                v,
                env,
                isolation_level=1,
                topics=[{"partitions": [{"partition_index": 0, "timestamp": -1}]}],
            )
        )
        p = resp.topics[0].partitions[0]
        assert (p.error_code, p.offset) == (E.none, env.hw[0]), p
    p = list_offset(env, SWEEP, 9, -1, version=v)
    assert p.error_code == E.unknown_topic_or_partition, p


def check_delete_records(env: Env, v: int) -> None:
    name = f"sweep-dr-v{v}"
    create_topic(env, name)
    produce(env, name, 0, seed_records(0, 10))

    def delete(offset: int):
        resp = env.request(
            make(
                "DeleteRecords",
                v,
                env,
                topics=[{"name": name, "partitions": [{"partition_index": 0, "offset": offset}]}],
            )
        )
        (t,) = resp.topics
        assert t.name == name
        (p,) = t.partitions
        assert p.partition_index == 0 and ok(p.error_code), p
        return p.low_watermark

    assert delete(4) == 4
    p = list_offset(env, name, 0, -2)
    assert (p.offset, int(p.error_code)) == (4, 0)
    # Whole batches are served, so records before the fetch offset may come along.
    rows = fetch_rows(env, 0, 4, topic=name)
    assert [r.offset for r in rows if r.offset >= 4] == list(range(4, 10))
    resp = env.request(
        make("Fetch", 12, env, topics=[{"topic": name, "partitions": [{"fetch_offset": 0}]}])
    )
    p = resp.responses[0].partitions[0]
    assert (p.error_code, p.log_start_offset) == (E.offset_out_of_range, -1), p  # as 4.4
    assert delete(-1) == 10  # -1: up to the high watermark
    assert list_offset(env, name, 0, -2).offset == 10
    # Beyond the high watermark: OFFSET_OUT_OF_RANGE.
    resp = env.request(
        make("DeleteRecords", v, env, topics=[{"name": name, "partitions": [{"offset": 11}]}])
    )
    assert resp.topics[0].partitions[0].error_code == E.offset_out_of_range


def check_offset_for_leader_epoch(env: Env, v: int) -> None:
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[
                {
                    "partitions": [
                        {"partition": 0, "leader_epoch": 0},
                        {
                            "partition": 1,
                            "leader_epoch": 0,
                            "current_leader_epoch": env.leader_epoch,
                        },
                    ]
                }
            ],
        )
    )
    (t,) = resp.topics
    assert t.topic == SWEEP
    got = {p.partition: (int(p.error_code), p.leader_epoch, p.end_offset) for p in t.partitions}
    assert env.leader_epoch == 0
    assert got == {0: (0, 0, env.hw[0]), 1: (0, 0, env.hw[1])}
    # A current epoch newer than the leader's is UNKNOWN_LEADER_EPOCH; an epoch newer than any
    # in the log answers UNDEFINED (-1, -1) with no error.
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[
                {"partitions": [{"partition": 0, "current_leader_epoch": env.leader_epoch + 5}]}
            ],
        )
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_leader_epoch
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[{"partitions": [{"partition": 0, "leader_epoch": env.leader_epoch + 5}]}],
        )
    )
    p = resp.topics[0].partitions[0]
    assert (p.error_code, p.leader_epoch, p.end_offset) == (E.none, -1, -1), p
    # An unknown partition.
    resp = env.request(
        make("OffsetForLeaderEpoch", v, env, topics=[{"partitions": [{"partition": 9}]}])
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_topic_or_partition
