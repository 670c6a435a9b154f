"""Admin APIs behind the command-line tools and current admin clients, against a real broker:
DescribeLogDirs, ListPartitionReassignments, DescribeProducers, DescribeClientQuotas,
AlterClientQuotas and DescribeTopicPartitions. Raw kio requests check the wire answers field by
field; kafka-python's KafkaAdminClient and confluent-kafka's AdminClient check that stock clients
read them."""

from __future__ import annotations

import datetime
import json
import os
import time
import uuid

import pytest

from kafkapy.cli.common import topic_id_string
from kafkapy.metadata import client_quotas as cq
from kafkapy.metadata import znodes as zn
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.models import TopicAssignment
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.server.apis.list_partition_reassignments import ongoing
from kafkapy.testing import BrokerProcess

from . import txn_raw as raw
from .rawclient import RawClient
from .txn_raw import req


def call(bootstrap: str, entity):
    with RawClient(bootstrap) as c:
        return c.request(entity)


def create_topic(bootstrap: str, name: str, partitions: int) -> uuid.UUID:
    with RawClient(bootstrap) as c:
        return raw.create_topic(c, name, partitions)


def init_producer_id(bootstrap: str) -> tuple[int, int]:
    with RawClient(bootstrap) as c:
        return raw.init_producer_id(c)


def produce(bootstrap: str, topic: str, partition: int, batch: bytes) -> int:
    with RawClient(bootstrap) as c:
        p = raw.produce(c, topic, batch, partition=partition)
    assert p.error_code == 0, p
    return p.base_offset


