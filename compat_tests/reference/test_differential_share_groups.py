"""Differential session of a share group (KIP-932) through the raw protocol, against Apache
Kafka 4.4 and kafkapy: ShareGroupHeartbeat (join, heartbeat, fenced epoch, the request's own
errors), ShareGroupDescribe (the group, a missing one), ShareFetch and ShareAcknowledge
(acquired ranges and delivery counts, accept, release and redelivery, an acknowledgement of a
record not held, a wrong session epoch, closing the session), and the group in ListGroups,
DescribeGroups, DescribeShareGroupOffsets and DeleteGroups. Differences not in
known_differences.py fail the test."""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, produce_ok, raw

TOPIC, GROUP = "diff-share-topic", "diff-share-group"
ACCEPT, RELEASE = 1, 2


def _heartbeat(client: Any, member: str, epoch: int, topics: tuple[str, ...] | None) -> Any:
    from kio.schema.share_group_heartbeat.v1.request import ShareGroupHeartbeatRequest

    return client.request(ShareGroupHeartbeatRequest(
        group_id=GROUP, member_id=member, member_epoch=epoch, rack_id=None,
        subscribed_topic_names=topics))


def _hb_obs(resp: Any) -> dict[str, Any]:
    assignment = None if resp.assignment is None else sorted(
        p for t in resp.assignment.topic_partitions for p in t.partitions)
    interval = resp.heartbeat_interval // datetime.timedelta(milliseconds=1)
    return {"error": resp.error_code.name, "message": resp.error_message,
            "epoch": resp.member_epoch, "interval_ms": interval, "assignment": assignment}


def _fetch(client: Any, member: str, epoch: int, topic_id: Any,
           acks: list[tuple[int, int, int]] = ()) -> Any:  # type: ignore[assignment]
    from kio.schema.share_fetch.v2 import request as m

    batches = tuple(m.AcknowledgementBatch(first_offset=f, last_offset=la, acknowledge_types=(t,))
                    for f, la, t in acks)
    return client.request(m.ShareFetchRequest(
        group_id=GROUP, member_id=member, share_session_epoch=epoch,
        max_wait=datetime.timedelta(milliseconds=200), min_bytes=1, max_bytes=1 << 20,
        max_records=100, batch_size=100, topics=(m.FetchTopic(topic_id=topic_id, partitions=(
            m.FetchPartition(partition_index=0, acknowledgement_batches=batches),)),),
        forgotten_topics_data=()))


def _fetch_obs(resp: Any) -> dict[str, Any]:
    parts = [p for t in resp.responses for p in t.partitions]
    return {"error": resp.error_code.name, "lock_ms": resp.acquisition_lock_timeout
            // datetime.timedelta(milliseconds=1),
            "partitions": [{"error": p.error_code.name,
                            "ack_error": p.acknowledge_error_code,
                            "acquired": [(a.first_offset, a.last_offset, a.delivery_count)
                                         for a in p.acquired_records],
                            "has_records": bool(p.records)} for p in parts]}


def _acknowledge(client: Any, member: str, epoch: int, topic_id: Any,
                 acks: list[tuple[int, int, int]]) -> dict[str, Any]:
    from kio.schema.share_acknowledge.v2 import request as m

    resp = client.request(m.ShareAcknowledgeRequest(
        group_id=GROUP, member_id=member, share_session_epoch=epoch,
        topics=(m.AcknowledgeTopic(topic_id=topic_id, partitions=(m.AcknowledgePartition(
            partition_index=0, acknowledgement_batches=tuple(
                m.AcknowledgementBatch(first_offset=f, last_offset=la, acknowledge_types=(t,))
                for f, la, t in acks)),)),)))
    return {"error": resp.error_code.name,
            "partitions": [p.error_code.name for t in resp.responses for p in t.partitions]}


def _set_earliest(client: Any) -> str:
    from kio.schema.incremental_alter_configs.v1.request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    resp = client.request(IncrementalAlterConfigsRequest(resources=(AlterConfigsResource(
        resource_type=32, resource_name=GROUP, configs=(AlterableConfig(
            name="share.auto.offset.reset", config_operation=0, value="earliest"),)),),
        validate_only=False))
    return resp.responses[0].error_code.name


