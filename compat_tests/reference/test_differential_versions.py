"""Differential sessions for the API versions Kafka 4.4 added to APIs kafkapy serves, on the wire
with the raw protocol client: Fetch's error offsets at every version, ApiVersions v5's cluster and
node check, Produce v13 / OffsetCommit v10 / OffsetFetch v10 by topic id (known and unknown ids),
ListTransactions v2's id pattern, AlterPartitionReassignments v1's replication-factor guard,
DeleteGroups v3's per-group message and ListOffsets v11's earliest-pending-upload timestamp. Each
runs against Apache Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from kio.index import load_request_schema

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, produce_ok, raw
from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.server.responses import build

ZERO_WAIT = datetime.timedelta(milliseconds=0)


def _classes(key: int, version: int) -> Any:
    """The module holding a request version's classes (kio's, or kafkapy's kio_schemas)."""
    import sys

    return sys.modules[load_request_schema(key, version).__module__]


def _metadata(target: Target, topic: str | None) -> Any:
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    topics = () if topic is None else (MetadataRequestTopic(topic_id=None, name=topic),)
    with raw(target) as client:
        return client.request(MetadataRequest(
            topics=topics, allow_auto_topic_creation=False,
            include_topic_authorized_operations=False))


def topic_id(target: Target, topic: str) -> uuid.UUID:
    return _metadata(target, topic).topics[0].topic_id


def _fetch(version: int, topic: str, tid: uuid.UUID, offset: int, epoch: int) -> Any:
    m = _classes(1, version)
    part = build(m.FetchPartition, partition=0, current_leader_epoch=epoch, fetch_offset=offset,
                 last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20)
    ftopic = build(m.FetchTopic, topic=topic, topic_id=tid, partitions=(part,))
    return build(m.FetchRequest, replica_id=-1, max_wait=ZERO_WAIT, min_bytes=1,
                 max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                 topics=(ftopic,), forgotten_topics_data=(), rack_id="")


def fetch_errors_by_version(target: Target) -> dict[str, Any]:
    """Difference 5 at every Fetch version a client may use: the offsets reported with
    OFFSET_OUT_OF_RANGE (above the end, below the start) and with UNKNOWN_LEADER_EPOCH."""
    topic = "diff-fetch-errors-by-version"
    create_topic(target, topic)
    produce_ok(target, topic, [(int(time.time() * 1000), b"v%d" % i) for i in range(3)])
    tid = topic_id(target, topic)
    out: dict[str, Any] = {}
    with raw(target) as client:
        for version in (4, 7, 11, 12, 13, 15, 17, 18):
            for name, offset, epoch in (("above_end", 100, -1), ("negative", -7, -1),
                                        ("future_epoch", 0, 99)):
                resp = client.request(_fetch(version, topic, tid, offset, epoch))
                part = resp.responses[0].partitions[0]
                out[f"v{version}.{name}"] = {
                    "error_code": part.error_code.name,
                    "high_watermark": part.high_watermark,
                    "last_stable_offset": getattr(part, "last_stable_offset", None),
                    "log_start_offset": getattr(part, "log_start_offset", None),
                    "records": len(part.records or b""),
                }
    return out


def test_fetch_errors_by_version(differential: Differential) -> None:
    outcome = differential.check("fetch_errors_by_version", fetch_errors_by_version)
    assert outcome.observations >= 8 * 3 * 5


def api_versions_v5(target: Target) -> dict[str, Any]:
    """ApiVersions v5: no cluster named, this broker named, another cluster or node named, and
    only one of the two set."""
    m = _classes(18, 5)
    meta = _metadata(target, None)
    cluster, node = meta.cluster_id, meta.brokers[0].node_id
    cases = {
        "anonymous": (None, -1),
        "this_broker": (cluster, node),
        "other_cluster": ("AAAAAAAAAAAAAAAAAAAAAA", node),
        "other_node": (cluster, node + 7),
        "cluster_without_node": (cluster, -1),
        "node_without_cluster": (None, node),
    }
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, (cluster_id, node_id) in cases.items():
            resp = client.request(m.ApiVersionsRequest(
                client_software_name="differential", client_software_version="1",
                cluster_id=cluster_id, node_id=node_id))
            out[name] = {"error_code": resp.error_code.name, "api_keys": len(resp.api_keys) > 0}
    return out


