"""Checks of the consumer group APIs: FindCoordinator, the classic protocol (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup), offsets (OffsetCommit, OffsetFetch, OffsetDelete), the group
admin APIs and KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .env import SWEEP, Env, ok

GROUP_TIMEOUT = datetime.timedelta(seconds=10)
NO_RETENTION = datetime.timedelta(milliseconds=-1)


def find_group_coordinator(env: Env, group: str) -> None:
    """Clients look the coordinator up first; the first lookup creates __consumer_offsets."""
    resp = env.request(make("FindCoordinator", 4, env, key_type=0, coordinator_keys=(group,)))
    assert ok(resp.coordinators[0].error_code), resp


def _stable_group(env: Env, group: str) -> tuple[str, int]:
    """A one-member classic group (JoinGroup v9 + SyncGroup v5): (member id, generation)."""
    find_group_coordinator(env, group)
    spec = {
        "group_id": group,
        "session_timeout": GROUP_TIMEOUT,
        "rebalance_timeout": GROUP_TIMEOUT,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"m"}],
        "reason": None,
    }
    resp = env.request(make("JoinGroup", 9, env, **spec))
    assert resp.error_code == E.member_id_required, resp
    resp = env.request(make("JoinGroup", 9, env, **{**spec, "member_id": resp.member_id}))
    assert ok(resp.error_code), resp
    mid, gen = resp.member_id, resp.generation_id
    sync = env.request(
        make(
            "SyncGroup",
            5,
            env,
            group_id=group,
            generation_id=gen,
            member_id=mid,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[{"member_id": mid, "assignment": b"A"}],
        )
    )
    assert ok(sync.error_code) and sync.assignment == b"A", sync
    return mid, gen


def _simple_commit(env: Env, group: str, offset: int) -> None:
    find_group_coordinator(env, group)
    resp = env.request(
        make(
            "OffsetCommit",
            9,
            env,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                {
                    "name": SWEEP,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": offset,
                            "committed_leader_epoch": 0,
                            "committed_metadata": "md",
                        }
                    ],
                }
            ],
        )
    )
    assert ok(resp.topics[0].partitions[0].error_code), resp


def _fetch_offset(env: Env, group: str, partition: int = 0) -> int:
    resp = env.request(
        make(
            "OffsetFetch",
            8,
            env,
            require_stable=False,
            groups=[
                {"group_id": group, "topics": [{"name": SWEEP, "partition_indexes": (partition,)}]}
            ],
        )
    )
    (g,) = resp.groups
    assert ok(g.error_code), resp
    return g.topics[0].partitions[0].committed_offset


def check_find_coordinator(env: Env, v: int) -> None:
    host, port = env.broker.bootstrap.rsplit(":", 1)
    if v < 4:
        resp = env.request(make("FindCoordinator", v, env, key="sweep-group", key_type=0))
        assert ok(resp.error_code), resp
        assert (resp.node_id, resp.host, resp.port) == (env.node_id, host, int(port))
        if v >= 1:
            resp = env.request(make("FindCoordinator", v, env, key="tx", key_type=1))
            assert ok(resp.error_code), resp
            assert (resp.node_id, resp.host, resp.port) == (env.node_id, host, int(port))
            resp = env.request(make("FindCoordinator", v, env, key="tx", key_type=3))
            assert resp.error_code == E.invalid_request
        return
    resp = env.request(make("FindCoordinator", v, env, key_type=0, coordinator_keys=("g1", "g2")))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in resp.coordinators] == [
        ("g1", 0, env.node_id, int(port)),
        ("g2", 0, env.node_id, int(port)),
    ]
    resp = env.request(make("FindCoordinator", v, env, key_type=1, coordinator_keys=("tx", "ty")))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in resp.coordinators] == [
        ("tx", 0, env.node_id, int(port)),
        ("ty", 0, env.node_id, int(port)),
    ]


def check_join_group(env: Env, v: int) -> None:
    group = f"sweep-join-{v}"
    find_group_coordinator(env, group)
    spec = {
        "group_id": group,
        "session_timeout": GROUP_TIMEOUT,
        "rebalance_timeout": GROUP_TIMEOUT,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"meta"}],
        "reason": None,
    }
    resp = env.request(make("JoinGroup", v, env, **spec))
    if v >= 4:
        assert resp.error_code == E.member_id_required and resp.member_id, resp
        resp = env.request(make("JoinGroup", v, env, **{**spec, "member_id": resp.member_id}))
    assert ok(resp.error_code), resp
    assert resp.generation_id == 1 and resp.leader == resp.member_id
    assert [(m.member_id, m.metadata) for m in resp.members] == [(resp.member_id, b"meta")]
    assert resp.protocol_name == "range"
    if v >= 7:
        assert resp.protocol_type == "consumer"
    bad = env.request(make("JoinGroup", v, env, **{**spec, "member_id": "ghost"}))
    assert bad.error_code == E.unknown_member_id
    bad = env.request(
        make("JoinGroup", v, env, **{**spec, "session_timeout": datetime.timedelta(0)})
    )
    assert bad.error_code == E.invalid_session_timeout


def check_sync_group(env: Env, v: int) -> None:
    group = f"sweep-sync-{v}"
    mid, gen = _stable_group(env, group)
    spec = {
        "group_id": group,
        "generation_id": gen,
        "member_id": mid,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [],
    }
    resp = env.request(make("SyncGroup", v, env, **spec))
    assert ok(resp.error_code) and resp.assignment == b"A", resp
    if v >= 5:
        assert (resp.protocol_type, resp.protocol_name) == ("consumer", "range")
    resp = env.request(make("SyncGroup", v, env, **{**spec, "generation_id": gen + 1}))
    assert resp.error_code == E.illegal_generation


def check_heartbeat(env: Env, v: int) -> None:
    group = f"sweep-hb-{v}"
    mid, gen = _stable_group(env, group)
    spec = {"group_id": group, "generation_id": gen, "member_id": mid, "group_instance_id": None}
    assert ok(env.request(make("Heartbeat", v, env, **spec)).error_code)
    resp = env.request(make("Heartbeat", v, env, **{**spec, "member_id": "ghost"}))
    assert resp.error_code == E.unknown_member_id


def check_leave_group(env: Env, v: int) -> None:
    group = f"sweep-leave-{v}"
    mid, _ = _stable_group(env, group)
    if v < 3:
        assert ok(env.request(make("LeaveGroup", v, env, group_id=group, member_id=mid)).error_code)
        resp = env.request(make("LeaveGroup", v, env, group_id=group, member_id=mid))
        assert resp.error_code == E.unknown_member_id
        return
    members = [
        {"member_id": mid, "group_instance_id": None, "reason": None},
        {"member_id": "ghost", "group_instance_id": None, "reason": None},
    ]
    resp = env.request(make("LeaveGroup", v, env, group_id=group, members=members))
    assert ok(resp.error_code), resp
    assert [(m.member_id, m.error_code) for m in resp.members] == [
        (mid, 0),
        ("ghost", E.unknown_member_id),
    ]


def check_offset_commit(env: Env, v: int) -> None:
    group = f"sweep-commit-{v}"
    find_group_coordinator(env, group)
    parts = [
        {
            "partition_index": 0,
            "committed_offset": 4,
            "committed_leader_epoch": 0,
            "committed_metadata": "md",
        },
        {
            "partition_index": 99,
            "committed_offset": 4,
            "committed_leader_epoch": 0,
            "committed_metadata": "md",
        },
    ]
    resp = env.request(
        make(
            "OffsetCommit",
            v,
            env,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            retention_time=NO_RETENTION,
            topics=[{"name": SWEEP, "partitions": parts}],
        )
    )
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == [
        (0, 0),
        (99, E.unknown_topic_or_partition),
    ]
    assert _fetch_offset(env, group) == 4
    # a generation for a group that does not exist
    resp = env.request(
        make(
            "OffsetCommit",
            v,
            env,
            group_id=group + "-none",
            generation_id_or_member_epoch=3,
            member_id="m",
            group_instance_id=None,
            retention_time=NO_RETENTION,
            topics=[{"name": SWEEP, "partitions": parts[:1]}],
        )
    )
    expected = E.group_id_not_found if v >= 9 else E.illegal_generation
    assert resp.topics[0].partitions[0].error_code == expected
    if v >= 10:  # topics named by id: an unknown id is UNKNOWN_TOPIC_ID, answered first
        absent = uuid.uuid4()
        resp = env.request(
            make(
                "OffsetCommit",
                v,
                env,
                group_id=group,
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                topics=[
                    {"topic_id": env.topic_id, "partitions": parts[:1]},
                    {"topic_id": absent, "partitions": parts[:1]},
                ],
            )
        )
        got = [(t.topic_id, t.partitions[0].error_code) for t in resp.topics]
        assert got == [(absent, E.unknown_topic_id), (env.topic_id, E.none)], resp


def check_offset_fetch(env: Env, v: int) -> None:
    group = f"sweep-fetch-{v}"
    _simple_commit(env, group, 3)
    topics = [{"name": SWEEP, "partition_indexes": (0, 1)}]
    if v >= 8:
        resp = env.request(
            make(
                "OffsetFetch",
                v,
                env,
                require_stable=True,
                groups=[
                    {"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics},
                    {
                        "group_id": group + "-none",
                        "member_id": None,
                        "member_epoch": -1,
                        "topics": None,
                    },
                ],
            )
        )
        g, none = resp.groups
        assert ok(g.error_code) and ok(none.error_code) and none.topics == ()
        parts = g.topics[0].partitions
        if v >= 10:  # topics named by id; an unknown id is UNKNOWN_TOPIC_ID
            assert g.topics[0].topic_id == env.topic_id, g
            absent = uuid.uuid4()
            resp = env.request(
                make(
                    "OffsetFetch",
                    v,
                    env,
                    require_stable=False,
                    groups=[
                        {
                            "group_id": group,
                            "member_id": None,
                            "member_epoch": -1,
                            "topics": [{"topic_id": absent, "partition_indexes": (0,)}],
                        },
                        {"group_id": group, "member_id": None, "member_epoch": -1, "topics": None},
                    ],
                )
            )
            one, every = resp.groups
            (t,) = one.topics
            assert (t.topic_id, t.partitions[0].error_code) == (absent, E.unknown_topic_id), t
            assert [t.topic_id for t in every.topics] == [env.topic_id], every
    else:
        resp = env.request(
            make("OffsetFetch", v, env, group_id=group, topics=topics, require_stable=False)
        )
        parts = resp.topics[0].partitions
        if v >= 2:
            assert ok(resp.error_code)
    got = [(p.partition_index, p.committed_offset, p.metadata) for p in parts]
    assert got == [(0, 3, "md"), (1, -1, "")], resp
    if v >= 5:
        assert [p.committed_leader_epoch for p in parts] == [0, -1]
    if 2 <= v < 8:  # all topics
        resp = env.request(
            make("OffsetFetch", v, env, group_id=group, topics=None, require_stable=False)
        )
        assert [(t.name, len(t.partitions)) for t in resp.topics] == [(SWEEP, 1)]


def check_describe_groups(env: Env, v: int) -> None:
    group = f"sweep-describe-{v}"
    mid, _ = _stable_group(env, group)
    resp = env.request(
        make(
            "DescribeGroups",
            v,
            env,
            groups=(group, group + "-none"),
            include_authorized_operations=False,
        )
    )
    g, none = resp.groups
    assert ok(g.error_code) and g.group_state == "Stable", g
    assert (g.protocol_type, g.protocol_data) == ("consumer", "range")
    assert [(m.member_id, m.member_assignment) for m in g.members] == [(mid, b"A")]
    if v >= 6:
        assert none.error_code == E.group_id_not_found
    else:
        assert ok(none.error_code) and none.group_state == "Dead"


def check_list_groups(env: Env, v: int) -> None:
    group = f"sweep-list-{v}"
    _stable_group(env, group)
    spec: dict[str, Any] = {"states_filter": (), "types_filter": ()}
    resp = env.request(make("ListGroups", v, env, **spec))
    assert ok(resp.error_code)
    assert (group, "consumer") in {(g.group_id, g.protocol_type) for g in resp.groups}
    if v >= 4:
        resp = env.request(make("ListGroups", v, env, **{**spec, "states_filter": ("empty",)}))
        assert group not in {g.group_id for g in resp.groups}
        assert all(g.group_state == "Empty" for g in resp.groups)
    if v >= 5:
        resp = env.request(make("ListGroups", v, env, **{**spec, "types_filter": ("classic",)}))
        assert group in {g.group_id for g in resp.groups}
        assert all(g.group_type == "classic" for g in resp.groups)


def check_delete_groups(env: Env, v: int) -> None:
    group = f"sweep-delete-{v}"
    _simple_commit(env, group, 1)
    busy = f"sweep-delete-busy-{v}"
    _stable_group(env, busy)
    resp = env.request(make("DeleteGroups", v, env, groups_names=(group, busy)))
    assert [(r.group_id, r.error_code) for r in resp.results] == [
        (group, 0),
        (busy, E.non_empty_group),
    ]
    assert _fetch_offset(env, group) == -1
    resp = env.request(make("DeleteGroups", v, env, groups_names=(group,)))
    assert resp.results[0].error_code == E.group_id_not_found


def check_offset_delete(env: Env, v: int) -> None:
    group = f"sweep-offset-delete-{v}"
    _simple_commit(env, group, 2)
    resp = env.request(
        make(
            "OffsetDelete",
            v,
            env,
            group_id=group,
            topics=[
                {"name": SWEEP, "partitions": [{"partition_index": 0}, {"partition_index": 99}]}
            ],
        )
    )
    assert ok(resp.error_code)
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == [
        (0, 0),
        (99, E.unknown_topic_or_partition),
    ]
    assert _fetch_offset(env, group) == -1
    resp = env.request(
        make(
            "OffsetDelete",
            v,
            env,
            group_id=group + "-none",
            topics=[{"name": SWEEP, "partitions": [{"partition_index": 0}]}],
        )
    )
    assert resp.error_code == E.group_id_not_found
