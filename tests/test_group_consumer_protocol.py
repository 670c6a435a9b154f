"""KIP-848 consumer groups in the sans-io coordinator: assignors, reconciliation (revoke before
assign), epochs and fencing, static members, timers with a fake clock, records and reload."""

from __future__ import annotations

import uuid

import pytest

from kafkapy.coordinator.group.assignors import (
    GroupSpec,
    MemberSpec,
    RangeAssignor,
    UniformAssignor,
)
from kafkapy.coordinator.group.consumer import ConsumerGroup, ConsumerMember, MemberState, reconcile
from kafkapy.coordinator.group.coordinator import CommitOffset
from kafkapy.protocol.errors import ErrorCode as E

from .group_helpers import (
    CONSUMER_SESSION,
    T1,
    T2,
    Topics,
    hb,
    join_new,
    make_consumer,
    reload,
    req,
)


def total(a):
    return sum(len(ps) for ps in a.values())


# -- assignors -----------------------------------------------------------------------------------


def test_uniform_balances_and_is_sticky():
    spec = GroupSpec(
        {m: MemberSpec(frozenset({T1, T2})) for m in ("m1", "m2", "m3")}, {T1: 6, T2: 3}
    )
    first = UniformAssignor().assign(spec)
    assert sorted(total(a) for a in first.values()) == [3, 3, 3]
    owned = [(t, p) for a in first.values() for t, ps in a.items() for p in ps]
    assert len(owned) == len(set(owned)) == 9
    # a fourth member: balanced again, and everyone else keeps what it can
    spec.members = {m: MemberSpec(frozenset({T1, T2}), current=first[m]) for m in first}
    spec.members["m4"] = MemberSpec(frozenset({T1, T2}))
    second = UniformAssignor().assign(spec)
    assert sorted(total(a) for a in second.values()) == [2, 2, 2, 3]
    for m in ("m1", "m2", "m3"):
        kept = sum(len(second[m].get(t, set()) & ps) for t, ps in first[m].items())
        assert kept == total(second[m])  # only lost partitions, never swapped


def test_uniform_heterogeneous_subscriptions():
    spec = GroupSpec(
        {"m1": MemberSpec(frozenset({T1})), "m2": MemberSpec(frozenset({T1, T2}))},
        {T1: 6, T2: 3},
    )
    out = UniformAssignor().assign(spec)
    assert T2 not in out["m1"]
    assert out["m2"][T2] == {0, 1, 2}
    assert total(out["m1"]) + total(out["m2"]) == 9
    assert abs(total(out["m1"]) - total(out["m2"])) <= 1


def test_range_assignor_contiguous_and_co_partitioned():
    spec = GroupSpec({m: MemberSpec(frozenset({T1, T2})) for m in ("b", "a")}, {T1: 5, T2: 5})
    out = RangeAssignor().assign(spec)
    assert out["a"] == {T1: {0, 1, 2}, T2: {0, 1, 2}}
    assert out["b"] == {T1: {3, 4}, T2: {3, 4}}


# -- reconciliation ------------------------------------------------------------------------------


def test_reconcile_revokes_before_assigning():
    owners = {(T1, 0): 1, (T1, 1): 1}
    m = ConsumerMember("m", member_epoch=1, assigned={T1: {0, 1}})
    # the new target moves partition 1 away and brings 2 (free)
    nxt = reconcile(m, 2, {T1: {0, 2}}, {T1: {0, 1}}, lambda t, p: owners.get((t, p), -1))
    assert nxt.state == MemberState.UNREVOKED_PARTITIONS
    assert nxt.member_epoch == 1 and nxt.assigned == {T1: {0}}
    assert nxt.pending_revocation == {T1: {1}}
    # still owned in the next heartbeat: no progress
    assert reconcile(nxt, 2, {T1: {0, 2}}, {T1: {0, 1}}, lambda t, p: -1) is nxt
    # acknowledged: moves to epoch 2 and gets partition 2
    done = reconcile(nxt, 2, {T1: {0, 2}}, {T1: {0}}, lambda t, p: -1)
    assert done.state == MemberState.STABLE and done.member_epoch == 2
    assert done.assigned == {T1: {0, 2}} and not done.pending_revocation


def test_reconcile_waits_for_unreleased_partitions():
    m = ConsumerMember("m", member_epoch=1)
    nxt = reconcile(m, 2, {T1: {0, 1}}, {}, lambda t, p: 1 if p == 1 else -1)
    assert nxt.state == MemberState.UNRELEASED_PARTITIONS
    assert nxt.member_epoch == 2 and nxt.assigned == {T1: {0}}
    done = reconcile(nxt, 2, {T1: {0, 1}}, {T1: {0}}, lambda t, p: -1)
    assert done.state == MemberState.STABLE and done.assigned == {T1: {0, 1}}


