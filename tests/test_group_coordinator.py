"""The sans-io group coordinator with a fake clock and an in-memory log."""

from __future__ import annotations

import pytest

from kafkapy.coordinator.group import GroupCoordinator
from kafkapy.coordinator.group.classic import TRANSITIONS, GroupState, IllegalTransition
from kafkapy.coordinator.group.coordinator import CommitOffset
from kafkapy.coordinator.group.pending import Pending
from kafkapy.coordinator.group.timers import Timers
from kafkapy.protocol.errors import ErrorCode as E

from .group_helpers import REBALANCE, SESSION, MemLog, join_new, make, req, stable_group

# -- building blocks -------------------------------------------------------------------------


def test_transition_table_rejects_illegal_moves():
    from kafkapy.coordinator.group.classic import ClassicGroup

    g = ClassicGroup("g", 0)
    with pytest.raises(IllegalTransition):
        g.transition(GroupState.STABLE, 1)
    g.transition(GroupState.PREPARING_REBALANCE, 1)
    g.transition(GroupState.COMPLETING_REBALANCE, 2)
    g.transition(GroupState.STABLE, 3)
    assert g.state_timestamp == 3
    assert GroupState.DEAD in TRANSITIONS[GroupState.STABLE]
    assert TRANSITIONS[GroupState.DEAD] == {GroupState.DEAD}


def test_timers_fire_in_order_and_reschedule_replaces():
    t = Timers()
    fired = []
    t.schedule("a", 10, lambda now: fired.append(("a", now)))
    t.schedule("b", 5, lambda now: fired.append(("b", now)))
    t.schedule("a", 20, lambda now: fired.append(("a2", now)))
    assert t.next_deadline() == 5
    t.expire(15)
    assert fired == [("b", 15)]
    t.cancel("a")
    assert t.next_deadline() is None
    for i in range(10_000):
        t.schedule("x", i, lambda now: None)
    assert len(t._heap) < 1000  # stale entries are compacted


def test_pending_completes_once():
    p: Pending[int] = Pending()
    seen = []
    p.add_done_callback(lambda q: seen.append(q.result))
    assert p.complete(1) and not p.complete(2)
    assert p.result == 1 and seen == [1]


# -- join / sync -----------------------------------------------------------------------------


def test_single_member_join_sync_heartbeat():
    c, mlog, clock = make()
    (mid,), gen = stable_group(c, clock)
    assert gen == 1
    assert c.groups["g"].state == GroupState.STABLE
    assert c.heartbeat("g", gen, mid, None, clock.now) == E.none
    assert c.heartbeat("g", gen + 1, mid, None, clock.now) == E.illegal_generation
    assert c.heartbeat("g", gen, "nobody", None, clock.now) == E.unknown_member_id
    assert c.heartbeat("other", gen, mid, None, clock.now) == E.unknown_member_id
    # the assignment was stored as a group metadata record
    assert any(k[:2] == b"\x00\x02" for recs in mlog.records.values() for k, _ in recs)


def test_member_id_required_then_join_leader_gets_members():
    c, _, clock = make()
    a1 = join_new(c, clock)
    a2 = join_new(c, clock)
    assert not a1.done  # waiting for the second member to rejoin? no: both joined
    clock.advance(0)
    r1, r2 = a1.result, a2.result
    assert r1.error == r2.error == E.none
    assert r1.generation_id == r2.generation_id == 1
    assert r1.leader == r2.leader == r1.member_id
    assert len(r1.members) == 2 and r2.members == []
    assert r1.protocol_name == "range"


def test_v3_join_without_member_id_requirement():
    c, _, clock = make()
    a = c.join_group(req(require_known_member_id=False), clock.now)
    clock.advance(0)
    assert a.result.error == E.none and a.result.member_id.startswith("client-")


def test_second_member_triggers_rebalance_and_fences_generation():
    c, _, clock = make()
    (m1,), gen = stable_group(c, clock)
    new = join_new(c, clock)
    assert not new.done
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.rebalance_in_progress
    assert c.sync_group("g", gen, m1, None, {}, clock.now).result.error == E.rebalance_in_progress
    old = c.join_group(req(m1), clock.now)
    assert old.done and new.done
    assert old.result.generation_id == gen + 1
    assert old.result.leader == m1 and len(old.result.members) == 2
    # a commit with the old generation is fenced
    errs = c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(5)}, clock.now)
    assert errs[("t", 0)] == E.illegal_generation
    # during CompletingRebalance commits wait for the assignment
    errs = c.commit_offsets("g", gen + 1, m1, None, {("t", 0): CommitOffset(5)}, clock.now)
    assert errs[("t", 0)] == E.rebalance_in_progress