def records(n: int, ts: int, tag: str = "r") -> list[Record]:
    return [
        Record(offset=i, timestamp=ts + i, key=None, value=f"{tag}{i}".encode(), headers=[])
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def two_dirs(tmp_path_factory):
    """One broker with two log dirs, shared by the read-only checks of this module."""
    d = tmp_path_factory.mktemp("admin-broker")
    proc = BrokerProcess(d, {"log.dirs": f"{d}/logs-a,{d}/logs-b"})
    proc.start()
    try:
        yield proc
    finally:
        code = proc.stop()
    assert code == 0, proc.log_text()[-3000:]


def assert_clean_log(proc: BrokerProcess) -> None:
    assert "unexpected error" not in proc.log_text(), proc.log_text()[-3000:]


# --------------------------------------------------------------------------- DescribeLogDirs


def test_describe_log_dirs(two_dirs):
    b = two_dirs.bootstrap
    create_topic(b, "dirs", 4)
    produce(b, "dirs", 0, encode_batch(records(10, int(time.time() * 1000))))
    log_dirs = [os.path.abspath(two_dirs.data_dir / n) for n in ("logs-a", "logs-b")]
    for v in range(1, 5):
        Q = req(35, v)
        resp = call(b, Q.DescribeLogDirsRequest(topics=None))
        if v >= 3:
            assert resp.error_code == 0
        assert [r.log_dir for r in resp.results] == log_dirs
        seen = {}
        for r in resp.results:
            assert r.error_code == 0
            if v >= 4:
                st = os.statvfs(r.log_dir)
                assert r.total_bytes == st.f_blocks * st.f_frsize
                assert 0 < r.usable_bytes <= r.total_bytes
            for t in r.topics:
                for p in t.partitions:
                    assert (p.offset_lag, p.is_future_key) == (0, False)
                    seen[(t.name, p.partition_index)] = (r.log_dir, p.partition_size)
        assert {tp for tp in seen if tp[0] == "dirs"} == {("dirs", p) for p in range(4)}
        # the partitions are spread over both dirs, and each is where its directory is
        assert {seen[("dirs", p)][0] for p in range(4)} == set(log_dirs)
        for p in range(4):
            d, size = seen[("dirs", p)]
            assert os.path.isdir(os.path.join(d, f"dirs-{p}"))
            on_disk = sum(
                os.path.getsize(os.path.join(d, f"dirs-{p}", f))
                for f in os.listdir(os.path.join(d, f"dirs-{p}"))
                if f.endswith(".log")
            )
            assert size == on_disk
        assert seen[("dirs", 0)][1] > 0 and seen[("dirs", 1)][1] == 0
    # Only the partitions asked for; a topic with a log in a dir is listed there regardless.
    Q = req(35, 4)
    resp = call(
        b,
        Q.DescribeLogDirsRequest(
            topics=(Q.DescribableLogDirTopic(topic="dirs", partitions=(0, 9)),)
        ),
    )
    got = [
        (t.name, p.partition_index) for r in resp.results for t in r.topics for p in t.partitions
    ]
    assert got == [("dirs", 0)]
    resp = call(b, Q.DescribeLogDirsRequest(topics=()))
    assert all(t.partitions == () for r in resp.results for t in r.topics)
    assert_clean_log(two_dirs)


def test_describe_log_dirs_kafka_python(two_dirs):
    from kafka.admin import KafkaAdminClient

    create_topic(two_dirs.bootstrap, "dirs-kp", 2)
    admin = KafkaAdminClient(bootstrap_servers=two_dirs.bootstrap)
    try:
        (broker,) = admin.describe_log_dirs()
        dirs = broker["log_dirs"]
        assert len(dirs) == 2 and all(d["error_code"] == 0 for d in dirs)
        parts = {
            (t["name"], p["partition_index"])
            for d in dirs
            for t in d["topics"]
            for p in t["partitions"]
        }
        assert {("dirs-kp", 0), ("dirs-kp", 1)} <= parts
        (broker,) = admin.describe_log_dirs({"dirs-kp": [1]})
        parts = [
            (t["name"], p["partition_index"])
            for d in broker["log_dirs"]
            for t in d["topics"]
            for p in t["partitions"]
        ]
        assert parts == [("dirs-kp", 1)]
    finally:
        admin.close()


# ------------------------------------------------------------------- DescribeTopicPartitions


def dtp(bootstrap, names, limit=2000, cursor=None):
    Q = req(75, 0)
    return call(
        bootstrap,
        Q.DescribeTopicPartitionsRequest(
            topics=tuple(Q.TopicRequest(name=n) for n in names),
            response_partition_limit=limit,
            cursor=None
            if cursor is None
            else Q.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
        ),
    )


def summary(resp):
    return (
        [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in resp.topics],
        None
        if resp.next_cursor is None
        else (resp.next_cursor.topic_name, resp.next_cursor.partition_index),
    )


def test_describe_topic_partitions_fields(two_dirs):
    b = two_dirs.bootstrap
    tid = create_topic(b, "dtp-fields", 3)
    resp = dtp(b, ["dtp-fields"])
    (t,) = resp.topics
    assert (t.error_code, t.name, t.topic_id, t.is_internal) == (0, "dtp-fields", tid, False)
    # Kafka always reports them here: every topic operation without an authorizer
    assert t.topic_authorized_operations == 3576
    assert resp.next_cursor is None
    for i, p in enumerate(t.partitions):
        assert p.partition_index == i and p.error_code == 0
        assert (p.leader_id, p.leader_epoch) == (0, 0)
        assert (p.replica_nodes, p.isr_nodes, p.offline_replicas) == ((0,), (0,), ())
        assert (p.eligible_leader_replicas, p.last_known_elr) == ((), ())
    # unknown and invalid names; nothing is auto-created
    resp = dtp(b, ["dtp-missing", "bad/name"])
    assert [(t.name, t.error_code, t.topic_id, t.partitions) for t in resp.topics] == [
        ("bad/name", E.invalid_topic_exception, None, ()),  # kio reads the zero uuid as None
        ("dtp-missing", E.unknown_topic_or_partition, None, ()),
    ]
    assert dtp(b, ["dtp-missing"]).topics[0].error_code == E.unknown_topic_or_partition
    assert_clean_log(two_dirs)


def test_describe_topic_partitions_pagination(two_dirs):
    b = two_dirs.bootstrap
    create_topic(b, "page-a", 3)
    create_topic(b, "page-b", 2)
    names = ["page-b", "page-zz-missing", "page-a"]
    assert summary(dtp(b, names, limit=2)) == ([("page-a", 0, [0, 1])], ("page-a", 2))
    assert summary(dtp(b, names, limit=2, cursor=("page-a", 2))) == (
        [("page-a", 0, [2]), ("page-b", 0, [0])],
        ("page-b", 1),
    )
    assert summary(dtp(b, names, limit=2, cursor=("page-b", 1))) == (
        [("page-b", 0, [1]), ("page-zz-missing", E.unknown_topic_or_partition, [])],
        None,
    )
    # the limit is used up exactly at a topic's end: the cursor points at the next topic
    assert summary(dtp(b, names, limit=3)) == ([("page-a", 0, [0, 1, 2])], ("page-b", 0))
    # a limit below 1 counts as 1
    assert summary(dtp(b, ["page-a"], limit=0)) == ([("page-a", 0, [0])], ("page-a", 1))
    # all topics (empty list): by name from the cursor on, without error entries
    topics, cursor = summary(dtp(b, [], cursor=("page-a", 1)))
    assert topics[:2] == [("page-a", 0, [1, 2]), ("page-b", 0, [0, 1])]
    assert all(name > "page-b" for name, _, _ in topics[2:]) and cursor is None
    # a cursor outside the topic list, or with a negative partition, is an invalid request
    for bad in (("page-c", 0), ("page-a", -1)):
        resp = dtp(b, ["page-a", "page-b"], cursor=bad)
        assert [(t.name, t.error_code, t.partitions) for t in resp.topics] == [
            ("page-a", E.invalid_request, ()),
            ("page-b", E.invalid_request, ()),
        ]
    assert_clean_log(two_dirs)


def test_describe_topic_partitions_kafka_python_and_confluent(two_dirs):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient
    from kafka.admin import KafkaAdminClient

    b = two_dirs.bootstrap
    tid = create_topic(b, "dtp-clients", 5)
    admin = KafkaAdminClient(bootstrap_servers=b)
    try:
        got = admin.describe_topic_partitions(["dtp-clients"], response_partition_limit=3)
        (t,) = got["topics"]
        assert (t["name"], t["topic_id"], t["error_code"]) == ("dtp-clients", tid, 0)
        assert [p["partition_index"] for p in t["partitions"]] == [0, 1, 2]
        assert got["next_cursor"] == {"topic_name": "dtp-clients", "partition_index": 3}
        got = admin.describe_topic_partitions(
            ["dtp-clients"], response_partition_limit=3, cursor=got["next_cursor"]
        )
        assert [p["partition_index"] for p in got["topics"][0]["partitions"]] == [3, 4]
        assert got["next_cursor"] is None
    finally:
        admin.close()
    # librdkafka describes topics with Metadata: the two answers agree
    conf = AdminClient({"bootstrap.servers": b})
    d = conf.describe_topics(TopicCollection(["dtp-clients"]), request_timeout=30)[
        "dtp-clients"
    ].result(30)
    (t,) = dtp(b, ["dtp-clients"]).topics
    assert topic_id_string(d.topic_id) == uuid_to_kafka(t.topic_id)
    assert [
        (p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]) for p in d.partitions
    ] == [
        (p.partition_index, p.leader_id, list(p.replica_nodes), list(p.isr_nodes))
        for p in t.partitions
    ]


