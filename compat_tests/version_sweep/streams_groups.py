"""The version sweep's checks of the streams group APIs of KIP-1071 (StreamsGroupHeartbeat,
StreamsGroupDescribe, StreamsGroupTopologyDescriptionUpdate): every served version against a real
broker (its initial rebalance delay is Kafka's 3 s, so the checks look at joining, epochs, the
topology and the errors rather than at tasks)."""

from __future__ import annotations

import datetime
import uuid

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .env import SWEEP, Env, ok
from .groups import GROUP_TIMEOUT, find_group_coordinator


def _topology(env: Env, v: int, app: str) -> object:
    from kio.index import load_request_schema

    module = __import__(load_request_schema(88, v).__module__, fromlist=["Topology"])
    return module.Topology(epoch=0, subtopologies=(module.Subtopology(
        subtopology_id="0", source_topics=(SWEEP,), source_topic_regex=(),
        state_changelog_topics=(module.TopicInfo(name=f"{app}-store-changelog", partitions=0,
                                                 replication_factor=0, topic_configs=()),),
        repartition_sink_topics=(), repartition_source_topics=(), copartition_groups=()),))


def _heartbeat(env: Env, v: int, group: str, member: str, epoch: int, **kw):
    spec = {
        "group_id": group, "member_id": member, "member_epoch": epoch,
        "endpoint_information_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout": GROUP_TIMEOUT if epoch == 0 else datetime.timedelta(milliseconds=-1),
        "topology": _topology(env, v, group) if epoch == 0 else None,
        "active_tasks": () if epoch == 0 else None,
        "standby_tasks": () if epoch == 0 else None,
        "warmup_tasks": () if epoch == 0 else None,
        "process_id": member, "user_endpoint": None, "client_tags": None, "task_offsets": None,
        "task_end_offsets": None, "shutdown_application": False,
    }
    spec.update(kw)
    return env.request(make("StreamsGroupHeartbeat", v, env, **spec))


def check_streams_group_heartbeat(env: Env, v: int) -> None:
    group = f"sweep-sgh-{v}"
    find_group_coordinator(env, group)
    member = str(uuid.uuid4())
    resp = _heartbeat(env, v, group, member, 0)
    assert ok(resp.error_code) and resp.member_epoch > 0 and resp.member_id == member, resp
    assert resp.heartbeat_interval.total_seconds() > 0
    codes = {s.status_code for s in resp.status}
    assert 3 in codes or 5 in codes, resp.status  # internal topics missing / assignment delayed
    if v >= 1:
        assert resp.acceptable_recovery_lag == 10_000 and not resp.topology_description_required
    fenced = _heartbeat(env, v, group, member, resp.member_epoch + 7)
    assert fenced.error_code == E.fenced_member_epoch
    unknown = _heartbeat(env, v, group, str(uuid.uuid4()), 3)
    assert unknown.error_code == E.unknown_member_id
    assert _heartbeat(env, v, group, " ", 0).error_code == E.invalid_request
    left = _heartbeat(env, v, group, member, -1)
    assert ok(left.error_code) and left.member_epoch == -1


def check_streams_group_describe(env: Env, v: int) -> None:
    group = f"sweep-sgd-{v}"
    find_group_coordinator(env, group)
    member = str(uuid.uuid4())
    joined = _heartbeat(env, 1, group, member, 0)
    assert ok(joined.error_code), joined
    spec = {"group_ids": (group, "sweep-no-such-group"), "include_authorized_operations": False}
    if v >= 1:
        spec["include_topology_description"] = False
    resp = env.request(make("StreamsGroupDescribe", v, env, **spec))
    g, missing = resp.groups
    assert ok(g.error_code) and g.group_state in ("NotReady", "Assigning", "Reconciling",
                                                 "Stable"), g
    (m,) = g.members
    assert (m.member_id, m.process_id, m.topology_epoch) == (member, member, 0)
    assert g.topology.epoch == 0 and g.topology.subtopologies[0].source_topics == (SWEEP,)
    if v >= 1:
        assert g.assignor_name == "sticky" and g.topology_description_status == 0
    assert missing.error_code == E.group_id_not_found


def check_streams_group_topology_description_update(env: Env, v: int) -> None:
    from kio.index import load_request_schema

    module = __import__(load_request_schema(93, v).__module__, fromlist=["TopologyDescription"])
    resp = env.request(make(
        "StreamsGroupTopologyDescriptionUpdate", v, env, group_id="sweep-sgtd", member_id="m",
        topology_epoch=0,
        topology_description=module.TopologyDescription(subtopologies=(), global_stores=())))
    assert resp.error_code == E.unsupported_version, resp
