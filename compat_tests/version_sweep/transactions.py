"""Checks of the producer id and transaction APIs: InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, TxnOffsetCommit, WriteTxnMarkers, DescribeTransactions,
ListTransactions, DescribeProducers."""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, encode_batch

from .builder import make
from .common import create_topic
from .env import NOW_MS, SWEEP, Env, ok
from .groups import find_group_coordinator


def check_init_producer_id(env: Env, v: int) -> None:
    resp = env.request(make("InitProducerId", v, env))
    assert ok(resp.error_code), resp
    assert resp.producer_id >= 0 and resp.producer_epoch == 0, resp
    assert resp.producer_id not in env.producer_ids
    env.producer_ids.add(resp.producer_id)
    # The id works for an idempotent produce.
    rec = [Record(offset=0, timestamp=NOW_MS + 2, key=None, value=f"idem-{v}".encode())]
    batch = encode_batch(rec, producer_id=resp.producer_id, producer_epoch=0, base_sequence=0)
    pr = env.request(
        make("Produce", 9, env, topic_data=[{"partition_data": [{"index": 1, "records": batch}]}])
    )
    p = pr.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[1], p
    env.hw[1] += 1
    # A transactional id gets its own producer id from the transaction coordinator; a second
    # instance bumps the epoch.
    txn = f"sweep-init-{v}"
    _find_txn_coordinator(env, txn)
    first = env.request(make("InitProducerId", v, env, transactional_id=txn))
    assert ok(first.error_code) and first.producer_epoch == 0, first
    assert first.producer_id >= 0 and first.producer_id not in env.producer_ids
    again = env.request(make("InitProducerId", v, env, transactional_id=txn))
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, first.producer_id, 1)
    bad = env.request(
        make(
            "InitProducerId",
            v,
            env,
            transactional_id=txn,
            transaction_timeout=datetime.timedelta(hours=1),
        )
    )
    assert bad.error_code == E.invalid_transaction_timeout, bad
    if v >= 3:  # KIP-360: a producer recovering with its current id and epoch keeps its id
        rec = env.request(
            make(
                "InitProducerId",
                v,
                env,
                transactional_id=txn,
                producer_id=first.producer_id,
                producer_epoch=1,
            )
        )
        assert (rec.error_code, rec.producer_id, rec.producer_epoch) == (0, first.producer_id, 2)
        stale = env.request(
            make(
                "InitProducerId",
                v,
                env,
                transactional_id=txn,
                producer_id=first.producer_id,
                producer_epoch=0,
            )
        )
        assert stale.error_code == (E.producer_fenced if v >= 4 else E.invalid_producer_epoch)


def check_write_txn_markers(env: Env, v: int) -> None:
    # (the markers themselves are exercised by EndTxn above and compat_tests/test_txn_*)
    resp = env.request(
        make(
            "WriteTxnMarkers",
            v,
            env,
            markers=[
                {
                    "producer_id": 123456,
                    "producer_epoch": 0,
                    "transaction_result": False,
                    "coordinator_epoch": 0,
                    "topics": [
                        {"name": SWEEP, "partition_indexes": (7,)},
                        {"name": "sweep-absent", "partition_indexes": (0,)},
                    ],
                }
            ],
        )
    )
    (m,) = resp.markers
    got = {(t.name, p.partition_index): p.error_code for t in m.topics for p in t.partitions}
    assert m.producer_id == 123456
    assert got == {
        (SWEEP, 7): E.unknown_topic_or_partition,
        ("sweep-absent", 0): E.unknown_topic_or_partition,
    }


def _find_txn_coordinator(env: Env, txn: str) -> None:
    """The first transactional lookup creates __transaction_state."""
    resp = env.request(make("FindCoordinator", 4, env, key_type=1, coordinator_keys=(txn,)))
    assert ok(resp.coordinators[0].error_code), resp


def _init_txn(env: Env, txn: str) -> tuple[int, int]:
    _find_txn_coordinator(env, txn)
    resp = env.request(make("InitProducerId", 5, env, transactional_id=txn))
    assert ok(resp.error_code), resp
    return resp.producer_id, resp.producer_epoch


def _add_partitions(
    env: Env, txn: str, pid: int, epoch: int, partitions: dict[str, list[int]], version: int = 3
):
    resp = env.request(
        make(
            "AddPartitionsToTxn",
            version,
            env,
            v3_and_below_transactional_id=txn,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[
                {"name": t, "partitions": tuple(ps)} for t, ps in partitions.items()
            ],
        )
    )
    return {
        (t.name, r.partition_index): r.partition_error_code
        for t in resp.results_by_topic_v3_and_below
        for r in t.results_by_partition
    }