def test_follower_sync_waits_for_leader():
    c, _, clock = make()
    a1, a2 = join_new(c, clock), join_new(c, clock)
    clock.advance(0)
    leader, follower = a1.result, a2.result
    f = c.sync_group("g", 1, follower.member_id, None, {}, clock.now)
    assert not f.done
    ls = c.sync_group(
        "g",
        1,
        leader.member_id,
        None,
        {leader.member_id: b"L", follower.member_id: b"F", "stranger": b"X"},
        clock.now,
    )
    assert ls.result.assignment == b"L" and f.result.assignment == b"F"
    assert c.groups["g"].state == GroupState.STABLE
    # Stable: sync answers at once
    again = c.sync_group("g", 1, follower.member_id, None, {}, clock.now)
    assert again.result.assignment == b"F"


def test_protocol_selection_and_inconsistent_protocol():
    c, _, clock = make()
    a1 = join_new(c, clock, protocols=[("roundrobin", b"1"), ("range", b"1")])
    a2 = join_new(c, clock, protocols=[("range", b"2"), ("roundrobin", b"2")])
    a3 = join_new(c, clock, protocols=[("range", b"3")])
    clock.advance(0)
    assert {a.result.protocol_name for a in (a1, a2, a3)} == {"range"}
    bad = c.join_group(req(protocols=[("sticky", b"")]), clock.now)
    assert bad.result.error == E.inconsistent_group_protocol
    bad = c.join_group(req(protocol_type="connect"), clock.now)
    assert bad.result.error == E.inconsistent_group_protocol


def test_invalid_session_timeout_and_group_id():
    c, _, clock = make()
    assert c.join_group(req(session=10), clock.now).result.error == E.invalid_session_timeout
    assert c.join_group(req(group=""), clock.now).result.error == E.invalid_group_id
    long_id = "x" * 40_000
    assert c.join_group(req(group=long_id), clock.now).result.error == E.invalid_group_id
    assert (
        c.commit_offsets(long_id, -1, "", None, {("t", 0): CommitOffset(1)}, 0)[("t", 0)]
        == E.invalid_group_id
    )
    assert "" not in c.groups and long_id not in c.groups


def test_unknown_member_join_and_not_coordinator_and_loading():
    c, _, clock = make()
    assert c.join_group(req("ghost"), clock.now).result.error == E.unknown_member_id
    c.owned.discard(c.partition_for("g"))
    assert c.join_group(req(), clock.now).result.error == E.not_coordinator
    c.loading.add(c.partition_for("g"))
    assert c.join_group(req(), clock.now).result.error == E.coordinator_load_in_progress
    assert c.heartbeat("g", 1, "m", None, clock.now) == E.none
    assert c.sync_group("g", 1, "m", None, {}, clock.now).result.error == E.rebalance_in_progress
    err, _ = c.fetch_offsets("g", None)
    assert err == E.coordinator_load_in_progress


