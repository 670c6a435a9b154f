"""Streams groups (KIP-1071) on the wire, against a kafkapy broker process: the
StreamsGroupHeartbeat request rules and errors Kafka 4.4 answers, a topology whose internal
topics the broker creates (MISSING_INTERNAL_TOPICS, then ready), tasks split between two members
with revocation before assignment, a member leaving, StreamsGroupDescribe, ListGroups with the
"streams" type, OffsetCommit with member epochs, DeleteGroups, and
StreamsGroupTopologyDescriptionUpdate's answer without a description plugin."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from kio.schema.create_topics.v7 import request as create7
from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
from kio.schema.list_groups.v5.request import ListGroupsRequest
from kio.schema.offset_commit.v9 import request as commit9

from compat_tests.rawclient import RawClient
from compat_tests.streams_wire import INPUT, heartbeat, join, tasks, topology
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.kio_schemas import _streams_group_heartbeat_v1_request as hb1
from kafkapy.protocol.kio_schemas import streams_group_describe_v1 as d1
from kafkapy.protocol.kio_schemas import streams_group_topology_description_update_v0 as tdu
from kafkapy.testing import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    proc = BrokerProcess(
        tmp_path_factory.mktemp("streams-groups"),
        overrides={
            "offsets.topic.num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "group.streams.initial.rebalance.delay.ms": "0",
            "group.streams.assignment.interval.ms": "0",
            # lower bounds that let one group's config shorten its sessions
            "group.streams.min.session.timeout.ms": "1000",
            "group.streams.min.heartbeat.interval.ms": "500",
            "num.partitions": "1",
        },
    )
    proc.start()
    with RawClient(proc.bootstrap) as c:
        topic = create7.CreatableTopic(name=INPUT, num_partitions=4, replication_factor=1,
                                       assignments=(), configs=())
        c.request(create7.CreateTopicsRequest(topics=(topic,),
                                              timeout=datetime.timedelta(seconds=10),
                                              validate_only=False))
    yield proc
    assert proc.stop() == 0, proc.log_text()[-3000:]


def test_request_rules(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        join(c, "rules-warmup", str(uuid.uuid4()), "rules")  # the coordinator is loaded
        m = str(uuid.uuid4())
        cases = [
            (dict(member="  ", epoch=0, topo=topology("r"), active={}, standby={}, warmup={}),
             E.invalid_request, "MemberId can't be empty."),
            (dict(member=m, epoch=0, topo=topology("r"), active={}, standby={}, warmup={},
                  rebalance_timeout=datetime.timedelta(milliseconds=-1)),
             E.invalid_request, "RebalanceTimeoutMs must be provided in first request."),
            (dict(member=m, epoch=0, topo=topology("r"), active={"0": {0}}, standby={},
                  warmup={}),
             E.invalid_request, "ActiveTasks must be empty when (re-)joining."),
            (dict(member=m, epoch=0, topo=None, active={}, standby={}, warmup={}),
             E.invalid_request, "Topology must be non-null when (re-)joining."),
            (dict(member=m, epoch=-3), E.invalid_request,
             "MemberEpoch is -3, but must be greater than or equal to -2."),
            (dict(member=m, epoch=3, active={}, standby=None, warmup={}),
             E.invalid_request, "If one task-type is non-null, all must be non-null."),
            (dict(member=m, epoch=3, topo=topology("r")), E.invalid_request,
             "Topology can only be provided when (re-)joining."),
            (dict(member=m, epoch=5), E.group_id_not_found, "Streams group rules-none not found."),
        ]
        for kw, error, message in cases:
            group = "rules-none" if kw.get("epoch") == 5 else "rules"
            r = heartbeat(c, group, kw.pop("member"), kw.pop("epoch"), **kw)
            assert (r.error_code, r.error_message) == (error, message), kw
        bad = topology("r")
        changelog = bad.subtopologies[1].state_changelog_topics[0]
        bad_sub = hb1.Subtopology(**{**{f: getattr(bad.subtopologies[1], f) for f in (
            "subtopology_id", "source_topics", "source_topic_regex", "repartition_sink_topics",
            "repartition_source_topics", "copartition_groups")},
            "state_changelog_topics": (hb1.TopicInfo(name=changelog.name, partitions=3,
                                                     replication_factor=0, topic_configs=()),)})
        r = heartbeat(c, "rules", m, 0, topo=hb1.Topology(epoch=0, subtopologies=(
            bad.subtopologies[0], bad_sub)), active={}, standby={}, warmup={})
        assert r.error_code == E.streams_invalid_topology
        assert r.error_message == (f"Changelog topic {changelog.name} must have an undefined "
                                   "partition count, but it is set to 3.")


def test_internal_topics_tasks_revocation_and_describe(broker) -> None:
    group, app = "wc-app", "wc-app"
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    with RawClient(broker.bootstrap) as c:
        r = join(c, group, a, app)
        assert r.error_code == E.none, r
        assert r.member_epoch == 2 and r.heartbeat_interval.total_seconds() == 5
        assert [(s.status_code, s.status_detail) for s in r.status] == [
            (3, f"Internal topics are missing: {app}-counts-changelog, {app}-repartition")]
        assert tasks(r.active_tasks) == {}
        deadline = time.monotonic() + 10
        while True:  # the broker creates them; a later heartbeat finds the topology ready
            r = heartbeat(c, group, a, r.member_epoch, active={}, standby={}, warmup={})
            assert r.error_code == E.none, r
            if not r.status:
                break
            assert time.monotonic() < deadline, r.status
            time.sleep(0.1)
        assert tasks(r.active_tasks) == {"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}}
        epoch_a = r.member_epoch

        # a second member (another process): a must revoke half of its tasks first
        rb = heartbeat(c, group, b, 0, topo=topology(app), active={}, standby={}, warmup={})
        assert rb.error_code == E.none and tasks(rb.active_tasks) == {}
        epoch_b = rb.member_epoch
        ra = heartbeat(c, group, a, epoch_a, active={"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}},
                       standby={}, warmup={})
        kept = tasks(ra.active_tasks)
        assert ra.member_epoch == epoch_a and sum(map(len, kept.values())) == 4
        # b gets nothing a still owns
        rb = heartbeat(c, group, b, epoch_b, active={}, standby={}, warmup={})
        assert tasks(rb.active_tasks) in ({}, None)
        epoch_b = rb.member_epoch
        ra = heartbeat(c, group, a, epoch_a, active=kept, standby={}, warmup={})
        assert ra.member_epoch > epoch_a
        rb = heartbeat(c, group, b, epoch_b, active={}, standby={}, warmup={})
        given = tasks(rb.active_tasks)
        both = {s: kept.get(s, set()) | given.get(s, set()) for s in ("0", "1")}
        assert both == {"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}}
        assert all(not (kept.get(s, set()) & given.get(s, set())) for s in ("0", "1"))

        # StreamsGroupDescribe v1
        d = c.request(d1.StreamsGroupDescribeRequest(group_ids=(group, "nope"),
                                                     include_authorized_operations=False,
                                                     include_topology_description=True))
        g, missing = d.groups
        assert (g.error_code, g.group_state, g.assignor_name) == (E.none, "Stable", "sticky")
        assert g.topology_description_status == 1 and g.topology_description is None
        assert {m.member_id for m in g.members} == {a, b}
        assert [(t.name, t.partitions) for t in g.topology.subtopologies[1].state_changelog_topics
                ] == [(f"{app}-counts-changelog", 4)]
        assert (missing.error_code, missing.error_message) == (
            E.group_id_not_found, "Group nope not found.")

        # ListGroups v5 by type
        listed = c.request(ListGroupsRequest(states_filter=(), types_filter=("streams",)))
        assert (group, "Stable", "streams") in {
            (x.group_id, x.group_state, x.group_type) for x in listed.groups}

        # OffsetCommit v9: the member's epoch; an admin commit (-1) while members exist: refused
        def commit(member, epoch):
            topic = commit9.OffsetCommitRequestTopic(name=INPUT, partitions=(
                commit9.OffsetCommitRequestPartition(partition_index=0, committed_offset=5,
                                                     committed_leader_epoch=-1,
                                                     committed_metadata=""),))
            resp = c.request(commit9.OffsetCommitRequest(
                group_id=group, generation_id_or_member_epoch=epoch, member_id=member,
                group_instance_id=None, topics=(topic,)))
            return resp.topics[0].partitions[0].error_code

        assert commit(a, ra.member_epoch) == E.none
        assert commit(a, ra.member_epoch + 5) == E.stale_member_epoch
        assert commit("stranger", ra.member_epoch) == E.unknown_member_id

        # leaving: b takes everything; the group cannot be deleted while members remain
        left = heartbeat(c, group, a, -1)
        assert (left.error_code, left.member_epoch) == (E.none, -1)
        rb = heartbeat(c, group, b, rb.member_epoch, active=given, standby={}, warmup={})
        assert tasks(rb.active_tasks) == {"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}}
        deleted = c.request(DeleteGroupsRequest(groups_names=(group,)))
        assert deleted.results[0].error_code == E.non_empty_group
        assert heartbeat(c, group, b, -1).error_code == E.none
        deleted = c.request(DeleteGroupsRequest(groups_names=(group,)))
        assert deleted.results[0].error_code == E.none


def test_topology_description_update_without_plugin(broker) -> None:
    with RawClient(broker.bootstrap) as c:
        r = c.request(tdu.StreamsGroupTopologyDescriptionUpdateRequest(
            group_id="g", member_id="m", topology_epoch=0,
            topology_description=tdu.TopologyDescription(subtopologies=(), global_stores=())))
        assert (r.error_code, r.error_message) == (
            E.unsupported_version,
            "The broker has no streams group topology description plugin configured.")


def test_standby_tasks_from_the_group_config(broker) -> None:
    """streams.num.standby.replicas=1 as the group's config: each task's standby is on the
    other process, never where its active task is."""
    from kio.schema.incremental_alter_configs.v1 import request as iac

    group = "standby-app"
    with RawClient(broker.bootstrap) as c:
        altered = c.request(iac.IncrementalAlterConfigsRequest(resources=(
            iac.AlterConfigsResource(resource_type=32, resource_name=group, configs=(
                iac.AlterableConfig(name="streams.num.standby.replicas", config_operation=0,
                                    value="1"),)),), validate_only=False))
        assert altered.responses[0].error_code == E.none, altered
        a, b = str(uuid.uuid4()), str(uuid.uuid4())
        ra = join(c, group, a, group)
        rb = heartbeat(c, group, b, 0, topo=topology(group), active={}, standby={}, warmup={})
        assert rb.error_code == E.none, rb
        owned = {m: (tasks(r.active_tasks), tasks(r.standby_tasks)) for m, r in ((a, ra), (b, rb))}
        epochs = {a: ra.member_epoch, b: rb.member_epoch}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for m in (a, b):
                r = heartbeat(c, group, m, epochs[m], active=owned[m][0], standby=owned[m][1],
                              warmup={})
                assert r.error_code == E.none, r
                epochs[m] = r.member_epoch
                if r.active_tasks is not None:
                    owned[m] = (tasks(r.active_tasks), tasks(r.standby_tasks))
            actives = [owned[m][0] for m in (a, b)]
            if all(actives) and all(owned[m][1] for m in (a, b)):
                break
            time.sleep(0.3)
        for m, other in ((a, b), (b, a)):
            active, standby = owned[m]
            assert standby == owned[other][0], (m, owned)
            assert not any(active.get(s, set()) & ps for s, ps in standby.items())
        assert heartbeat(c, group, a, -1).error_code == E.none
        assert heartbeat(c, group, b, -1).error_code == E.none


def test_a_member_that_stops_heartbeating_is_fenced(broker) -> None:
    """streams.session.timeout.ms (a group config within the broker's bounds): a member silent
    for longer is removed; its next heartbeat is UNKNOWN_MEMBER_ID and the group is Empty."""
    from kio.schema.incremental_alter_configs.v1 import request as iac

    from kafkapy.protocol.kio_schemas import streams_group_describe_v1 as describe1

    group = "session-app"
    with RawClient(broker.bootstrap) as c:
        altered = c.request(iac.IncrementalAlterConfigsRequest(resources=(
            iac.AlterConfigsResource(resource_type=32, resource_name=group, configs=(
                iac.AlterableConfig(name="streams.session.timeout.ms", config_operation=0,
                                    value="1500"),
                iac.AlterableConfig(name="streams.heartbeat.interval.ms", config_operation=0,
                                    value="500"))),), validate_only=False))
        assert altered.responses[0].error_code == E.none, altered
        m = str(uuid.uuid4())
        r = join(c, group, m, group)
        assert r.error_code == E.none and r.heartbeat_interval.total_seconds() == 0.5, r
        time.sleep(2.5)
        late = heartbeat(c, group, m, r.member_epoch, active={}, standby={}, warmup={})
        assert (late.error_code, late.error_message) == (
            E.unknown_member_id, f"Member {m} is not a member of group {group}.")
        d = c.request(describe1.StreamsGroupDescribeRequest(
            group_ids=(group,), include_authorized_operations=False))
        assert (d.groups[0].group_state, d.groups[0].members) == ("Empty", ())