# -- the coordinator -------------------------------------------------------------------------------


def test_join_assign_and_rebalance_with_revocation():
    c, _, clock = make_consumer()
    r1 = hb(c, clock, "m1", 0)
    assert r1.error == E.none and r1.member_epoch == 1 and r1.assignment == {T1: set(range(6))}
    r2 = hb(c, clock, "m2", 0)
    # m1 still owns everything: m2 moves to epoch 2 but gets nothing yet
    assert r2.error == E.none and r2.member_epoch == 2 and r2.assignment == {}
    g = c.groups["g"]
    assert g.state == "Reconciling" and g.members["m2"].state == MemberState.UNRELEASED_PARTITIONS
    # m1's heartbeat: asked to revoke three partitions, keeps epoch 1
    r1 = hb(c, clock, "m1", 1, {T1: set(range(6))})
    assert r1.member_epoch == 1 and total(r1.assignment) == 3
    kept = r1.assignment[T1]
    # m2 still cannot get them
    assert hb(c, clock, "m2", 2, {}).assignment is None
    # m1 acknowledges the revocation, moves to epoch 2
    r1 = hb(c, clock, "m1", 1, {T1: kept})
    assert r1.member_epoch == 2 and r1.assignment is None
    r2 = hb(c, clock, "m2", 2, {})
    assert r2.assignment == {T1: set(range(6)) - kept}
    assert g.state == "Stable" and g.group_epoch == 2 and g.assignment_epoch == 2


def test_epoch_fencing_and_previous_epoch_tolerated():
    c, _, clock = make_consumer()
    hb(c, clock, "m1", 0)
    assert hb(c, clock, "m1", 5, {}).error == E.fenced_member_epoch
    hb(c, clock, "m2", 0)
    hb(c, clock, "m1", 1, {T1: set(range(6))})
    r = hb(c, clock, "m1", 1, {T1: c.groups["g"].members["m1"].assigned[T1]})
    assert r.member_epoch == 2
    # the answer was lost: the member retries with epoch 1 and a subset of its partitions
    assert hb(c, clock, "m1", 1, {T1: c.groups["g"].members["m1"].assigned[T1]}).error == E.none
    # an older epoch with partitions it does not own is fenced
    assert hb(c, clock, "m1", 1, {T1: {0, 1, 2, 3, 4, 5}}).error == E.fenced_member_epoch
    assert hb(c, clock, "ghost", 3, {}).error == E.unknown_member_id


def test_leave_and_session_timeout_bump_epoch():
    c, _, clock = make_consumer(consumer_session_timeout_ms=CONSUMER_SESSION)
    hb(c, clock, "m1", 0)
    hb(c, clock, "m2", 0)
    g = c.groups["g"]
    r = hb(c, clock, "m2", -1)
    assert r.error == E.none and r.member_epoch == -1 and "m2" not in g.members
    assert g.group_epoch == 3
    # m1 keeps heartbeating, m3 joins and then goes silent
    hb(c, clock, "m3", 0)
    for _ in range(10):
        clock.advance(5_000)
        m1 = g.members["m1"]
        hb(c, clock, "m1", m1.member_epoch, m1.assigned)
    assert "m3" not in g.members and "m1" in g.members
    assert hb(c, clock, "m3", 5, {}).error == E.unknown_member_id
    m1 = g.members["m1"]
    assert hb(c, clock, "m1", m1.member_epoch, m1.assigned).error == E.none
    assert g.members["m1"].assigned == {T1: set(range(6))}


def test_rebalance_timeout_fences_a_member_that_does_not_revoke():
    c, _, clock = make_consumer()
    hb(c, clock, "m1", 0, rebalance=10_000)
    hb(c, clock, "m2", 0)
    hb(c, clock, "m1", 1, {T1: set(range(6))})  # asked to revoke
    assert c.groups["g"].members["m1"].state == MemberState.UNREVOKED_PARTITIONS
    clock.advance(10_001)
    assert "m1" not in c.groups["g"].members


