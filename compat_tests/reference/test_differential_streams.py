"""Differential session of streams groups (KIP-1071) on the wire: StreamsGroupHeartbeat's request
rules and errors, a word count topology whose internal topics the broker creates, the statuses
and epochs a member sees until it has its tasks, a second member joining (revocation before
assignment), StreamsGroupDescribe of the group, ListGroups by type, OffsetCommit with the member
epoch, a member leaving, DeleteGroups, and StreamsGroupTopologyDescriptionUpdate. Runs against
Apache Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, raw
from compat_tests.streams_wire import heartbeat, join, tasks, topology

GROUP = "diff-streams"
INPUT = "diff-streams-input"


def _statuses(resp: Any) -> list[tuple[int, str]]:
    return [(s.status_code, s.status_detail) for s in resp.status or ()]


def _until_tasks(c: Any, member: str, epoch: int, deadline: float) -> tuple[Any, list]:
    """Heartbeat (owning nothing) until the answer carries tasks; the statuses seen on the way."""
    seen: list = []
    while True:
        r = heartbeat(c, GROUP, member, epoch, active={}, standby={}, warmup={})
        for s in _statuses(r):
            if s not in seen:
                seen.append(s)
        epoch = r.member_epoch
        if r.error_code or tasks(r.active_tasks) or time.monotonic() > deadline:
            return r, seen
        time.sleep(0.2)


def _other_group_apis(c: Any) -> dict[str, Any]:
    """What the classic and consumer group APIs answer about a streams group with members."""
    from kio.schema.consumer_group_describe.v1.request import ConsumerGroupDescribeRequest
    from kio.schema.consumer_group_heartbeat.v1 import request as cgh1
    from kio.schema.describe_groups.v5.request import DescribeGroupsRequest
    from kio.schema.heartbeat.v4.request import HeartbeatRequest
    from kio.schema.join_group.v9 import request as join9

    described = c.request(DescribeGroupsRequest(groups=(GROUP,),
                                                include_authorized_operations=False)).groups[0]
    joined = c.request(join9.JoinGroupRequest(
        group_id=GROUP, session_timeout=datetime.timedelta(seconds=10),
        rebalance_timeout=datetime.timedelta(seconds=10), member_id="", group_instance_id=None,
        protocol_type="consumer", protocols=(join9.JoinGroupRequestProtocol(
            name="range", metadata=b""),), reason=None))
    beat = c.request(HeartbeatRequest(group_id=GROUP, generation_id=1, member_id="x",
                                      group_instance_id=None))
    cgh = c.request(cgh1.ConsumerGroupHeartbeatRequest(
        group_id=GROUP, member_id=str(uuid.uuid4()), member_epoch=0, instance_id=None,
        rack_id=None, rebalance_timeout=datetime.timedelta(seconds=10),
        subscribed_topic_names=(INPUT,), subscribed_topic_regex=None, server_assignor=None,
        topic_partitions=()))
    cgd = c.request(ConsumerGroupDescribeRequest(group_ids=(GROUP,),
                                                 include_authorized_operations=False)).groups[0]
    return {
        "describe_groups": (described.error_code.name, described.group_state,
                            described.protocol_type, len(described.members)),
        "join_group": joined.error_code.name,
        "heartbeat": beat.error_code.name,
        "consumer_heartbeat": (cgh.error_code.name, cgh.error_message),
        "consumer_describe": (cgd.error_code.name, cgd.error_message),
    }


def streams_group_wire(target: Target) -> dict[str, Any]:
    from kio.schema.list_groups.v5.request import ListGroupsRequest
    from kio.schema.offset_commit.v9 import request as commit9

    from kafkapy.protocol.kio_schemas import streams_group_describe_v1 as d1
    from kafkapy.protocol.kio_schemas import streams_group_topology_description_update_v0 as tdu

    create_topic(target, INPUT, partitions=2)
    out: dict[str, Any] = {}
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    with raw(target) as c:
        first = join(c, GROUP, a, GROUP, input_topic=INPUT)
        out["join"] = {"error": first.error_code.name, "epoch": first.member_epoch,
                       "interval_ms": first.heartbeat_interval // datetime.timedelta(
                           milliseconds=1),
                       "statuses": _statuses(first), "active": tasks(first.active_tasks),
                       "lag": first.acceptable_recovery_lag,
                       "offset_interval": first.task_offset_interval.total_seconds(),
                       "description_required": first.topology_description_required}
        ra, seen = _until_tasks(c, a, first.member_epoch, time.monotonic() + 20)
        # the statuses seen on the way are timing (internal topics exist a heartbeat or more
        # after the answer that asked for them): only the delay's
        out["first_tasks"] = {"error": ra.error_code.name, "epoch": ra.member_epoch,
                              "delayed": seen[0] if seen else None,
                              "active": tasks(ra.active_tasks)}
        # errors of a member of the group
        out["errors"] = {
            "fenced": [heartbeat(c, GROUP, a, ra.member_epoch + 5).error_code.name],
            "unknown": [heartbeat(c, GROUP, "nobody", 3).error_code.name],
            "other_topology": [
                (r.error_code.name, r.error_message) for r in [heartbeat(
                    c, GROUP, str(uuid.uuid4()), 0, topo=topology("other", input_topic=INPUT),
                    active={}, standby={}, warmup={})]],
            "bad_task": [(r.error_code.name, r.error_message) for r in [heartbeat(
                c, GROUP, a, ra.member_epoch, active={"0": {7}}, standby={}, warmup={})]],
        }
        rb = heartbeat(c, GROUP, b, 0, topo=topology(GROUP, input_topic=INPUT), active={},
                       standby={}, warmup={})
        out["second_join"] = {"error": rb.error_code.name, "statuses": _statuses(rb)}
        time.sleep(1.2)  # group.streams.assignment.interval.ms
        ra2 = heartbeat(c, GROUP, a, ra.member_epoch, active=tasks(ra.active_tasks), standby={},
                        warmup={})
        out["revoking"] = {"error": ra2.error_code.name,
                           "epoch_kept": ra2.member_epoch == ra.member_epoch,
                           "tasks_left": sum(len(p) for p in tasks(ra2.active_tasks).values())}
        d = c.request(d1.StreamsGroupDescribeRequest(
            group_ids=(GROUP, "diff-streams-none"), include_authorized_operations=False,
            include_topology_description=True))
        out["describe"] = {g.group_id: {
            "error": g.error_code.name, "message": g.error_message, "state": g.group_state,
            "epochs": (g.group_epoch, g.assignment_epoch), "assignor": g.assignor_name,
            "description_status": g.topology_description_status,
            "topology": [
                (s.subtopology_id, s.source_topics, s.repartition_sink_topics,
                 [(t.name, t.partitions, t.replication_factor) for t in s.state_changelog_topics],
                 [(t.name, t.partitions) for t in s.repartition_source_topics])
                for s in (g.topology.subtopologies or ())] if g.topology else None,
            "members": sorted((m.process_id == m.member_id, m.topology_epoch, m.is_classic,
                               m.client_id) for m in g.members),
        } for g in d.groups}
        listed = c.request(ListGroupsRequest(states_filter=(), types_filter=("streams",)))
        out["listed"] = sorted((x.group_id, x.protocol_type, x.group_type)
                               for x in listed.groups if x.group_id == GROUP)

        def commit(member: str, epoch: int) -> str:
            topic = commit9.OffsetCommitRequestTopic(name=INPUT, partitions=(
                commit9.OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                     committed_leader_epoch=-1,
                                                     committed_metadata=""),))
            resp = c.request(commit9.OffsetCommitRequest(
                group_id=GROUP, generation_id_or_member_epoch=epoch, member_id=member,
                group_instance_id=None, topics=(topic,)))
            return resp.topics[0].partitions[0].error_code.name

        out["commit"] = {"newer_epoch": commit(a, ra2.member_epoch + 3),
                         "unknown_member": commit("nobody", 1),
                         "admin_while_members": commit("", -1)}
        out["other_apis"] = _other_group_apis(c)
        out["leave"] = [(r.error_code.name, r.member_epoch) for r in
                        (heartbeat(c, GROUP, a, -1), heartbeat(c, GROUP, b, -1))]
        from kio.schema.delete_groups.v2.request import DeleteGroupsRequest

        deleted = c.request(DeleteGroupsRequest(groups_names=(GROUP,)))
        out["deleted"] = [r.error_code.name for r in deleted.results]
        update = c.request(tdu.StreamsGroupTopologyDescriptionUpdateRequest(
            group_id=GROUP, member_id=a, topology_epoch=0,
            topology_description=tdu.TopologyDescription(subtopologies=(), global_stores=())))
        out["description_update"] = (update.error_code.name, update.error_message)
    return out


def test_streams_group_wire(differential: Differential) -> None:
    outcome = differential.check("streams_group_wire", streams_group_wire)
    assert outcome.observations > 30