def test_session_timeout_removes_member_and_rebalances():
    c, _, clock = make()
    (m1, m2), gen = stable_group(c, clock, 2)
    clock.advance(SESSION // 2)
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.none
    clock.advance(SESSION // 2 + 1)  # m2 silent for a whole session timeout
    g = c.groups["g"]
    assert m2 not in g.members
    assert g.state == GroupState.PREPARING_REBALANCE
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.rebalance_in_progress
    r = c.join_group(req(m1), clock.now)
    assert r.result.generation_id == gen + 1 and len(r.result.members) == 1


def test_rebalance_timeout_drops_members_that_do_not_rejoin():
    c, _, clock = make()
    (m1, m2), gen = stable_group(c, clock, 2)
    r1 = c.join_group(req(m1), clock.now)  # m1 rejoins (leader): rebalance
    assert not r1.done
    for _ in range(REBALANCE // 3000 + 1):  # m1 keeps heartbeating, m2 does not rejoin
        clock.advance(3000)
        c.heartbeat("g", gen, m1, None, clock.now)
    assert r1.done and r1.result.error == E.none
    assert [m[0] for m in r1.result.members] == [m1]


def test_pending_sync_expiry_removes_members_that_never_sync():
    c, _, clock = make()
    a1, a2 = join_new(c, clock), join_new(c, clock)
    clock.advance(0)
    ls = c.sync_group("g", 1, a1.result.member_id, None, {}, clock.now)
    assert ls.done
    # a2 never syncs; a1 heartbeats
    for _ in range(REBALANCE // 3000 + 1):
        clock.advance(3000)
        c.heartbeat("g", 1, a1.result.member_id, None, clock.now)
    assert a2.result.member_id not in c.groups["g"].members


def test_leave_group_batched_and_single():
    c, _, clock = make()
    (m1, m2, m3), gen = stable_group(c, clock, 3)
    err, errs = c.leave_group("g", [(m2, None), ("ghost", None)], clock.now)
    assert err == E.none and errs == [E.none, E.unknown_member_id]
    assert c.groups["g"].state == GroupState.PREPARING_REBALANCE
    err, errs = c.leave_group("nogroup", [(m1, None)], clock.now)
    assert errs == [E.unknown_member_id]
    c.leave_group("g", [(m1, None), (m3, None)], clock.now)
    assert c.groups["g"].state == GroupState.EMPTY


def test_initial_rebalance_delay_extends_for_new_members():
    c, _, clock = make(initial_rebalance_delay_ms=3000)
    a1 = join_new(c, clock)
    clock.advance(2000)
    a2 = join_new(c, clock)
    clock.advance(1500)  # first delay over, but a member arrived: wait another delay
    assert not a1.done
    clock.advance(3000)
    assert a1.done and a2.done and a1.result.generation_id == 1
    assert len(a1.result.members) == 2


def test_group_max_size():
    c, _, clock = make(max_size=2)
    stable_group(c, clock, 2)
    third = c.join_group(req(), clock.now)
    assert third.result.error == E.group_max_size_reached and third.result.member_id == ""


def test_static_member_rejoin_keeps_assignment_without_rebalance():
    c, mlog, clock = make()
    a1 = c.join_group(req(instance="i1"), clock.now)
    a2 = c.join_group(req(instance="i2"), clock.now)
    clock.advance(0)
    m1, m2 = a1.result.member_id, a2.result.member_id
    assert m1.startswith("i1-")
    c.sync_group("g", 1, m1, "i1", {m1: b"A1", m2: b"A2"}, clock.now)
    c.sync_group("g", 1, m2, "i2", {}, clock.now)
    # i2 restarts: joins with no member id
    again = c.join_group(req(instance="i2"), clock.now)
    assert again.done and again.result.error == E.none
    new_id = again.result.member_id
    assert new_id != m2 and again.result.generation_id == 1
    assert again.result.leader == m1 and again.result.members == []
    assert c.groups["g"].state == GroupState.STABLE
    s = c.sync_group("g", 1, new_id, "i2", {}, clock.now)
    assert s.result.assignment == b"A2"
    # the old incarnation is fenced
    assert c.heartbeat("g", 1, m2, "i2", clock.now) == E.fenced_instance_id
    assert (
        c.commit_offsets("g", 1, m2, "i2", {("t", 0): CommitOffset(1)}, clock.now)[("t", 0)]
        == E.fenced_instance_id
    )
    err, errs = c.leave_group("g", [(m2, "i2")], clock.now)
    assert errs == [E.fenced_instance_id]


def test_static_member_not_removed_when_missing_a_rebalance():
    c, _, clock = make()
    a1 = c.join_group(req(instance="i1", session=60_000), clock.now)
    a2 = c.join_group(req(instance="i2", session=60_000), clock.now)
    clock.advance(0)
    m1 = a1.result.member_id
    c.sync_group("g", 1, m1, "i1", {}, clock.now)
    c.sync_group("g", 1, a2.result.member_id, "i2", {}, clock.now)
    # i1 (leader) rejoins with new metadata; i2 is down for less than its session timeout
    r = c.join_group(
        req(m1, instance="i1", protocols=[("range", b"changed")], session=60_000), clock.now
    )
    clock.advance(REBALANCE)
    assert r.done and r.result.error == E.none and r.result.generation_id == 2
    assert "i2" in c.groups["g"].static_members
    assert {m[1] for m in r.result.members} == {"i1", "i2"}


# -- offsets ---------------------------------------------------------------------------------


def test_simple_consumer_commit_and_fetch():
    c, mlog, clock = make()
    errs = c.commit_offsets(
        "simple",
        -1,
        "",
        None,
        {("t", 0): CommitOffset(42, 7, "meta"), ("t", 1): CommitOffset(3)},
        clock.now,
    )
    assert set(errs.values()) == {E.none}
    err, rows = c.fetch_offsets("simple", [("t", [0, 1, 2])])
    got = {(t, p): (om.offset, om.leader_epoch, om.metadata) if om else None for t, p, om in rows}
    assert got == {("t", 0): (42, 7, "meta"), ("t", 1): (3, -1, ""), ("t", 2): None}
    err, rows = c.fetch_offsets("nogroup", [("t", [0])])
    assert err == E.none and rows == [("t", 0, None)]
    err, rows = c.fetch_offsets("simple", None)
    assert [(t, p) for t, p, _ in rows] == [("t", 0), ("t", 1)]


def test_commit_validation():
    c, mlog, clock = make(offset_metadata_max_bytes=4)
    errs = c.commit_offsets("nog", 3, "m", None, {("t", 0): CommitOffset(1)}, 0, api_version=8)
    assert errs[("t", 0)] == E.illegal_generation
    errs = c.commit_offsets("nog", 3, "m", None, {("t", 0): CommitOffset(1)}, 0, api_version=9)
    assert errs[("t", 0)] == E.group_id_not_found
    errs = c.commit_offsets(
        "g2", -1, "", None, {("t", 0): CommitOffset(1, -1, "toolong")}, clock.now
    )
    assert errs[("t", 0)] == E.offset_metadata_too_large
    (m1,), gen = stable_group(c, clock)
    errs = c.commit_offsets("g", -1, "", None, {("t", 0): CommitOffset(1)}, clock.now)
    assert errs[("t", 0)] == E.unknown_member_id  # simple commit to a live group
    errs = c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(1)}, clock.now)
    assert errs[("t", 0)] == E.none
    mlog.fail = True
    errs = c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(2)}, clock.now)
    assert errs[("t", 0)] == E.coordinator_not_available
    assert c.fetch_offsets("g", [("t", [0])])[1][0][2].offset == 1


