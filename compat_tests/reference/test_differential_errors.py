"""Differential sessions of requests a broker must refuse or answer with care, sent with the raw
protocol client for their exact error fields: unknown topics and partitions across ListOffsets,
Fetch, OffsetCommit and OffsetForLeaderEpoch; CreatePartitions that shrink or name nothing;
DeleteRecords (valid, beyond the high watermark) and what Fetch and ListOffsets answer below the
new log start; the legacy AlterConfigs with valid, unknown, removed and invalid keys; an idempotent
producer's duplicate and out-of-order sequences; bad acks; JoinGroup with a bad session timeout
or without a member id. Each runs against Apache Kafka 4.4 and kafkapy; differences not in
known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from kio.schema.errors import ErrorCode

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import (
    create_topic,
    entity_obs,
    produce_ok,
    raw,
)
from kafkapy.protocol.record_batch import Record, encode_batch

TOPIC_RESOURCE = 2
RETRIABLE = (ErrorCode.coordinator_load_in_progress, ErrorCode.not_coordinator,
             ErrorCode.coordinator_not_available)


def wait_for_coordinator(target: Target, group: str, timeout: float = 30.0,
                         key_type: int = 0) -> None:
    """FindCoordinator until the group's (key_type 1: the transactional id's) coordinator is
    there, as a client does first."""
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest

    deadline = time.monotonic() + timeout
    with raw(target) as client:
        while True:
            resp = client.request(FindCoordinatorRequest(key_type=key_type,
                                                         coordinator_keys=(group,)))
            if resp.coordinators[0].error_code == ErrorCode.none:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no coordinator for {group} on {target.kind}: {resp}")
            time.sleep(0.2)
    if key_type != 0:
        return
    with raw(target) as client:  # and until the coordinator has loaded the group's partition
        while True:
            from kio.schema.describe_groups.v5.request import DescribeGroupsRequest

            resp = client.request(DescribeGroupsRequest(groups=(group,),
                                                        include_authorized_operations=False))
            if resp.groups[0].error_code not in RETRIABLE or time.monotonic() > deadline:
                return
            time.sleep(0.2)


def _list_offsets(client: Any, topic: str, partition: int, ts: int) -> Any:
    from kio.schema.list_offsets.v7.request import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    resp = client.request(ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(
        ListOffsetsTopic(name=topic, partitions=(ListOffsetsPartition(
            partition_index=partition, current_leader_epoch=-1, timestamp=ts),)),)))
    return entity_obs(resp.topics[0].partitions[0])


def _fetch(client: Any, topic: str, partition: int, offset: int) -> Any:
    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic

    resp = client.request(FetchRequest(
        replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
        max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
        topics=(FetchTopic(topic=topic, partitions=(FetchPartition(
            partition=partition, current_leader_epoch=-1, fetch_offset=offset,
            last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20),)),),
        forgotten_topics_data=(), rack_id=""))
    return entity_obs(resp)


def unknown_names(target: Target) -> dict[str, Any]:
    from kio.schema.offset_commit.v8.request import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from kio.schema.offset_for_leader_epoch.v4.request import (
        OffsetForLeaderEpochRequest,
        OffsetForLeaderPartition,
        OffsetForLeaderTopic,
    )

    topic = "diff-unknown-names"
    create_topic(target, topic)
    out: dict[str, Any] = {}
    with raw(target) as client:
        for where, (name, partition) in {"unknown_topic": ("diff-nowhere", 0),
                                         "unknown_partition": (topic, 3)}.items():
            out[f"list_offsets_{where}"] = _list_offsets(client, name, partition, -1)
            out[f"fetch_{where}"] = _fetch(client, name, partition, 0)
            commit = client.request(OffsetCommitRequest(
                group_id="diff-simple-committer", generation_id_or_member_epoch=-1,
                member_id="", group_instance_id=None, topics=(OffsetCommitRequestTopic(
                    name=name, partitions=(OffsetCommitRequestPartition(
                        partition_index=partition, committed_offset=0,
                        committed_leader_epoch=-1, committed_metadata=""),)),)))
            out[f"offset_commit_{where}"] = entity_obs(commit)
            epochs = client.request(OffsetForLeaderEpochRequest(replica_id=-2, topics=(
                OffsetForLeaderTopic(topic=name, partitions=(OffsetForLeaderPartition(
                    partition=partition, current_leader_epoch=-1, leader_epoch=0),)),)))
            out[f"offset_for_leader_epoch_{where}"] = entity_obs(epochs)
    return out


def test_unknown_names(differential: Differential) -> None:
    outcome = differential.check("unknown_names", unknown_names)
    assert outcome.observations > 30


def create_partitions(target: Target) -> dict[str, Any]:
    from kio.schema.create_partitions.v3.request import (
        CreatePartitionsRequest,
        CreatePartitionsTopic,
    )

    topic = "diff-create-partitions"
    create_topic(target, topic, partitions=2)
    cases = {"shrink": (topic, 1, False), "same": (topic, 2, False),
             "grow_validate_only": (topic, 4, True), "grow": (topic, 3, False),
             "unknown_topic": ("diff-create-partitions-missing", 2, False),
             "too_many": (topic, 1_000_000, False)}
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, (where, count, validate_only) in cases.items():
            resp = client.request(CreatePartitionsRequest(
                topics=(CreatePartitionsTopic(name=where, count=count, assignments=None),),
                timeout=datetime.timedelta(seconds=30), validate_only=validate_only))
            out[name] = entity_obs(resp.results[0])
    return out


def test_create_partitions(differential: Differential) -> None:
    outcome = differential.check("create_partitions", create_partitions)
    assert outcome.observations >= 18


def delete_records(target: Target) -> dict[str, Any]:
    from kio.schema.delete_records.v2.request import (
        DeleteRecordsPartition,
        DeleteRecordsRequest,
        DeleteRecordsTopic,
    )

    topic = "diff-delete-records"
    create_topic(target, topic)
    for i in range(3):
        produce_ok(target, topic, [(1_700_000_000_000 + i, b"r%d" % i) for _ in range(2)])
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, (where, partition, offset) in {
                "beyond_high_watermark": (topic, 0, 100), "to_4": (topic, 0, 4),
                "backwards": (topic, 0, 2), "to_high_watermark": (topic, 0, -1),
                "unknown_partition": (topic, 9, 1)}.items():
            resp = client.request(DeleteRecordsRequest(
                topics=(DeleteRecordsTopic(name=where, partitions=(DeleteRecordsPartition(
                    partition_index=partition, offset=offset),)),),
                timeout=datetime.timedelta(seconds=30)))
            out[name] = entity_obs(resp.topics[0].partitions[0])
            if name == "to_4":
                out["fetch_below_log_start"] = _fetch(client, topic, 0, 1)
                out["earliest_after"] = _list_offsets(client, topic, 0, -2)
                out["by_time_before_log_start"] = _list_offsets(client, topic, 0,
                                                                1_700_000_000_000)
    return out


def test_delete_records(differential: Differential) -> None:
    outcome = differential.check("delete_records", delete_records)
    assert outcome.observations > 30


def legacy_alter_configs(target: Target) -> dict[str, Any]:
    from kio.schema.alter_configs.v2.request import (
        AlterableConfig,
        AlterConfigsRequest,
        AlterConfigsResource,
    )

    topic = "diff-legacy-alter"
    create_topic(target, topic)
    cases = {
        "valid": {"retention.ms": "120000"},
        "unknown_key": {"no.such.config": "1"},
        "removed_key": {"message.format.version": "3.0-IV1"},
        "invalid_value": {"retention.ms": "soon"},
        "empty": {},
    }
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, configs in cases.items():
            resp = client.request(AlterConfigsRequest(resources=(AlterConfigsResource(
                resource_type=TOPIC_RESOURCE, resource_name=topic,
                configs=tuple(AlterableConfig(name=k, value=v) for k, v in configs.items())),),
                validate_only=False))
            out[name] = entity_obs(resp.responses[0])
    return out


def test_legacy_alter_configs(differential: Differential) -> None:
    outcome = differential.check("legacy_alter_configs", legacy_alter_configs)
    assert outcome.observations >= 20


def idempotent_sequences(target: Target) -> dict[str, Any]:
    from kio.schema.init_producer_id.v4.request import InitProducerIdRequest

    from compat_tests.rawclient import produce_request

    topic = "diff-idempotent"
    create_topic(target, topic)
    produce_ok(target, topic, [(1_700_000_000_000, b"warm-up")])  # the leader takes writes
    out: dict[str, Any] = {}
    with raw(target) as client:
        deadline = time.monotonic() + 20
        while True:  # as a client does: retry while the broker gets its producer id block
            init = client.request(InitProducerIdRequest(
                transactional_id=None, transaction_timeout=datetime.timedelta(milliseconds=-1),
                producer_id=-1, producer_epoch=-1))
            if init.error_code not in RETRIABLE or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        out["init"] = entity_obs(init, drop={"producer_id"})
        pid, epoch = init.producer_id, init.producer_epoch

        def send(seq: int, count: int, acks: int = -1) -> Any:
            batch = encode_batch([Record(0, 1_700_000_000_000, None, b"i", [])] * count,
                                 producer_id=pid, producer_epoch=epoch, base_sequence=seq)
            resp = client.request(produce_request(topic, batch, acks=acks))
            return entity_obs(resp.responses[0].partition_responses[0],
                              drop={"log_append_time"})

        out["first"] = send(0, 2)
        out["duplicate"] = send(0, 2)
        out["next"] = send(2, 1)
        out["gap"] = send(7, 1)
        out["acks_2"] = send(3, 1, acks=2)
    return out


def test_idempotent_sequences(differential: Differential) -> None:
    outcome = differential.check("idempotent_sequences", idempotent_sequences)
    assert outcome.observations > 25


def join_group_errors(target: Target) -> dict[str, Any]:
    from kio.schema.join_group.v7.request import JoinGroupRequest, JoinGroupRequestProtocol

    wait_for_coordinator(target, "diff-join-errors")

    def join(session_ms: int, member_id: str = "", protocol_type: str = "consumer") -> Any:
        with raw(target) as client:
            resp = client.request(JoinGroupRequest(
                group_id="diff-join-errors", session_timeout=datetime.timedelta(
                    milliseconds=session_ms),
                rebalance_timeout=datetime.timedelta(milliseconds=10_000), member_id=member_id,
                group_instance_id=None, protocol_type=protocol_type,
                protocols=(JoinGroupRequestProtocol(name="range", metadata=b""),)))
        return entity_obs(resp)

    return {"session_too_short": join(10), "session_too_long": join(10_000_000),
            "no_member_id": join(10_000), "unknown_member_id": join(10_000, "diff-stranger")}


def test_join_group_errors(differential: Differential) -> None:
    outcome = differential.check("join_group_errors", join_group_errors)
    assert outcome.observations >= 28


def classic_group_protocol(target: Target) -> dict[str, Any]:
    """A classic group driven request by request: join (member id required, then joined as
    leader), sync, and then heartbeats, syncs, commits and leaves with a wrong generation, an
    unknown member or a wrong protocol type."""
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
    from kio.schema.heartbeat.v4.request import HeartbeatRequest
    from kio.schema.join_group.v7.request import JoinGroupRequest, JoinGroupRequestProtocol
    from kio.schema.leave_group.v5.request import LeaveGroupRequest, MemberIdentity
    from kio.schema.offset_commit.v8.request import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from kio.schema.sync_group.v5.request import SyncGroupRequest, SyncGroupRequestAssignment

    group, topic = "diff-classic-protocol", "diff-classic-protocol-topic"
    create_topic(target, topic)
    wait_for_coordinator(target, group)
    out: dict[str, Any] = {}
    with raw(target) as client:
        def join(member_id: str) -> Any:
            return client.request(JoinGroupRequest(
                group_id=group, session_timeout=datetime.timedelta(seconds=30),
                rebalance_timeout=datetime.timedelta(seconds=10), member_id=member_id,
                group_instance_id=None, protocol_type="consumer",
                protocols=(JoinGroupRequestProtocol(name="range", metadata=b"\0\0"),)))

        first = join("")
        out["join_without_id"] = entity_obs(first)
        joined = join(first.member_id)
        out["join"] = entity_obs(joined)
        member, generation = joined.member_id, joined.generation_id

        def sync(gen: int, who: str, protocol_type: str | None = "consumer") -> Any:
            return entity_obs(client.request(SyncGroupRequest(
                group_id=group, generation_id=gen, member_id=who, group_instance_id=None,
                protocol_type=protocol_type, protocol_name="range",
                assignments=(SyncGroupRequestAssignment(member_id=member,
                                                        assignment=b"assigned"),))))

        def heartbeat(gen: int, who: str) -> Any:
            return entity_obs(client.request(HeartbeatRequest(
                group_id=group, generation_id=gen, member_id=who, group_instance_id=None)))

        def commit(gen: int, who: str) -> Any:
            return entity_obs(client.request(OffsetCommitRequest(
                group_id=group, generation_id_or_member_epoch=gen, member_id=who,
                group_instance_id=None, topics=(OffsetCommitRequestTopic(
                    name=topic, partitions=(OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=0, committed_leader_epoch=-1,
                        committed_metadata="m"),)),))))

        out["sync_wrong_protocol_type"] = sync(generation, member, "connect")
        out["sync"] = sync(generation, member)
        out["sync_wrong_generation"] = sync(generation + 5, member)
        out["sync_unknown_member"] = sync(generation, "diff-nobody")
        out["heartbeat"] = heartbeat(generation, member)
        out["heartbeat_wrong_generation"] = heartbeat(generation + 5, member)
        out["heartbeat_unknown_member"] = heartbeat(generation, "diff-nobody")
        out["commit"] = commit(generation, member)
        out["commit_wrong_generation"] = commit(generation + 5, member)
        out["commit_unknown_member"] = commit(generation, "diff-nobody")
        out["delete_while_stable"] = entity_obs(client.request(
            DeleteGroupsRequest(groups_names=(group,))).results[0])
        out["leave"] = entity_obs(client.request(LeaveGroupRequest(group_id=group, members=(
            MemberIdentity(member_id="diff-nobody", group_instance_id=None, reason="test"),
            MemberIdentity(member_id=member, group_instance_id=None, reason="test"),))))
        out["heartbeat_after_leave"] = heartbeat(generation, member)
    return out


def test_classic_group_protocol(differential: Differential) -> None:
    outcome = differential.check("classic_group_protocol", classic_group_protocol)
    assert outcome.observations > 40
