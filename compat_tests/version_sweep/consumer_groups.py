"""The version sweep's checks of the KIP-848 consumer group APIs (ConsumerGroupHeartbeat,
ConsumerGroupDescribe): every served version against a real broker."""

from __future__ import annotations

import datetime
import uuid

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .env import SEED, SWEEP, Env, ok
from .groups import GROUP_TIMEOUT, find_group_coordinator


def _consumer_heartbeat(env: Env, v: int, group: str, member_id: str, epoch: int, **kw):
    spec = {
        "group_id": group,
        "member_id": member_id,
        "member_epoch": epoch,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout": GROUP_TIMEOUT if epoch == 0 else datetime.timedelta(milliseconds=-1),
        "subscribed_topic_names": (SWEEP,) if epoch == 0 else None,
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [] if epoch == 0 else None,
    }
    spec.update(kw)
    return env.request(make("ConsumerGroupHeartbeat", v, env, **spec))


def check_consumer_group_heartbeat(env: Env, v: int) -> None:
    group = f"sweep-cgh-{v}"
    find_group_coordinator(env, group)
    member = "" if v == 0 else str(uuid.uuid4())
    resp = _consumer_heartbeat(env, v, group, member, 0)
    assert ok(resp.error_code) and resp.member_epoch == 1 and resp.member_id, resp
    assert resp.heartbeat_interval.total_seconds() > 0
    (tp,) = resp.assignment.topic_partitions
    assert tp.topic_id == env.topic_id and sorted(tp.partitions) == sorted(SEED)
    again = _consumer_heartbeat(env, v, group, resp.member_id, 1)
    assert ok(again.error_code) and again.member_epoch == 1 and again.assignment is None
    fenced = _consumer_heartbeat(env, v, group, resp.member_id, 7)
    assert fenced.error_code == E.fenced_member_epoch
    bad = _consumer_heartbeat(env, v, group, str(uuid.uuid4()), 0, server_assignor="nope")
    assert bad.error_code == E.unsupported_assignor
    if v >= 1:
        assert _consumer_heartbeat(env, v, group, "", 0).error_code == E.invalid_request
    left = _consumer_heartbeat(env, v, group, resp.member_id, -1)
    assert ok(left.error_code) and left.member_epoch == -1


def check_consumer_group_describe(env: Env, v: int) -> None:
    group = f"sweep-cgd-{v}"
    find_group_coordinator(env, group)
    joined = _consumer_heartbeat(env, 1, group, str(uuid.uuid4()), 0)
    assert ok(joined.error_code), joined
    resp = env.request(
        make(
            "ConsumerGroupDescribe",
            v,
            env,
            group_ids=(group, "sweep-no-such-group"),
            include_authorized_operations=False,
        )
    )
    g, missing = resp.groups
    assert ok(g.error_code) and g.group_state == "Stable" and g.assignor_name == "uniform", g
    assert g.group_epoch == g.assignment_epoch == 1
    (m,) = g.members
    assert m.member_id == joined.member_id and m.member_epoch == 1
    assert m.subscribed_topic_names == (SWEEP,)
    (tp,) = m.assignment.topic_partitions
    assert (tp.topic_id, tp.topic_name, sorted(tp.partitions)) == (
        env.topic_id,
        SWEEP,
        sorted(SEED),
    )
    assert m.target_assignment == m.assignment
    if v >= 1:
        assert m.member_type == 1
    assert missing.error_code == E.group_id_not_found