def test_static_member_leaves_and_comes_back_with_its_assignment():
    c, _, clock = make_consumer()
    hb(c, clock, "s1", 0, instance_id="i1")
    hb(c, clock, "s2", 0, instance_id="i2")
    g = c.groups["g"]
    hb(c, clock, "s1", 1, {T1: set(range(6))}, instance_id="i1")
    hb(c, clock, "s1", 1, {T1: g.members["s1"].assigned[T1]}, instance_id="i1")
    hb(c, clock, "s2", 2, {}, instance_id="i2")
    before = {m.instance_id: m.assigned for m in g.members.values()}
    epoch = g.group_epoch
    # -2: temporarily gone, keeps its partitions
    assert hb(c, clock, "s1", -2, instance_id="i1").member_epoch == -2
    # a second instance with the same id cannot join while the first holds it... it left, so ok
    r = hb(c, clock, "s1-new", 0, instance_id="i1")
    assert r.error == E.none and r.assignment == before["i1"]
    assert g.group_epoch == epoch and "s1" not in g.members
    # a third one is refused while s1-new holds the instance id
    assert hb(c, clock, "s1-x", 0, instance_id="i1").error == E.unreleased_instance_id
    assert hb(c, clock, "s1", 3, {}, instance_id="i1").error == E.fenced_instance_id
    # an instance id no member holds, on a heartbeat and on a leave; another's, on a leave
    assert hb(c, clock, "s9", 3, {}, instance_id="i9").error == E.unknown_member_id
    assert hb(c, clock, "s9", -2, instance_id="i9").error == E.unknown_member_id
    assert hb(c, clock, "s1", -2, instance_id="i1").error == E.fenced_instance_id


def test_request_validation_errors():
    c, _, clock = make_consumer()
    assert hb(c, clock, "", 0).error == E.invalid_request
    assert hb(c, clock, "m", 0, group="").error == E.invalid_request
    assert hb(c, clock, "m", 0, server_assignor="sticky").error == E.unsupported_assignor
    assert hb(c, clock, "m", 0, owned={T1: {1}}).error == E.invalid_request
    assert hb(c, clock, "m", -3).error == E.invalid_request
    assert hb(c, clock, "m", 1, {}).error == E.group_id_not_found
    assert hb(c, clock, "m", -1).error == E.group_id_not_found
    r = hb(c, clock, "m", 0, names=None, subscribed_topic_regex="(")
    assert r.error == E.invalid_regular_expression


def test_regex_subscription_and_range_assignor_choice():
    c, _, clock = make_consumer()
    r = hb(c, clock, "m1", 0, names=None, subscribed_topic_regex="[ab]", server_assignor="range")
    assert r.assignment == {T1: set(range(6)), T2: {0, 1, 2}}
    d = c.consumer_group_describe("g")
    assert d.error == E.none and d.assignor == "range" and d.group.state == "Stable"


def test_regex_subscription_matches_internal_topics_as_kafka():
    """Kafka resolves a SubscribedTopicRegex over every topic of its metadata image, internal
    ones included: a regex naming __consumer_offsets gets its partitions assigned (franz-go's
    Test848RegexBrokerResolves relies on it)."""
    offsets_id = uuid.UUID(int=3)
    c, _, clock = make_consumer(Topics(a=(T1, 6), __consumer_offsets=(offsets_id, 4)))
    r = hb(c, clock, "m1", 0, names=None, subscribed_topic_regex="a|__consumer_offsets")
    assert r.assignment == {T1: set(range(6)), offsets_id: set(range(4))}
    r = hb(c, clock, "n1", 0, group="g2", names=None, subscribed_topic_regex="__.*")
    assert r.assignment == {offsets_id: set(range(4))}


def test_classic_apis_and_consumer_groups():
    c, _, clock = make_consumer(consumer_migration_policy="disabled")
    hb(c, clock, "m1", 0)
    # classic APIs against a consumer group: its consumer-protocol members are unknown there, and
    # only the 'consumer' protocol type may join (test_group_migration has the rest)
    join = c.join_group(req(protocol_type="connect"), clock.now)
    assert join.result.error == E.inconsistent_group_protocol
    assert c.join_group(req(), clock.now).result.error == E.member_id_required
    assert c.heartbeat("g", 1, "m1", None, clock.now) == E.unknown_member_id
    assert c.sync_group("g", 1, "m1", None, {}, clock.now).result.error == E.unknown_member_id
    assert c.leave_group("g", [("m1", None)], clock.now) == (E.none, [E.unknown_member_id])
    d = c.describe_group("g")
    assert d.error == E.group_id_not_found and "not a classic group" in d.message
    # consumer protocol against a classic group with members: no upgrade with the policy off
    a = join_new(c, clock, group="cl")
    clock.advance(0)
    assert a.result.error == E.none
    assert hb(c, clock, "x", 0, group="cl").error == E.group_id_not_found
    assert c.consumer_group_describe("cl").error == E.group_id_not_found
    # listing reports both kinds with their states
    err, groups = c.list_groups(None, {"consumer"})
    assert [(g.group_id, g.state, g.group_type) for g in groups] == [("g", "Stable", "consumer")]
    assert [g.group_id for g in c.list_groups({"stable"}, None)[1]] == ["g"]