def uuid_to_kafka(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    import base64

    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


# ---------------------------------------------------------------- ListPartitionReassignments


def test_list_partition_reassignments_empty(two_dirs):
    b = two_dirs.bootstrap
    create_topic(b, "reassign", 2)
    Q = req(46, 0)
    for topics in (
        None,
        (Q.ListPartitionReassignmentsTopics(name="reassign", partition_indexes=(0, 1, 7)),),
        (Q.ListPartitionReassignmentsTopics(name="reassign-missing", partition_indexes=(0,)),),
    ):
        resp = call(
            b,
            Q.ListPartitionReassignmentsRequest(
                timeout=datetime.timedelta(seconds=10), topics=topics
            ),
        )
        assert (resp.error_code, resp.error_message, resp.topics) == (0, None, ())
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=b)
    try:
        assert admin.list_partition_reassignments() == {}
        assert admin.list_partition_reassignments([TopicPartition("reassign", 0)]) == {}
    finally:
        admin.close()


def test_ongoing_reassignments_are_read_from_the_topic_znode(tmp_path):
    """What a controller writes to /brokers/topics/T during a reassignment is what is listed."""
    store = EmbeddedStore.in_dir(tmp_path)
    try:
        cluster = ClusterMetadata(store)
        info = cluster.create_topic("moving", {0: [1, 2], 1: [2, 3], 2: [3, 1]})
        assert ongoing(store, "moving", None) == []
        doc = TopicAssignment(
            partitions={0: [1, 2, 3], 1: [2, 3], 2: [3, 1, 2]},
            topic_id=info.topic_id,
            adding_replicas={0: [3], 2: [2]},
            removing_replicas={2: [1]},
        )
        store.set(zn.TOPIC.path("moving"), zn.TOPIC.encode(doc))
        assert ongoing(store, "moving", None) == [
            (0, [1, 2, 3], [3], []),
            (2, [3, 1, 2], [2], [1]),
        ]
        assert ongoing(store, "moving", [2, 1, 9]) == [(2, [3, 1, 2], [2], [1])]
        assert ongoing(store, "absent", None) == []
    finally:
        store.close()