def _describe_txn(env: Env, txn: str) -> Any:
    resp = env.request(make("DescribeTransactions", 0, env, transactional_ids=(txn,)))
    (state,) = resp.transaction_states
    return state


def check_add_partitions_to_txn(env: Env, v: int) -> None:
    txn = f"sweep-apt-{v}"
    pid, epoch = _init_txn(env, txn)
    if v < 4:

        def add(partitions, epoch=epoch):
            return _add_partitions(env, txn, pid, epoch, partitions, version=v)

        assert add({SWEEP: [0, 1]}) == {(SWEEP, 0): 0, (SWEEP, 1): 0}
        assert add({SWEEP: [0], "sweep-absent": [0]}) == {
            (SWEEP, 0): E.operation_not_attempted,
            ("sweep-absent", 0): E.unknown_topic_or_partition,
        }
        fenced = E.producer_fenced if v >= 2 else E.invalid_producer_epoch
        assert add({SWEEP: [0]}, epoch=epoch + 1) == {(SWEEP, 0): fenced}
        state = _describe_txn(env, txn)
        assert state.transaction_state == "Ongoing"
        assert [(t.topic, tuple(t.partitions)) for t in state.topics] == [(SWEEP, (0, 1))]
        return
    # v4+ (partition leaders): verification of two transactions in one request
    other = f"sweep-apt-other-{v}"
    opid, oepoch = _init_txn(env, other)
    assert _add_partitions(env, txn, pid, epoch, {SWEEP: [0]}) == {(SWEEP, 0): 0}
    resp = env.request(
        make(
            "AddPartitionsToTxn",
            v,
            env,
            transactions=[
                {
                    "transactional_id": txn,
                    "producer_id": pid,
                    "producer_epoch": epoch,
                    "verify_only": True,
                    "topics": [{"name": SWEEP, "partitions": (0, 1)}],
                },
                {
                    "transactional_id": other,
                    "producer_id": opid,
                    "producer_epoch": oepoch + 3,
                    "verify_only": True,
                    "topics": [{"name": SWEEP, "partitions": (0,)}],
                },
            ],
        )
    )
    assert ok(resp.error_code), resp
    got = {
        (r.transactional_id, t.name, p.partition_index): p.partition_error_code
        for r in resp.results_by_transaction
        for t in r.topic_results
        for p in t.results_by_partition
    }
    assert got == {
        (txn, SWEEP, 0): 0,
        (txn, SWEEP, 1): E.transaction_abortable,
        (other, SWEEP, 0): E.producer_fenced,
    }, got
    # verification adds nothing (listed, not described: kio cannot read an Empty state's -1 start)
    listed = env.request(
        make("ListTransactions", 1, env, state_filters=(), producer_id_filters=(opid,))
    )
    assert [t.transaction_state for t in listed.transaction_states] == ["Empty"]


def check_add_offsets_to_txn(env: Env, v: int) -> None:
    txn, group = f"sweep-aot-{v}", f"sweep-aot-group-{v}"
    pid, epoch = _init_txn(env, txn)
    find_group_coordinator(env, group)
    spec = {"transactional_id": txn, "producer_id": pid, "group_id": group}
    resp = env.request(make("AddOffsetsToTxn", v, env, producer_epoch=epoch, **spec))
    assert ok(resp.error_code), resp
    state = _describe_txn(env, txn)
    assert state.transaction_state == "Ongoing"
    assert [t.topic for t in state.topics] == ["__consumer_offsets"]
    resp = env.request(make("AddOffsetsToTxn", v, env, producer_epoch=epoch - 1, **spec))
    assert resp.error_code == (E.producer_fenced if v >= 2 else E.invalid_producer_epoch)
    resp = env.request(
        make("AddOffsetsToTxn", v, env, producer_epoch=epoch, **{**spec, "producer_id": pid + 1000})
    )
    assert resp.error_code == E.invalid_producer_id_mapping


