"""Checks of the topic and cluster APIs: Metadata, ApiVersions, CreateTopics, DeleteTopics,
CreatePartitions, DescribeCluster, ElectLeaders, DescribeTopicPartitions, DescribeLogDirs and
the partition reassignment APIs."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .common import create_topic, metadata12, produce, seed_records
from .env import SWEEP, ZERO_UUID, Env, ok


def check_metadata(env: Env, v: int) -> None:
    topic = {"name": SWEEP, "topic_id": None} if v >= 10 else {"name": SWEEP}
    spec: dict[str, Any] = {"topics": [topic]}
    if v >= 4:
        spec["allow_auto_topic_creation"] = False
    if v >= 8:
        spec["include_topic_authorized_operations"] = False
    if 8 <= v <= 10:
        spec["include_cluster_authorized_operations"] = False
    resp = env.request(make("Metadata", v, env, **spec))
    host, port = env.broker.bootstrap.rsplit(":", 1)
    assert [(b.node_id, b.host, b.port) for b in resp.brokers] == [(env.node_id, host, int(port))]
    if v >= 1:
        assert resp.controller_id == env.node_id
    if v >= 2:
        assert resp.cluster_id == env.cluster_id and env.cluster_id
    if v >= 13:
        assert ok(resp.error_code)
    (t,) = resp.topics
    assert ok(t.error_code) and t.name == SWEEP, t
    if v >= 1:
        assert t.is_internal is False
    if v >= 10:
        assert t.topic_id == env.topic_id and t.topic_id != ZERO_UUID
    assert sorted(p.partition_index for p in t.partitions) == [0, 1]
    for p in t.partitions:
        assert ok(p.error_code)
        assert p.leader_id == env.node_id
        assert tuple(p.replica_nodes) == (env.node_id,) and tuple(p.isr_nodes) == (env.node_id,)
        if v >= 5:
            assert tuple(p.offline_replicas) == ()
        if v >= 7:
            assert p.leader_epoch == env.leader_epoch
    if v == 0:  # v0: an empty list means all topics
        resp = env.request(make("Metadata", 0, env, topics=[]))
        assert SWEEP in {t.name for t in resp.topics}, resp.topics
    if v >= 12:  # by id, without a name
        resp = env.request(
            make(
                "Metadata", v, env, **{**spec, "topics": [{"name": None, "topic_id": env.topic_id}]}
            )
        )
        (t,) = resp.topics
        assert ok(t.error_code) and t.name == SWEEP and t.topic_id == env.topic_id, t
        unknown = uuid.uuid4()
        resp = env.request(
            make("Metadata", v, env, **{**spec, "topics": [{"name": None, "topic_id": unknown}]})
        )
        (t,) = resp.topics
        assert t.error_code == E.unknown_topic_id and t.topic_id == unknown, t
    if v >= 4:  # no auto-creation when refused
        resp = env.request(
            make("Metadata", v, env, **{**spec, "topics": [{**topic, "name": "sweep-absent"}]})
        )
        (t,) = resp.topics
        assert t.error_code == E.unknown_topic_or_partition and t.name == "sweep-absent", t
    if v >= 1:  # null list: all topics
        resp = env.request(make("Metadata", v, env, **{**spec, "topics": None}))
        assert SWEEP in {t.name for t in resp.topics}


def check_api_versions(env: Env, v: int) -> None:
    v5 = {"cluster_id": None, "node_id": -1}  # v5: a client that does not name the broker yet
    resp = env.request(make("ApiVersions", v, env, **v5))
    assert ok(resp.error_code), resp
    got = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    want = {r.key: (r.min_version, r.max_version) for r in served_apis().values()}
    assert got == want
    if v >= 3:  # KIP-511: a client software name that breaks the pattern is INVALID_REQUEST
        resp = env.request(
            make("ApiVersions", v, env, client_software_name="bad name!", **v5)
        )
        assert resp.error_code == E.invalid_request, resp
    if v >= 5:  # this broker named: served; another cluster or node: REBOOTSTRAP_REQUIRED;
        # only one of the two: INVALID_REQUEST (Kafka 4.4's KafkaApis)
        for cluster_id, node_id, want in (
            (env.cluster_id, env.node_id, E.none),
            ("AAAAAAAAAAAAAAAAAAAAAA", env.node_id, E.rebootstrap_required),
            (env.cluster_id, env.node_id + 1, E.rebootstrap_required),
            (env.cluster_id, -1, E.invalid_request),
            (None, env.node_id, E.invalid_request),
        ):
            resp = env.request(
                make("ApiVersions", v, env, cluster_id=cluster_id, node_id=node_id)
            )
            assert resp.error_code == want, (cluster_id, node_id, resp)
            assert bool(resp.api_keys) == (want == E.none), resp


def check_create_topics(env: Env, v: int) -> None:
    name = f"sweep-ct-v{v}"
    resp = env.request(
        make(
            "CreateTopics",
            v,
            env,
            validate_only=False,
            topics=[
                {
                    "name": name,
                    "num_partitions": 3,
                    "configs": [{"name": "retention.ms", "value": "3600000"}],
                },
                {"name": SWEEP, "num_partitions": 1},
            ],
        )
    )
    res = {t.name: t for t in resp.topics}
    t = res[name]
    assert ok(t.error_code), t
    if v >= 5:
        assert (t.num_partitions, t.replication_factor) == (3, 1)
        cfg = {c.name: c for c in t.configs}
        assert cfg["retention.ms"].value == "3600000" and cfg["retention.ms"].config_source == 1
    if v >= 7:
        assert t.topic_id not in (None, ZERO_UUID)
    assert res[SWEEP].error_code == E.topic_already_exists
    (m,) = metadata12(env, [name]).topics
    assert ok(m.error_code) and len(m.partitions) == 3
    if v >= 7:
        assert m.topic_id == t.topic_id
    if v >= 4:  # -1 partitions / replication factor: the broker's defaults
        dflt = f"sweep-ct-default-v{v}"
        resp = env.request(
            make(
                "CreateTopics",
                v,
                env,
                validate_only=False,
                topics=[{"name": dflt, "num_partitions": -1, "replication_factor": -1}],
            )
        )
        (t,) = resp.topics
        assert ok(t.error_code), t
        if v >= 5:
            assert (t.num_partitions, t.replication_factor) == (1, 1), t
        (m,) = metadata12(env, [dflt]).topics
        assert ok(m.error_code) and len(m.partitions) == 1
    # validate_only creates nothing.
    dry = f"sweep-ct-dry-v{v}"
    resp = env.request(
        make(
            "CreateTopics", v, env, validate_only=True, topics=[{"name": dry, "num_partitions": 2}]
        )
    )
    assert ok(resp.topics[0].error_code), resp.topics[0]
    (m,) = metadata12(env, [dry]).topics
    assert m.error_code == E.unknown_topic_or_partition


def check_delete_topics(env: Env, v: int) -> None:
    name = f"sweep-dt-v{v}"
    tid = create_topic(env, name)
    if v >= 6:
        req = make("DeleteTopics", v, env, topics=[{"name": None, "topic_id": tid}])
    else:
        req = make("DeleteTopics", v, env, topic_names=(name,))
    (r,) = env.request(req).responses
    assert ok(r.error_code), r
    assert r.name == name
    if v >= 6:
        assert r.topic_id == tid
    (m,) = metadata12(env, [name]).topics
    assert m.error_code == E.unknown_topic_or_partition, m
    # Deleting it again: unknown.
    if v >= 6:
        req = make("DeleteTopics", v, env, topics=[{"name": None, "topic_id": tid}])
        want = E.unknown_topic_id
    else:
        req = make("DeleteTopics", v, env, topic_names=(name,))
        want = E.unknown_topic_or_partition
    (r,) = env.request(req).responses
    assert r.error_code == want, r
    if v >= 6:  # v6 by name (null id)
        other = f"sweep-dt-name-v{v}"
        other_id = create_topic(env, other)
        req = make("DeleteTopics", v, env, topics=[{"name": other, "topic_id": None}])
        (r,) = env.request(req).responses
        assert ok(r.error_code) and r.name == other and r.topic_id == other_id, r
    # "sweep" is untouched.
    assert ok(metadata12(env, [SWEEP]).topics[0].error_code)


def check_create_partitions(env: Env, v: int) -> None:
    name = "sweep-cp"
    (m,) = metadata12(env, [name]).topics
    if int(m.error_code) == 3:
        create_topic(env, name)
        (m,) = metadata12(env, [name]).topics
    before = len(m.partitions)
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": name, "count": before + 1, "assignments": None}],
        )
    )
    (r,) = resp.results
    assert r.name == name and ok(r.error_code), r
    (m,) = metadata12(env, [name]).topics
    assert sorted(p.partition_index for p in m.partitions) == list(range(before + 1))
    # The new partition is writable.
    assert produce(env, name, before, seed_records(before, 2)) == 0
    # Not growing: INVALID_PARTITIONS.
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": name, "count": before + 1, "assignments": None}],
        )
    )
    assert resp.results[0].error_code == E.invalid_partitions
    # validate_only changes nothing; an unknown topic.
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=True,
            topics=[{"name": name, "count": before + 5, "assignments": None}],
        )
    )
    assert ok(resp.results[0].error_code), resp
    assert len(metadata12(env, [name]).topics[0].partitions) == before + 1
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": "sweep-absent", "count": 2, "assignments": None}],
        )
    )
    assert resp.results[0].error_code == E.unknown_topic_or_partition


def check_describe_cluster(env: Env, v: int) -> None:
    spec: dict[str, Any] = {"include_cluster_authorized_operations": False}
    if v >= 1:
        spec["endpoint_type"] = 1
    if v >= 2:
        spec["include_fenced_brokers"] = True
    resp = env.request(make("DescribeCluster", v, env, **spec))
    assert ok(resp.error_code), resp
    assert resp.cluster_id == env.cluster_id
    assert resp.controller_id == env.node_id
    host, port = env.broker.bootstrap.rsplit(":", 1)
    assert [(b.broker_id, b.host, b.port) for b in resp.brokers] == [(env.node_id, host, int(port))]
    if v >= 1:
        assert resp.endpoint_type == 1
    if v >= 2:
        assert resp.brokers[0].is_fenced is False
    if v >= 1:  # a broker refuses the controllers' endpoint type
        resp = env.request(make("DescribeCluster", v, env, **{**spec, "endpoint_type": 2}))
        assert resp.error_code == E.unsupported_endpoint_type, resp


def check_elect_leaders(env: Env, v: int) -> None:
    # the embedded broker leads every partition: nothing to elect; unknown partitions are named
    spec: dict[str, Any] = {
        "topic_partitions": [
            {"topic": SWEEP, "partitions": [0]},
            {"topic": "nope", "partitions": [0]},
        ],
        "timeout": datetime.timedelta(seconds=10),
    }
    if v >= 1:
        spec["election_type"] = 0
    resp = env.request(make("ElectLeaders", v, env, **spec))
    if v >= 1:
        assert ok(resp.error_code), resp
    codes = {
        (r.topic, p.partition_id): p.error_code
        for r in resp.replica_election_results
        for p in r.partition_result
    }
    assert codes[(SWEEP, 0)] == E.election_not_needed, resp
    assert codes[("nope", 0)] == E.unknown_topic_or_partition, resp


def check_describe_topic_partitions(env: Env, v: int) -> None:
    resp = env.request(
        make(
            "DescribeTopicPartitions", v, env, topics=[{"name": SWEEP}], response_partition_limit=1
        )
    )
    (t,) = resp.topics
    assert ok(t.error_code) and t.name == SWEEP and t.topic_id == env.topic_id, t
    (p,) = t.partitions
    assert (p.partition_index, p.leader_id, p.leader_epoch) == (0, env.node_id, env.leader_epoch)
    assert (p.replica_nodes, p.isr_nodes, p.offline_replicas) == ((env.node_id,),) * 2 + ((),)
    assert (p.eligible_leader_replicas, p.last_known_elr) == ((), ())
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == (SWEEP, 1)
    resp = env.request(
        make(
            "DescribeTopicPartitions",
            v,
            env,
            topics=[{"name": SWEEP}, {"name": "sweep-absent"}],
            cursor={"topic_name": SWEEP, "partition_index": 1},
        )
    )
    assert [
        (t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in resp.topics
    ] == [
        (SWEEP, 0, [1]),
        ("sweep-absent", E.unknown_topic_or_partition, []),
    ]
    assert resp.next_cursor is None


def check_describe_log_dirs(env: Env, v: int) -> None:
    resp = env.request(make("DescribeLogDirs", v, env, topics=[{"partitions": (0, 1, 9)}]))
    if v >= 3:
        assert ok(resp.error_code), resp
    assert len(resp.results) == 1, resp
    (r,) = resp.results
    assert ok(r.error_code) and r.log_dir.startswith("/"), r
    if v >= 4:
        assert 0 < r.usable_bytes <= r.total_bytes, r
    parts = {p.partition_index: p for t in r.topics if t.name == SWEEP for p in t.partitions}
    assert sorted(parts) == [0, 1], r  # partition 9 does not exist: not reported
    for p in parts.values():
        assert p.partition_size > 0 and p.offset_lag == 0 and p.is_future_key is False, p
    # null topics: every local partition
    resp = env.request(make("DescribeLogDirs", v, env, topics=None))
    names = {(t.name, p.partition_index) for t in resp.results[0].topics for p in t.partitions}
    assert {(SWEEP, 0), (SWEEP, 1)} <= names


def check_alter_partition_reassignments(env: Env, v: int) -> None:
    # the embedded broker holds every replica: a valid request moves nothing; Kafka's errors
    me = env.node_id
    resp = env.request(
        make(
            "AlterPartitionReassignments",
            v,
            env,
            timeout=datetime.timedelta(seconds=10),
            topics=[
                {
                    "name": SWEEP,
                    "partitions": [
                        {"partition_index": 0, "replicas": (me,)},
                        {"partition_index": 1, "replicas": None},
                        {"partition_index": 7, "replicas": (me,)},
                    ],
                },
                {"name": "sweep-absent", "partitions": [{"partition_index": 0, "replicas": (me,)}]},
            ],
        )
    )
    assert ok(resp.error_code) and resp.error_message is None, resp
    codes = {
        (t.name, p.partition_index): p.error_code for t in resp.responses for p in t.partitions
    }
    assert codes == {
        (SWEEP, 0): E.none,
        (SWEEP, 1): E.no_reassignment_in_progress,
        (SWEEP, 7): E.unknown_topic_or_partition,
        ("sweep-absent", 0): E.unknown_topic_or_partition,
    }, resp
    for bad in ((me, me), (me + 1000,), ()):
        resp = env.request(
            make(
                "AlterPartitionReassignments",
                v,
                env,
                topics=[{"name": SWEEP, "partitions": [{"partition_index": 0, "replicas": bad}]}],
            )
        )
        part = resp.responses[0].partitions[0]
        assert part.error_code == E.invalid_replica_assignment and part.error_message, resp


def check_list_partition_reassignments(env: Env, v: int) -> None:
    for topics in (None, [{"name": SWEEP, "partition_indexes": (0, 1)}]):
        resp = env.request(make("ListPartitionReassignments", v, env, topics=topics))
        assert ok(resp.error_code) and resp.error_message is None and resp.topics == (), resp
    resp = env.request(
        make(
            "ListPartitionReassignments",
            v,
            env,
            topics=[{"name": "sweep-absent", "partition_indexes": (0,)}],
        )
    )
    assert ok(resp.error_code) and resp.topics == (), resp