# --------------------------------------------------------------------------- DescribeProducers


def describe_producers(bootstrap, topic, partitions):
    Q = req(61, 0)
    resp = call(
        bootstrap,
        Q.DescribeProducersRequest(
            topics=(Q.TopicRequest(name=topic, partition_indexes=tuple(partitions)),)
        ),
    )
    (t,) = resp.topics
    assert t.name == topic
    return t.partitions


def test_describe_producers(two_dirs):
    b = two_dirs.bootstrap
    create_topic(b, "producers", 2)
    pid, epoch = init_producer_id(b)
    now = int(time.time() * 1000)
    produce(
        b,
        "producers",
        0,
        encode_batch(records(3, now), producer_id=pid, producer_epoch=epoch, base_sequence=0),
    )
    produce(
        b,
        "producers",
        0,
        encode_batch(records(4, now + 100), producer_id=pid, producer_epoch=epoch, base_sequence=3),
    )
    produce(b, "producers", 1, encode_batch(records(2, now)))  # not idempotent: no state
    p0, p1, p9 = describe_producers(b, "producers", [0, 1, 9])
    assert (p0.partition_index, p0.error_code, p0.error_message) == (0, 0, None)
    (s,) = p0.active_producers
    assert (s.producer_id, s.producer_epoch, s.last_sequence) == (pid, epoch, 6)
    assert s.last_timestamp == now + 103
    assert (s.coordinator_epoch, s.current_txn_start_offset) == (-1, -1)
    assert (p1.partition_index, p1.error_code, p1.active_producers) == (1, 0, ())
    assert (p9.partition_index, p9.error_code) == (9, E.unknown_topic_or_partition)
    (missing,) = describe_producers(b, "producers-missing", [0])
    assert missing.error_code == E.unknown_topic_or_partition
    assert_clean_log(two_dirs)


def test_describe_producers_survive_restart_and_kafka_python(tmp_path):
    from kafka import KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient

    proc = BrokerProcess(tmp_path / "b")
    proc.start()
    try:
        create_topic(proc.bootstrap, "idem", 1)
        producer = KafkaProducer(bootstrap_servers=proc.bootstrap, enable_idempotence=True)
        for i in range(5):
            producer.send("idem", f"v{i}".encode(), partition=0)
        producer.flush()
        producer.close()
        (before,) = describe_producers(proc.bootstrap, "idem", [0])
        (s,) = before.active_producers
        assert s.last_sequence == 4 and s.producer_epoch >= 0
        proc.restart()
        (after,) = describe_producers(proc.bootstrap, "idem", [0])
        assert after.active_producers == before.active_producers  # rebuilt from the log
        admin = KafkaAdminClient(bootstrap_servers=proc.bootstrap)
        try:
            got = admin.describe_producers([TopicPartition("idem", 0)])
            (state,) = got[TopicPartition("idem", 0)].active_producers
            assert (state.producer_id, state.last_sequence) == (s.producer_id, 4)
        finally:
            admin.close()
    finally:
        assert proc.stop() == 0


# --------------------------------------------------------------------------- client quotas


