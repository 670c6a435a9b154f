"""Differential session of TxnOffsetCommit v5 and v6 (KIP-1319): a transactional producer
(transactions version 2, so the commit adds the group's partition to the transaction itself)
commits offsets for a group that does not exist (with and without a generation), for a simple
group, for an unknown topic id (v6 names topics by id), and as a KIP-848 consumer group member
with a stale member epoch. v6 answers GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH where v5 keeps
the legacy ILLEGAL_GENERATION. Raw requests, for the exact error fields. Runs against Apache
Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw
from compat_tests.reference.test_differential_errors import RETRIABLE, wait_for_coordinator

TOPIC = "diff-txn-offset-commit"
TXN_ID = "diff-txn-offset-commit-txn"
MEMBER_GROUP = "diff-toc-kip848"


def _until_ready(send: Any, timeout: float = 30.0) -> Any:
    """Send until the answer's error is not a coordinator still loading or moving."""
    deadline = time.monotonic() + timeout
    while True:
        resp = send()
        if resp.error_code not in RETRIABLE or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


def _topic_id(client: Any, name: str) -> uuid.UUID:
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    resp = client.request(MetadataRequest(
        topics=(MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=name),),
        allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    return resp.topics[0].topic_id


def _join_consumer_group(client: Any) -> tuple[str, int]:
    """A KIP-848 member of MEMBER_GROUP subscribed to TOPIC: (member id, member epoch)."""
    from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest

    member_id = str(uuid.UUID(int=0x848))
    resp = _until_ready(lambda: client.request(ConsumerGroupHeartbeatRequest(
        group_id=MEMBER_GROUP, member_id=member_id, member_epoch=0, instance_id=None,
        rack_id=None, rebalance_timeout=datetime.timedelta(seconds=30),
        subscribed_topic_names=(TOPIC,), subscribed_topic_regex=None, server_assignor=None,
        topic_partitions=())))
    assert resp.error_code == ErrorCode.none, resp
    return member_id, resp.member_epoch


def txn_offset_commits(target: Target) -> dict[str, Any]:
    from kio.schema.end_txn.v5.request import EndTxnRequest
    from kio.schema.init_producer_id.v5.request import InitProducerIdRequest
    from kio.schema.txn_offset_commit.v5 import request as v5

    from kafkapy.protocol.kio_schemas import txn_offset_commit_v6 as v6

    create_topic(target, TOPIC, partitions=1)
    for group in ("diff-toc-simple", MEMBER_GROUP):
        wait_for_coordinator(target, group)
    wait_for_coordinator(target, TXN_ID, key_type=1)
    out: dict[str, Any] = {}
    with raw(target) as client:
        topic_id = _topic_id(client, TOPIC)
        member_id, member_epoch = _join_consumer_group(client)
        init = _until_ready(lambda: client.request(InitProducerIdRequest(
            transactional_id=TXN_ID, transaction_timeout=datetime.timedelta(seconds=60),
            producer_id=-1, producer_epoch=-1)))
        assert init.error_code == ErrorCode.none, init
        pid, epoch = init.producer_id, init.producer_epoch

        def commit(version: int, group: str, generation: int = -1, member: str = "",
                   topic: uuid.UUID | None = None) -> Any:
            if version == 6:
                topics: Any = (v6.TxnOffsetCommitRequestTopic(
                    topic_id=topic or topic_id, partitions=(v6.TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=5, committed_metadata="m"),)),)
                request: Any = v6.TxnOffsetCommitRequest(
                    transactional_id=TXN_ID, group_id=group, producer_id=pid,
                    producer_epoch=epoch, generation_id=generation, member_id=member,
                    topics=topics)
            else:
                request = v5.TxnOffsetCommitRequest(
                    transactional_id=TXN_ID, group_id=group, producer_id=pid,
                    producer_epoch=epoch, generation_id=generation, member_id=member,
                    topics=(v5.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=(
                        v5.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=5, committed_metadata="m"),)),))
            resp = client.request(request)
            return [[p.error_code.name for p in t.partitions] for t in resp.topics]

        for version in (5, 6):
            out[f"v{version}.simple_group"] = commit(version, "diff-toc-simple")
            out[f"v{version}.no_group_no_generation"] = commit(version, f"diff-toc-new-{version}")
            out[f"v{version}.no_group_generation_3"] = commit(
                version, f"diff-toc-missing-{version}", generation=3, member="m-3")
            out[f"v{version}.stale_member_epoch"] = commit(
                version, MEMBER_GROUP, generation=member_epoch + 7, member=member_id)
            out[f"v{version}.unknown_member"] = commit(
                version, MEMBER_GROUP, generation=member_epoch, member="diff-toc-stranger")
            out[f"v{version}.current_member_epoch"] = commit(
                version, MEMBER_GROUP, generation=member_epoch, member=member_id)
        out["v6.unknown_topic_id"] = commit(6, "diff-toc-simple", topic=uuid.UUID(int=4711))
        end = client.request(EndTxnRequest(transactional_id=TXN_ID, producer_id=pid,
                                           producer_epoch=epoch, committed=False))
        out["abort"] = entity_obs(end, drop={"producer_id", "producer_epoch"})
    return out


def test_txn_offset_commits(differential: Differential) -> None:
    outcome = differential.check("txn_offset_commits", txn_offset_commits)
    assert outcome.observations >= 13