def test_reload_from_records_restores_groups_and_offsets():
    c, mlog, clock = make()
    (m1, m2), gen = stable_group(c, clock, 2)
    c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(10, 2, "x")}, clock.now)
    c.commit_offsets("s", -1, "", None, {("u", 3): CommitOffset(99)}, clock.now)
    c.commit_offsets("gone", -1, "", None, {("u", 0): CommitOffset(1)}, clock.now)
    assert c.delete_groups(["gone"], clock.now) == {"gone": E.none}
    c2 = GroupCoordinator(c.config, MemLog())
    c2.begin_loading(range(5))
    assert c2.partition_error("g") == E.coordinator_load_in_progress
    for p in range(5):
        c2.load_partition(p, mlog.records.get(p, []), clock.now)
    g = c2.groups["g"]
    assert g.state == GroupState.STABLE and g.generation_id == gen
    assert set(g.members) == {m1, m2} and g.leader_id == m1
    assert g.members[m2].assignment == f"a-{m2}".encode()
    assert g.offsets[("t", 0)].offset == 10 and g.offsets[("t", 0)].metadata == "x"
    assert c2.groups["s"].offsets[("u", 3)].offset == 99
    assert "gone" not in c2.groups
    # members of a loaded group still heartbeat, and expire if they do not
    assert c2.heartbeat("g", gen, m1, None, clock.now) == E.none


def test_delete_groups_and_offset_delete():
    c, _, clock = make()
    (m1,), gen = stable_group(c, clock)
    c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(1)}, clock.now)
    assert c.delete_groups(["g", "nope"], clock.now) == {
        "g": E.non_empty_group,
        "nope": E.group_id_not_found,
    }
    # subscription metadata "range" b"m" does not parse as a consumer subscription: treated as
    # subscribed to everything
    err, res = c.delete_offsets("g", [("t", 0)], clock.now)
    assert err == E.none and res[("t", 0)] == E.group_subscribed_to_topic
    c.leave_group("g", [(m1, None)], clock.now)
    err, res = c.delete_offsets("g", [("t", 0)], clock.now)
    assert res[("t", 0)] == E.none
    assert c.fetch_offsets("g", [("t", [0])])[1][0][2] is None
    assert c.delete_offsets("nope", [("t", 0)], clock.now)[0] == E.group_id_not_found
    assert c.delete_groups(["g"], clock.now) == {"g": E.none}
    assert "g" not in c.groups