def alter_quotas(bootstrap, entries, validate_only=False, version=1):
    """entries: [(entity dict, [(key, value or None for remove)])] -> [(error, message)]."""
    Q = req(49, version)
    resp = call(
        bootstrap,
        Q.AlterClientQuotasRequest(
            entries=tuple(
                Q.EntryData(
                    entity=tuple(
                        Q.EntityData(entity_type=k, entity_name=n) for k, n in entity.items()
                    ),
                    ops=tuple(
                        Q.OpData(
                            key=key, value=0.0 if value is None else value, remove=value is None
                        )
                        for key, value in ops
                    ),
                )
                for entity, ops in entries
            ),
            validate_only=validate_only,
        ),
    )
    assert [{e.entity_type: e.entity_name for e in entry.entity} for entry in resp.entries] == [
        dict(entity) for entity, _ in entries
    ]
    return [(int(e.error_code), e.error_message) for e in resp.entries]


def describe_quotas(bootstrap, components, strict=False, version=1):
    """components: [(type, match type, match)] -> (error, {entity tuple: {key: value}})."""
    Q = req(48, version)
    resp = call(
        bootstrap,
        Q.DescribeClientQuotasRequest(
            components=tuple(
                Q.ComponentData(entity_type=t, match_type=m, match=s) for t, m, s in components
            ),
            strict=strict,
        ),
    )
    if resp.error_code != 0:
        assert resp.entries is None
        return int(resp.error_code), resp.error_message
    return 0, {
        tuple((e.entity_type, e.entity_name) for e in entry.entity): {
            v.key: v.value for v in entry.values
        }
        for entry in resp.entries
    }


EXACT, DEFAULT, ANY = 0, 1, 2
ALICE = (("user", "alice"),)
ALICE_C1 = (("user", "alice"), ("client-id", "c1"))
DEFAULT_USER = (("user", None),)
C1 = (("client-id", "c1"),)
DEFAULT_USER_C2 = (("user", None), ("client-id", "c2"))
IP = (("ip", "10.1.2.3"),)
DEFAULT_IP = (("ip", None),)