def share_group(target: Target) -> dict[str, Any]:
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
    from kio.schema.describe_groups.v6.request import DescribeGroupsRequest
    from kio.schema.describe_share_group_offsets.v1 import request as dso
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
    from kio.schema.list_groups.v5.request import ListGroupsRequest
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
    from kio.schema.share_group_describe.v1.request import ShareGroupDescribeRequest

    create_topic(target, TOPIC)
    produce_ok(target, TOPIC, [(0, b"s0"), (0, b"s1"), (0, b"s2")])
    out: dict[str, Any] = {}
    member = str(uuid.uuid4())
    with raw(target) as client:
        md = client.request(MetadataRequest(topics=(MetadataRequestTopic(topic_id=None,
                                                                         name=TOPIC),),
                                            allow_auto_topic_creation=False,
                                            include_topic_authorized_operations=False))
        topic_id = md.topics[0].topic_id
        out["config"] = _set_earliest(client)
        deadline = time.monotonic() + 30
        while True:
            client.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(GROUP,)))
            joined = _heartbeat(client, member, 0, (TOPIC,))
            if joined.error_code.name not in ("not_coordinator", "coordinator_load_in_progress",
                                              "coordinator_not_available"):
                break
            assert time.monotonic() < deadline, joined
            time.sleep(0.2)
        out["join"] = _hb_obs(joined)
        out["heartbeat"] = _hb_obs(_heartbeat(client, member, joined.member_epoch, None))
        out["fenced"] = _hb_obs(_heartbeat(client, member, joined.member_epoch + 5, None))
        out["empty_member_id"] = _hb_obs(_heartbeat(client, "", 0, (TOPIC,)))
        out["no_topics"] = _hb_obs(_heartbeat(client, str(uuid.uuid4()), 0, None))
        out["unknown_member"] = _hb_obs(_heartbeat(client, str(uuid.uuid4()), 3, None))
        described = client.request(ShareGroupDescribeRequest(
            group_ids=(GROUP, "diff-share-missing"), include_authorized_operations=False))
        # the groups come back in the order their coordinator shards answer, not the request's
        g, missing = sorted(described.groups, key=lambda d: d.group_id != GROUP)
        out["describe"] = {
            "error": g.error_code.name, "state": g.group_state, "epochs": (g.group_epoch,
                                                                          g.assignment_epoch),
            "assignor": g.assignor_name,
            "members": [(m.member_epoch, m.subscribed_topic_names, m.client_id,
                         [list(t.partitions) for t in m.assignment.topic_partitions])
                        for m in g.members]}
        out["describe_missing"] = {"error": missing.error_code.name,
                                   "message": missing.error_message,
                                   "state": missing.group_state}
        # the first fetch opens the session; the share-partition may still be initializing
        epoch, first = 0, None
        for _ in range(20):
            first = _fetch(client, member, epoch, topic_id)
            epoch += 1
            if any(p.acquired_records for t in first.responses for p in t.partitions):
                break
        out["fetch"] = _fetch_obs(first)
        out["fetch_acks"] = _fetch_obs(_fetch(client, member, epoch, topic_id,
                                              [(0, 1, ACCEPT), (2, 2, RELEASE)]))
        out["refetch"] = _fetch_obs(_fetch(client, member, epoch + 1, topic_id))
        out["ack"] = _acknowledge(client, member, epoch + 2, topic_id, [(2, 2, ACCEPT)])
        out["ack_again"] = _acknowledge(client, member, epoch + 3, topic_id, [(2, 2, ACCEPT)])
        out["wrong_epoch"] = _fetch_obs(_fetch(client, member, epoch + 40, topic_id))
        out["ack_opening"] = _acknowledge(client, member, 0, topic_id, [(0, 0, ACCEPT)])
        out["close"] = _acknowledge(client, member, -1, topic_id, [])
        listed = client.request(ListGroupsRequest(states_filter=(), types_filter=("share",)))
        out["listed"] = [(g.group_id, g.protocol_type, g.group_state, g.group_type)
                         for g in listed.groups if g.group_id == GROUP]
        dg = client.request(DescribeGroupsRequest(groups=(GROUP,),
                                                  include_authorized_operations=False)).groups[0]
        out["describe_groups"] = {"error": dg.error_code.name, "message": dg.error_message}
        busy = client.request(DeleteGroupsRequest(groups_names=(GROUP,))).results[0]
        out["delete_busy"] = busy.error_code.name
        out["leave"] = _hb_obs(_heartbeat(client, member, -1, None))
        offsets = client.request(dso.DescribeShareGroupOffsetsRequest(groups=(
            dso.DescribeShareGroupOffsetsRequestGroup(group_id=GROUP, topics=None),)))
        og = offsets.groups[0]
        out["offsets"] = {"error": og.error_code.name, "topics": [
            (t.topic_name, [(p.partition_index, p.start_offset, p.lag, p.error_code.name)
                            for p in t.partitions]) for t in og.topics]}
        out["delete"] = client.request(DeleteGroupsRequest(groups_names=(GROUP,))).results[
            0].error_code.name
    return out


def test_share_group(differential: Differential) -> None:
    outcome = differential.check("share_group", share_group)
    assert outcome.observations > 40