def test_delete_groups_after_the_last_session_ended():
    """A DeleteGroups handled at a member's session deadline, before the timer task fired it,
    finds the group empty, as it is by then."""
    c, _, clock = make()
    (m1,), gen = stable_group(c, clock)
    c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(1)}, clock.now)  # a heartbeat
    clock.now += SESSION - 1  # no timer fired in between
    assert c.delete_groups(["g"], clock.now) == {"g": E.non_empty_group}
    clock.now += 1
    assert c.delete_groups(["g"], clock.now) == {"g": E.none}


def test_offset_delete_respects_parsed_subscription():
    import struct

    sub = struct.pack(">hi", 1, 1) + struct.pack(">h", 1) + b"a" + struct.pack(">i", -1)
    c, _, clock = make()
    a = join_new(c, clock, protocols=[("range", sub)])
    clock.advance(0)
    c.sync_group("g", 1, a.result.member_id, None, {}, clock.now)
    err, res = c.delete_offsets("g", [("a", 0), ("b", 0)], clock.now)
    assert res == {("a", 0): E.group_subscribed_to_topic, ("b", 0): E.none}


def test_offsets_expire_after_group_is_empty_for_retention():
    c, mlog, clock = make(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000)
    (m1,), gen = stable_group(c, clock)
    c.commit_offsets("g", gen, m1, None, {("t", 0): CommitOffset(1)}, clock.now)
    clock.advance(SESSION + 1)  # the member stops heartbeating: removed, the group is Empty
    assert c.groups["g"].state == GroupState.EMPTY
    clock.advance(50_000)
    assert c.fetch_offsets("g", [("t", [0])])[1][0][2].offset == 1  # kept within retention
    clock.advance(20_000)
    assert "g" not in c.groups
    keys_with_tombstones = [k for recs in mlog.records.values() for k, v in recs if v is None]
    assert len(keys_with_tombstones) == 2  # the offset and the group


def test_empty_group_keeps_offsets_within_retention():
    c, _, clock = make(offsets_retention_ms=600_000, offsets_retention_check_interval_ms=10_000)
    c.commit_offsets("s", -1, "", None, {("t", 0): CommitOffset(5)}, clock.now)
    clock.advance(300_000)
    assert c.fetch_offsets("s", [("t", [0])])[1][0][2].offset == 5
    clock.advance(300_001)
    assert c.fetch_offsets("s", [("t", [0])])[1][0][2] is None


def test_list_and_describe():
    c, _, clock = make()
    stable_group(c, clock, 2)
    c.commit_offsets("s", -1, "", None, {("t", 0): CommitOffset(5)}, clock.now)
    err, groups = c.list_groups()
    assert err == E.none
    assert {(g.group_id, g.state, g.protocol_type) for g in groups} == {
        ("g", "Stable", "consumer"),
        ("s", "Empty", ""),
    }
    assert [g.group_id for g in c.list_groups({"stable"})[1]] == ["g"]
    assert c.list_groups(None, {"consumer"})[1] == []
    d = c.describe_group("g")
    assert d.state == "Stable" and d.protocol_data == "range" and len(d.members) == 2
    assert all(m.assignment for m in d.members)
    assert c.describe_group("nope").error == E.group_id_not_found


def test_misbehaving_client_join_flood_is_bounded():
    c, _, clock = make()
    stable_group(c, clock, 1, group="good")
    for _ in range(5000):
        r = c.join_group(req(group="flood"), clock.now)
        assert r.result.error == E.member_id_required
    assert len(c.groups["flood"].pending_members) == 5000
    clock.advance(SESSION + 1)
    assert "flood" not in c.groups  # pending ids expired, the unused group is forgotten
    assert c.groups["good"].state in (
        GroupState.STABLE,
        GroupState.PREPARING_REBALANCE,
        GroupState.EMPTY,
    )
    assert len(c.timers) < 10