def test_empty_groups_change_kind_and_keep_offsets():
    c, _, clock = make_consumer()
    c.commit_offsets("g", -1, "", None, {("a", 0): CommitOffset(7)}, clock.now)
    assert hb(c, clock, "m1", 0).error == E.none  # the empty classic group is replaced
    assert isinstance(c.groups["g"], ConsumerGroup)
    assert c.fetch_offsets("g", [("a", [0])])[1][0][2].offset == 7
    hb(c, clock, "m1", -1)
    first = c.join_group(req(), clock.now)  # an empty consumer group becomes classic
    assert first.result.error == E.member_id_required
    assert c.fetch_offsets("g", [("a", [0])])[1][0][2].offset == 7


def test_offset_commit_and_fetch_check_member_epoch():
    c, _, clock = make_consumer()
    hb(c, clock, "m1", 0)
    commit = {("a", 0): CommitOffset(3)}
    assert c.commit_offsets("g", 1, "m1", None, commit, clock.now) == {("a", 0): E.none}
    assert c.commit_offsets("g", 0, "m1", None, commit, clock.now) == {
        ("a", 0): E.stale_member_epoch
    }
    assert c.commit_offsets("g", 1, "zz", None, commit, clock.now) == {
        ("a", 0): E.unknown_member_id
    }
    assert c.commit_offsets("g", 1, "m1", None, commit, clock.now, api_version=8) == {
        ("a", 0): E.unsupported_version
    }
    assert c.commit_offsets("g", -1, "", None, commit, clock.now) == {("a", 0): E.unknown_member_id}
    assert c.fetch_offsets("g", [("a", [0])], member_id="m1", member_epoch=1)[0] == E.none
    assert c.fetch_offsets("g", [("a", [0])], member_id="m1", member_epoch=0)[0] == (
        E.stale_member_epoch
    )
    assert c.fetch_offsets("g", [("a", [0])])[0] == E.none  # admin clients
    # non-empty: cannot delete; empty: deleted with tombstones
    assert c.delete_groups(["g"], clock.now) == {"g": E.non_empty_group}
    hb(c, clock, "m1", -1)
    assert c.delete_groups(["g"], clock.now) == {"g": E.none}
    assert "g" not in c.groups


def test_records_reload_restores_group_members_and_assignments():
    c, mlog, clock = make_consumer()
    hb(c, clock, "m1", 0, instance_id="i1")
    hb(c, clock, "m2", 0)
    hb(c, clock, "m1", 1, {T1: set(range(6))}, instance_id="i1")
    c.commit_offsets("g", 1, "m1", None, {("a", 0): CommitOffset(9, 2, "meta")}, clock.now)
    g = c.groups["g"]
    c2 = reload(c, mlog, clock)
    g2 = c2.groups["g"]
    assert isinstance(g2, ConsumerGroup)
    assert (g2.group_epoch, g2.assignment_epoch, g2.state) == (
        g.group_epoch,
        g.assignment_epoch,
        g.state,
    )
    for mid, m in g.members.items():
        m2 = g2.members[mid]
        assert (m2.member_epoch, m2.state, m2.assigned, m2.pending_revocation) == (
            m.member_epoch,
            m.state,
            m.assigned,
            m.pending_revocation,
        )
        assert m2.instance_id == m.instance_id and g2.target[mid] == g.target[mid]
    assert g2.partition_epochs == g.partition_epochs
    assert g2.offsets[("a", 0)].metadata == "meta"
    # the reloaded members' sessions run again
    clock.advance(CONSUMER_SESSION + 1)
    c2.poll(clock.now)
    assert not g2.members


@pytest.mark.parametrize("n", [10])
def test_many_members_converge_to_a_balanced_stable_group(n):
    c, _, clock = make_consumer(topics=Topics(a=(T1, 20)))
    for i in range(n):
        hb(c, clock, f"m{i}", 0)
    g = c.groups["g"]
    for _ in range(5):
        for mid in list(g.members):
            m = g.members[mid]
            hb(c, clock, mid, m.member_epoch, m.assigned)
    assert g.state == "Stable"
    sizes = sorted(total(m.assigned) for m in g.members.values())
    assert sizes == [2] * n
    owned = [(t, p) for m in g.members.values() for t, ps in m.assigned.items() for p in ps]
    assert len(owned) == len(set(owned)) == 20