def _wait_txn_state(env: Env, txn: str, want: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        state = _describe_txn(env, txn).transaction_state
        if state == want or time.monotonic() > deadline:
            assert state == want
            return
        time.sleep(0.02)


def check_end_txn(env: Env, v: int) -> None:
    txn = f"sweep-end-{v}"
    pid, epoch = _init_txn(env, txn)
    spec = {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch}
    resp = env.request(make("EndTxn", v, env, committed=True, **spec))
    assert resp.error_code == E.invalid_txn_state, resp  # no transaction yet
    assert _add_partitions(env, txn, pid, epoch, {SWEEP: [1]}) == {(SWEEP, 1): 0}
    rec = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"txn-{v}".encode())]
    batch = encode_batch(
        rec, producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True
    )
    pr = env.request(
        make(
            "Produce",
            9,
            env,
            transactional_id=txn,
            topic_data=[{"partition_data": [{"index": 1, "records": batch}]}],
        )
    )
    p = pr.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[1], p
    env.hw[1] += 2  # the record and the commit marker
    resp = env.request(
        make("EndTxn", v, env, committed=True, **{**spec, "producer_epoch": epoch + 1})
    )
    assert resp.error_code == (E.producer_fenced if v >= 2 else E.invalid_producer_epoch)
    resp = env.request(make("EndTxn", v, env, committed=True, **spec))
    assert ok(resp.error_code), resp
    if v >= 5:  # transactions version 2: the epoch is bumped and answered
        assert (resp.producer_id, resp.producer_epoch) == (pid, epoch + 1), resp
    _wait_txn_state(env, txn, "CompleteCommit")
    assert ok(env.request(make("EndTxn", v, env, committed=True, **spec)).error_code)  # a retry
    resp = env.request(make("EndTxn", v, env, committed=False, **spec))
    assert resp.error_code == E.invalid_txn_state


def _stable_fetch(env: Env, group: str) -> Any:
    """OffsetFetch v8 of partition 0 of "sweep" with require_stable."""
    resp = env.request(
        make(
            "OffsetFetch",
            8,
            env,
            require_stable=True,
            groups=[{"group_id": group, "topics": [{"name": SWEEP, "partition_indexes": (0,)}]}],
        )
    )
    return resp.groups[0].topics[0].partitions[0]


def check_txn_offset_commit(env: Env, v: int) -> None:
    txn, group = f"sweep-toc-{v}", f"sweep-toc-group-{v}"
    pid, epoch = _init_txn(env, txn)
    find_group_coordinator(env, group)
    added = env.request(
        make(
            "AddOffsetsToTxn",
            4,
            env,
            transactional_id=txn,
            producer_id=pid,
            producer_epoch=epoch,
            group_id=group,
        )
    )
    assert ok(added.error_code), added
    spec = {
        "transactional_id": txn,
        "group_id": group,
        "producer_id": pid,
        "producer_epoch": epoch,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": SWEEP,
                "partitions": [
                    {"partition_index": 0, "committed_offset": 4, "committed_metadata": "tm"}
                ],
            },
            {
                "name": "sweep-absent",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}
                ],
            },
        ],
    }

    absent_id = uuid.UUID(int=4711)
    if v >= 6:  # KIP-1319: topics by id
        spec["topics"] = [
            {"topic_id": env.topic_id, "partitions": spec["topics"][0]["partitions"]},
            {"topic_id": absent_id, "partitions": spec["topics"][1]["partitions"]},
        ]
    names = {env.topic_id: SWEEP, absent_id: "sweep-absent"}

    def commit(**over):
        resp = env.request(make("TxnOffsetCommit", v, env, **{**spec, **over}))
        return {
            (t.name if v < 6 else names[t.topic_id], p.partition_index): p.error_code
            for t in resp.topics
            for p in t.partitions
        }

    absent_error = E.unknown_topic_or_partition if v < 6 else E.unknown_topic_id
    assert commit() == {(SWEEP, 0): 0, ("sweep-absent", 0): absent_error}
    # pending: invisible, and unstable for a stable read
    p = _stable_fetch(env, group)
    assert (p.error_code, p.committed_offset) == (E.unstable_offset_commit, -1), p
    if v >= 3:  # KIP-447: a member that is not in the group is refused
        got = commit(generation_id=1, member_id="ghost", topics=spec["topics"][:1])
        assert got == {(SWEEP, 0): E.unknown_member_id}
    if v >= 5:  # a member's commit to a group that does not exist (KIP-1319 names it from v6;
        # transactions version 2 adds that group's partition to the transaction first)
        got = commit(group_id=f"{group}-missing", generation_id=1, member_id="ghost",
                     topics=spec["topics"][:1])
        assert got == {(SWEEP, 0): E.group_id_not_found if v >= 6 else E.illegal_generation}
    fenced = commit(producer_epoch=epoch - 1, topics=spec["topics"][:1])
    assert fenced == {(SWEEP, 0): E.invalid_producer_epoch}
    resp = env.request(
        make(
            "EndTxn",
            4,
            env,
            transactional_id=txn,
            producer_id=pid,
            producer_epoch=epoch,
            committed=True,
        )
    )
    assert ok(resp.error_code), resp
    _wait_txn_state(env, txn, "CompleteCommit")
    p = _stable_fetch(env, group)
    assert (p.error_code, p.committed_offset, p.metadata) == (0, 4, "tm"), p