def test_client_quotas_alter_and_describe(broker):
    b = broker.bootstrap
    assert describe_quotas(b, []) == (0, {})
    ok = (0, None)
    assert (
        alter_quotas(
            b,
            [
                ({"user": "alice"}, [("producer_byte_rate", 1024.0), ("request_percentage", 12.5)]),
                ({"user": "alice", "client-id": "c1"}, [("consumer_byte_rate", 2048.0)]),
                ({"user": None}, [("producer_byte_rate", 500.0)]),
                ({"client-id": "c1"}, [("controller_mutation_rate", 3.5)]),
                ({"user": None, "client-id": "c2"}, [("consumer_byte_rate", 7.0)]),
                ({"ip": "10.1.2.3"}, [("connection_creation_rate", 10.0)]),
                ({"ip": None}, [("connection_creation_rate", 100.0)]),
            ],
        )
        == [ok] * 7
    )
    everything = {
        ALICE: {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
        ALICE_C1: {"consumer_byte_rate": 2048.0},
        DEFAULT_USER: {"producer_byte_rate": 500.0},
        C1: {"controller_mutation_rate": 3.5},
        DEFAULT_USER_C2: {"consumer_byte_rate": 7.0},
        IP: {"connection_creation_rate": 10.0},
        DEFAULT_IP: {"connection_creation_rate": 100.0},
    }
    for version in (0, 1):
        assert describe_quotas(b, [], version=version) == (0, everything)

    def sub(*keys):
        return {k: everything[k] for k in keys}

    # exact, default, any; non-strict allows other entity types, strict does not
    assert describe_quotas(b, [("user", EXACT, "alice")]) == (0, sub(ALICE, ALICE_C1))
    assert describe_quotas(b, [("user", EXACT, "alice")], strict=True) == (0, sub(ALICE))
    assert describe_quotas(b, [("user", DEFAULT, None)]) == (0, sub(DEFAULT_USER, DEFAULT_USER_C2))
    assert describe_quotas(b, [("user", ANY, None)], strict=True) == (0, sub(ALICE, DEFAULT_USER))
    assert describe_quotas(b, [("client-id", ANY, None)]) == (0, sub(ALICE_C1, C1, DEFAULT_USER_C2))
    assert describe_quotas(b, [("user", ANY, None), ("client-id", EXACT, "c1")]) == (
        0,
        sub(ALICE_C1),
    )
    assert describe_quotas(b, [("client-id", EXACT, "c1")], strict=True) == (0, sub(C1))
    assert describe_quotas(b, [("ip", ANY, None)]) == (0, sub(IP, DEFAULT_IP))
    assert describe_quotas(b, [("ip", DEFAULT, None)]) == (0, sub(DEFAULT_IP))
    assert describe_quotas(b, [("user", EXACT, "nobody")]) == (0, {})
    assert describe_quotas(b, [], strict=True) == (0, {})

    # removing keys; an entity left without quotas is no longer described
    assert alter_quotas(
        b,
        [
            ({"user": "alice"}, [("request_percentage", None)]),
            ({"client-id": "c1"}, [("controller_mutation_rate", None), ("never-set", None)]),
        ],
    ) == [ok, ok]
    assert describe_quotas(b, [("user", EXACT, "alice")], strict=True) == (
        0,
        {ALICE: {"producer_byte_rate": 1024.0}},
    )
    assert describe_quotas(b, [("client-id", EXACT, "c1")], strict=True) == (0, {})

    # validate_only checks without storing
    assert alter_quotas(b, [({"user": "bob"}, [("producer_byte_rate", 1.0)])], True) == [ok]
    assert describe_quotas(b, [("user", EXACT, "bob")]) == (0, {})
    assert_clean_log(broker)


def test_client_quotas_validation(broker):
    b = broker.bootstrap
    bad = E.invalid_request
    results = alter_quotas(
        b,
        [
            ({}, [("producer_byte_rate", 1.0)]),
            ({"group": "g"}, [("producer_byte_rate", 1.0)]),
            ({"user": ""}, [("producer_byte_rate", 1.0)]),
            ({"user": "u", "ip": "10.0.0.1"}, [("connection_creation_rate", 1.0)]),
            ({"ip": "not-an-ip"}, [("connection_creation_rate", 1.0)]),
            ({"user": "u"}, [("connection_creation_rate", 1.0)]),
            ({"ip": "10.0.0.1"}, [("producer_byte_rate", 1.0)]),
            ({"user": "u"}, [("no_such_quota", 1.0)]),
            ({"user": "u"}, [("producer_byte_rate", 1.5)]),
            ({"ip": "10.0.0.1"}, [("connection_creation_rate", -1.0)]),
            ({"user": "u"}, [("producer_byte_rate", 1.0), ("consumer_byte_rate", 0.25)]),
        ],
    )
    assert [code for code, _ in results] == [bad] * 11, results
    assert all(msg for _, msg in results)
    # nothing of a refused entry is stored, not even its valid ops
    assert describe_quotas(b, []) == (0, {})
    # IPv6 and integral values within 1e-6 are accepted
    assert alter_quotas(
        b,
        [
            ({"ip": "::1"}, [("connection_creation_rate", 5.0)]),
            ({"user": "u"}, [("producer_byte_rate", 99.0000001)]),
        ],
    ) == [(0, None), (0, None)]
    assert describe_quotas(b, [("user", EXACT, "u")])[1] == {
        (("user", "u"),): {"producer_byte_rate": 99.0}
    }
    # filter errors are for the whole request
    for components, code in (
        ([("", ANY, None)], bad),
        ([("user", ANY, None), ("user", EXACT, "u")], bad),
        ([("user", EXACT, None)], bad),
        ([("user", DEFAULT, "u")], bad),
        ([("user", ANY, "u")], bad),
        ([("ip", ANY, None), ("user", ANY, None)], bad),
        ([("group", ANY, None)], E.unsupported_version),
        ([("user", 7, None)], E.unsupported_version),
    ):
        got = describe_quotas(b, components)
        assert got[0] == code and got[1], (components, got)
    assert_clean_log(broker)


def test_client_quotas_are_stored_in_kafkas_zookeeper_layout(tmp_path):
    proc = BrokerProcess(tmp_path / "b")
    proc.start()
    try:
        b = proc.bootstrap
        assert (
            alter_quotas(
                b,
                [
                    ({"user": "CN=alice smith,O=acme*"}, [("producer_byte_rate", 1024.0)]),
                    ({"user": "bob", "client-id": "app/1"}, [("request_percentage", 50.0)]),
                    ({"user": None, "client-id": None}, [("consumer_byte_rate", 10.0)]),
                    ({"client-id": None}, [("consumer_byte_rate", 20.0)]),
                    ({"ip": "192.168.0.1"}, [("connection_creation_rate", 3.0)]),
                ],
            )
            == [(0, None)] * 5
        )
        proc.restart()  # stored, not just cached
        _, described = describe_quotas(b, [])
        assert described == {
            (("user", "CN=alice smith,O=acme*"),): {"producer_byte_rate": 1024.0},
            (("user", "bob"), ("client-id", "app/1")): {"request_percentage": 50.0},
            (("user", None), ("client-id", None)): {"consumer_byte_rate": 10.0},
            (("client-id", None),): {"consumer_byte_rate": 20.0},
            (("ip", "192.168.0.1"),): {"connection_creation_rate": 3.0},
        }
    finally:
        assert proc.stop() == 0
    store = EmbeddedStore.in_dir(tmp_path / "b" / "logs")
    try:

        def doc(path):
            return json.loads(store.get(path)[0])

        assert doc("/config/users/CN%3Dalice%20smith%2CO%3Dacme%2A") == {
            "version": 1,
            "config": {"producer_byte_rate": "1024"},
        }
        assert doc("/config/users/bob/clients/app%2F1")["config"] == {"request_percentage": "50.0"}
        assert doc("/config/users/<default>/clients/<default>")["config"] == {
            "consumer_byte_rate": "10"
        }
        assert doc("/config/clients/<default>")["config"] == {"consumer_byte_rate": "20"}
        assert doc("/config/ips/192.168.0.1")["config"] == {"connection_creation_rate": "3"}
        changes = sorted(store.children("/config/changes"))
        paths = [doc(f"/config/changes/{c}")["entity_path"] for c in changes]
        assert paths == [
            "brokers/<default>",  # the new cluster's min.insync.replicas default
            "users/CN%3Dalice%20smith%2CO%3Dacme%2A",
            "users/bob/clients/app%2F1",
            "users/<default>/clients/<default>",
            "clients/<default>",
            "ips/192.168.0.1",
        ]
        # the module's own reading of the tree agrees
        assert ({"user": "bob", "client-id": "app/1"}, {"request_percentage": "50.0"}) in list(
            cq.all_entities(store)
        )
    finally:
        store.close()


def test_sanitize_matches_kafka():
    assert cq.sanitize("CN=a b,O=c*~") == "CN%3Da%20b%2CO%3Dc%2A%7E"
    assert cq.sanitize("user-1_x.y") == "user-1_x.y"
    assert cq.desanitize(cq.sanitize("ü/é ~*")) == "ü/é ~*"


# ---------------------------------------------------------------------- kafka-topics --describe


def test_topics_describe_pages_through_describe_topic_partitions(two_dirs):
    """kafka-topics --describe goes through DescribeTopicPartitions as Kafka's tool does: a small
    --partition-size-limit-per-response still lists every partition, with empty ELR lists."""
    import subprocess
    import sys

    b = two_dirs.bootstrap
    create_topic(b, "cli-paged", 5)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkapy.cli.main",
            "topics",
            "--bootstrap-server",
            b,
            "--describe",
            "--topic",
            "cli-paged",
            "--partition-size-limit-per-response",
            "2",
        ],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("Topic: cli-paged\tTopicId: ")
    assert "\tPartitionCount: 5\tReplicationFactor: 1\t" in lines[0]
    assert lines[1:] == [
        f"\tTopic: cli-paged\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: "
        for p in range(5)
    ]
    assert_clean_log(two_dirs)


def test_topics_describe_shows_reassignments_as_kafka_does():
    from kafkapy.cli.topics_output import PartitionInfo, TopicInfo, partition_line, topic_line

    moving = PartitionInfo(
        0, 1, [1, 2, 3], [1, 2], elr=[], last_known_elr=[], adding=[3], removing=[1]
    )
    assert partition_line("t", moving) == (
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tAdding Replicas: 3"
        "\tRemoving Replicas: 1\tElr: \tLastKnownElr: "
    )
    # the replication factor leaves out the replicas being added
    assert "\tReplicationFactor: 2\t" in topic_line(TopicInfo("t", "", [moving]))