def test_api_versions_v5(differential: Differential) -> None:
    outcome = differential.check("api_versions_v5", api_versions_v5)
    assert outcome.observations >= 12


def by_topic_id(target: Target) -> dict[str, Any]:
    """Produce v13, OffsetCommit v10 and OffsetFetch v10 with a known and an unknown topic id."""
    topic = "diff-by-topic-id"
    create_topic(target, topic)
    tid = topic_id(target, topic)
    unknown = uuid.UUID(int=0x5EED)
    now = int(time.time() * 1000)
    out: dict[str, Any] = {}
    with raw(target) as client:
        p = _classes(0, 13)
        resp = client.request(p.ProduceRequest(
            transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=10),
            topic_data=tuple(p.TopicProduceData(topic_id=t, partition_data=(p.PartitionProduceData(
                index=0, records=encode_batch([Record(0, now, None, b"by-id", [])])),))
                for t in (tid, unknown))))
        out["produce_v13"] = entity_obs(resp)
        c = _classes(8, 10)
        resp = client.request(c.OffsetCommitRequest(
            group_id="diff-by-topic-id", generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, topics=tuple(c.OffsetCommitRequestTopic(
                topic_id=t, partitions=(c.OffsetCommitRequestPartition(
                    partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                    committed_metadata="m"),)) for t in (tid, unknown))))
        out["offset_commit_v10"] = entity_obs(resp)
        f = _classes(9, 10)
        for name, topics in (("offset_fetch_v10", tuple(f.OffsetFetchRequestTopics(
                topic_id=t, partition_indexes=(0,)) for t in (tid, unknown))),
                             ("offset_fetch_v10_all", None)):
            resp = client.request(f.OffsetFetchRequest(groups=(f.OffsetFetchRequestGroup(
                group_id="diff-by-topic-id", member_id=None, member_epoch=-1, topics=topics),),
                require_stable=False))
            out[name] = entity_obs(resp)
    return out


def test_by_topic_id(differential: Differential) -> None:
    outcome = differential.check("by_topic_id", by_topic_id)
    assert outcome.observations >= 15


def new_version_fields(target: Target) -> dict[str, Any]:
    """ListTransactions v2's pattern (a bad one, one matching nothing, an empty one),
    AlterPartitionReassignments v1 with and without allow_replication_factor_change (echoed),
    DeleteGroups v3 of a group that does not exist, ListOffsets v11 at -6 (earliest pending
    upload)."""
    topic = "diff-new-version-fields"
    create_topic(target, topic)
    produce_ok(target, topic, [(int(time.time() * 1000), b"x")])
    out: dict[str, Any] = {}
    with raw(target) as client:
        lt = _classes(66, 2)
        for name, pattern in (("bad", "(unclosed"), ("none_match", "nothing-.*"), ("empty", "")):
            resp = client.request(lt.ListTransactionsRequest(
                state_filters=(), producer_id_filters=(), duration_filter=-1,
                transactional_id_pattern=pattern))
            out[f"list_transactions_{name}"] = {"error_code": resp.error_code.name,
                                                "states": len(resp.transaction_states)}
        ar = _classes(45, 1)
        node = _metadata(target, None).brokers[0].node_id
        for allow in (False, True):
            resp = client.request(ar.AlterPartitionReassignmentsRequest(
                timeout=datetime.timedelta(seconds=30), allow_replication_factor_change=allow,
                topics=(ar.ReassignableTopic(name=topic, partitions=(ar.ReassignablePartition(
                    partition_index=0, replicas=(node,)),)),)))
            out[f"reassign_allow_{allow}"] = entity_obs(resp)
        dg = _classes(42, 3)
        resp = client.request(dg.DeleteGroupsRequest(groups_names=("diff-no-such-group",)))
        out["delete_groups_v3"] = entity_obs(resp)
        lo = _classes(2, 11)
        resp = client.request(lo.ListOffsetsRequest(
            replica_id=-1, isolation_level=0, timeout=datetime.timedelta(seconds=10),
            topics=(lo.ListOffsetsTopic(name=topic, partitions=(lo.ListOffsetsPartition(
                partition_index=0, current_leader_epoch=-1, timestamp=-6),)),)))
        out["list_offsets_v11"] = entity_obs(resp)
    return out


def test_new_version_fields(differential: Differential) -> None:
    outcome = differential.check("new_version_fields", new_version_fields)
    assert outcome.observations >= 15