def check_describe_transactions(env: Env, v: int) -> None:
    txn = f"sweep-describe-{v}"
    pid, epoch = _init_txn(env, txn)
    _add_partitions(env, txn, pid, epoch, {SWEEP: [1, 0]})
    resp = env.request(
        make("DescribeTransactions", v, env, transactional_ids=(txn, "sweep-unknown-txn", ""))
    )
    s, unknown, empty = resp.transaction_states
    assert ok(s.error_code), s
    assert (s.transactional_id, s.transaction_state, s.producer_id, s.producer_epoch) == (
        txn,
        "Ongoing",
        pid,
        epoch,
    )
    assert s.transaction_timeout == datetime.timedelta(seconds=60)
    assert abs(s.transaction_start_time.timestamp() - time.time()) < 60
    assert [(t.topic, tuple(t.partitions)) for t in s.topics] == [(SWEEP, (0, 1))]
    assert unknown.error_code == E.transactional_id_not_found
    assert empty.error_code == E.invalid_request


def check_list_transactions(env: Env, v: int) -> None:
    txn = f"sweep-list-{v}"
    pid, epoch = _init_txn(env, txn)
    _add_partitions(env, txn, pid, epoch, {SWEEP: [0]})
    resp = env.request(
        make(
            "ListTransactions",
            v,
            env,
            state_filters=("Ongoing", "Bogus"),
            producer_id_filters=(pid,),
        )
    )
    assert ok(resp.error_code), resp
    assert [
        (t.transactional_id, t.producer_id, t.transaction_state) for t in resp.transaction_states
    ] == [(txn, pid, "Ongoing")]
    assert tuple(resp.unknown_state_filters) == ("Bogus",)
    resp = env.request(make("ListTransactions", v, env, state_filters=(), producer_id_filters=()))
    listed = {t.transactional_id: t.transaction_state for t in resp.transaction_states}
    assert listed[txn] == "Ongoing"
    if v >= 1:  # Ongoing for more than an hour: none (the filter compares start times)
        resp = env.request(
            make(
                "ListTransactions",
                v,
                env,
                state_filters=("Ongoing",),
                producer_id_filters=(),
                duration_filter=3_600_000,
            )
        )
        assert resp.transaction_states == ()


def check_describe_producers(env: Env, v: int) -> None:
    topic = f"sweep-producers-{v}"
    create_topic(env, topic)
    init = env.request(make("InitProducerId", 4, env))
    assert ok(init.error_code), init
    recs = [Record(offset=i, timestamp=NOW_MS + i, key=None, value=b"p") for i in range(3)]
    batch = encode_batch(
        recs, producer_id=init.producer_id, producer_epoch=init.producer_epoch, base_sequence=0
    )
    pr = env.request(
        make(
            "Produce",
            9,
            env,
            topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
        )
    )
    assert ok(pr.responses[0].partition_responses[0].error_code), pr
    resp = env.request(
        make("DescribeProducers", v, env, topics=[{"name": topic, "partition_indexes": (0, 5)}])
    )
    (t,) = resp.topics
    p0, p5 = t.partitions
    assert ok(p0.error_code), p0
    assert [
        (s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp)
        for s in p0.active_producers
    ] == [(init.producer_id, init.producer_epoch, 2, NOW_MS + 2)]
    assert all(
        (s.coordinator_epoch, s.current_txn_start_offset) == (-1, -1) for s in p0.active_producers
    )
    assert p5.error_code == E.unknown_topic_or_partition, p5
    resp = env.request(
        make(
            "DescribeProducers",
            v,
            env,
            topics=[{"name": "sweep-absent", "partition_indexes": (0,)}],
        )
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_topic_or_partition
