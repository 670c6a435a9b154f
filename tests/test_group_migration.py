"""Online migration between the classic protocol and the consumer protocol (KIP-848) in the
sans-io coordinator: upgrade of a classic group by a ConsumerGroupHeartbeat, classic members
served by the consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, their timeouts and
commits), downgrade when the last consumer-protocol member leaves, the policy, and reloads."""

from __future__ import annotations

import pytest

from kafkapy.coordinator.group import records as rec
from kafkapy.coordinator.group.classic import ClassicGroup, GroupState
from kafkapy.coordinator.group.consumer import ConsumerGroup, MemberState
from kafkapy.coordinator.group.coordinator import CommitOffset
from kafkapy.coordinator.group.embedded import encode_assignment, parse_assignment
from kafkapy.protocol.errors import ErrorCode as E

from .group_helpers import SESSION, T1, hb, make_consumer, reload, req


def sub(topics=("a",), owned=None, version=1):
    """A 'consumer' embedded-protocol subscription, as a classic client's JoinGroup carries."""
    return rec.encode_embedded(
        "Subscription",
        {
            "topics": list(topics),
            "user_data": None,
            "owned_partitions": [
                {"topic": t, "partitions": sorted(ps)} for t, ps in (owned or {}).items()
            ],
        },
        version,
    )


def parts(assignment_bytes):
    return {t: ps for t, ps in parse_assignment(assignment_bytes)[0].items()}


def join(c, clock, member_id="", *, group="g", owned=None, protocols=None, **kw):
    protocols = protocols or [("range", sub(owned=owned)), ("roundrobin", sub(owned=owned))]
    return c.join_group(req(member_id, group=group, protocols=protocols, **kw), clock.now)


def classic_group(c, clock, n=2, group="g", split=((0, 1, 2), (3, 4, 5))):
    """A Stable classic group of ``n`` members whose leader assigned topic a's partitions."""
    ids = []
    pendings = []
    for _ in range(n):
        first = join(c, clock, group=group)
        assert first.result.error == E.member_id_required
        ids.append(first.result.member_id)
        pendings.append(join(c, clock, first.result.member_id, group=group))
    clock.advance(0)
    assert all(p.result.error == E.none for p in pendings)
    gen = pendings[0].result.generation_id
    assignment = {
        mid: encode_assignment({"a": set(ps)}, 1) for mid, ps in zip(ids, split, strict=False)
    }
    leader = next(p.result.member_id for p in pendings if p.result.members)
    for mid in ids:
        s = c.sync_group(group, gen, mid, None, assignment if mid == leader else {}, clock.now)
        assert s.result.error == E.none
    g = c.groups[group]
    assert isinstance(g, ClassicGroup) and g.is_in(GroupState.STABLE)
    return ids, gen


def owned_by(group):
    return {
        (t, p): mid for mid, m in group.members.items() for t, ps in m.assigned.items() for p in ps
    }


def rejoin_and_sync(c, clock, mid, group="g", owned=None):
    """A classic member's rejoin + SyncGroup in a consumer group; returns (generation, parts)."""
    j = join(c, clock, mid, group=group, owned=owned)
    assert j.done and j.result.error == E.none, j.result
    assert j.result.leader == "" and j.result.members == []
    s = c.sync_group(group, j.result.generation_id, mid, None, {}, clock.now, "consumer", "range")
    assert s.result.error == E.none, s.result
    return j.result.generation_id, parts(s.result.assignment)


# -- upgrade -------------------------------------------------------------------------------------


def test_upgrade_converts_classic_members_and_keeps_their_assignment():
    c, mlog, clock = make_consumer()
    (m1, m2), gen = classic_group(c, clock)
    p = c.partition_for("g")
    before = len(mlog.records[p])
    r = hb(c, clock, "c1", 0)
    assert r.error == E.none and r.member_epoch == gen + 1
    assert r.assignment == {}  # everything is still owned by the classic members
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup)
    assert g.group_epoch == g.assignment_epoch == gen + 1
    for mid, ps in ((m1, {0, 1, 2}), (m2, {3, 4, 5})):
        m = g.members[mid]
        assert m.classic is not None and m.classic.session_timeout_ms == SESSION
        assert [n for n, _ in m.classic.protocols] == ["range", "roundrobin"]
        assert (m.member_epoch, m.state, m.assigned) == (gen, MemberState.STABLE, {T1: ps})
        assert m.subscribed_topic_names == ("a",)
    # the records: the classic group's tombstone first, then the consumer group's
    keys = [rec.decode_key(k) for k, _ in mlog.records[p][before:]]
    assert keys[0] == rec.GroupKey("g") and mlog.records[p][before][1] is None
    kinds = [k.kind for k in keys[1:]]
    assert kinds[:4] == [
        rec.MEMBER_METADATA,
        rec.MEMBER_METADATA,
        rec.GROUP_EPOCH,
        rec.TARGET_MEMBER,
    ]
    # the classic members learn from their heartbeats that they must rejoin
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.rebalance_in_progress
    assert c.heartbeat("g", gen + 5, m1, None, clock.now) == E.illegal_generation
    gen1, got1 = rejoin_and_sync(c, clock, m1)  # eager: it gave everything up before rejoining
    assert gen1 == gen + 1 and len(got1["a"]) == 2
    gen2, got2 = rejoin_and_sync(c, clock, m2)
    assert len(got2["a"]) == 2
    r = hb(c, clock, "c1", r.member_epoch, {})
    assert sum(len(ps) for ps in r.assignment.values()) == 2
    owners = owned_by(g)
    assert len(owners) == 6 and set(owners.values()) == {m1, m2, "c1"}
    assert g.state == "Stable"
    assert c.heartbeat("g", gen1, m1, None, clock.now) == E.none


def test_upgrade_of_a_rebalancing_group_sends_its_members_back_to_join():
    c, _, clock = make_consumer(initial_rebalance_delay_ms=10_000)
    first = join(c, clock)
    pending = join(c, clock, first.result.member_id)
    assert not pending.done  # the initial delay is running; no protocol chosen yet
    assert hb(c, clock, "c1", 0).error == E.none
    assert pending.result.error == E.rebalance_in_progress
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup) and g.members[first.result.member_id].classic is not None
    clock.advance(10_001)  # the classic group's timers are gone
    assert c.groups["g"] is g


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        (dict(consumer_migration_policy="disabled"), "online upgrade is disabled"),
        (dict(consumer_migration_policy="downgrade"), "online upgrade is disabled"),
        (dict(consumer_max_size=1), "exceeds the consumer group maximum size"),
    ],
)
def test_upgrade_refused(setup, why):
    c, _, clock = make_consumer(**setup)
    classic_group(c, clock)
    r = hb(c, clock, "c1", 0)
    assert r.error == E.group_id_not_found and why in r.message
    assert isinstance(c.groups["g"], ClassicGroup)
    assert hb(c, clock, "c1", 3).error == E.group_id_not_found  # not a join: never an upgrade


def test_upgrade_refused_for_other_protocols_bad_metadata_and_custom_assignors():
    c, _, clock = make_consumer()
    c.join_group(req(group="connect", protocol_type="connect", require_known_member_id=False), 0)
    clock.advance(0)
    r = hb(c, clock, "c1", 0, group="connect")
    assert r.error == E.group_id_not_found and "consumer embedded protocol" in r.message
    c.join_group(req(group="bad", require_known_member_id=False), clock.now)  # metadata b"m"
    clock.advance(0)
    r = hb(c, clock, "c1", 0, group="bad")
    assert r.error == E.group_id_not_found and "malformed" in r.message
    (m1, _), gen = classic_group(c, clock, group="custom")
    g = c.groups["custom"]
    g.members[m1].assignment = rec.encode_embedded(
        "Assignment", {"assigned_partitions": [], "user_data": b"state"}, 1
    )
    r = hb(c, clock, "c1", 0, group="custom")
    assert r.error == E.group_id_not_found and "custom assignor" in r.message


def test_full_consumer_group_refuses_the_joining_member_and_stays_classic():
    c, mlog, clock = make_consumer(consumer_max_size=2)
    classic_group(c, clock)
    written = sum(len(v) for v in mlog.records.values())
    r = hb(c, clock, "c1", 0)
    assert r.error == E.group_max_size_reached
    assert isinstance(c.groups["g"], ClassicGroup)
    assert sum(len(v) for v in mlog.records.values()) == written  # nothing written


def test_failed_write_leaves_the_classic_group_untouched():
    c, mlog, clock = make_consumer()
    (m1, _), gen = classic_group(c, clock)
    mlog.fail = True
    assert hb(c, clock, "c1", 0).error == E.coordinator_not_available
    mlog.fail = False
    assert isinstance(c.groups["g"], ClassicGroup)
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.none


# -- classic members in a consumer group ---------------------------------------------------------


def test_classic_member_joins_a_consumer_group():
    c, _, clock = make_consumer()
    r = hb(c, clock, "c1", 0)
    assert r.assignment == {T1: set(range(6))}
    first = join(c, clock)
    assert first.result.error == E.member_id_required
    mid = first.result.member_id
    j = join(c, clock, mid)
    assert j.result.error == E.none
    assert (j.result.protocol_type, j.result.protocol_name) == ("consumer", "range")
    g = c.groups["g"]
    assert j.result.generation_id == g.group_epoch == 2
    # c1 must give partitions up first: the classic member waits for them
    s = c.sync_group("g", 2, mid, None, {}, clock.now)
    assert s.result.error == E.none and parts(s.result.assignment) == {}
    assert g.members[mid].state == MemberState.UNRELEASED_PARTITIONS
    assert c.heartbeat("g", 2, mid, None, clock.now) == E.none  # still waiting
    r = hb(c, clock, "c1", 1, {T1: set(range(6))})
    assert sum(len(ps) for ps in r.assignment.values()) == 3  # 3 to revoke first
    kept = r.assignment
    hb(c, clock, "c1", r.member_epoch, kept)  # revoked
    assert c.heartbeat("g", 2, mid, None, clock.now) == E.rebalance_in_progress  # free now
    gen, got = rejoin_and_sync(c, clock, mid)
    assert gen == 2 and len(got["a"]) == 3
    assert set(got["a"]).isdisjoint(kept[T1])
    assert c.heartbeat("g", 2, mid, None, clock.now) == E.none


def test_classic_member_errors_in_a_consumer_group():
    c, _, clock = make_consumer()
    hb(c, clock, "c1", 0)
    mid = join(c, clock).result.member_id
    j = join(c, clock, mid)
    gen = j.result.generation_id
    # protocols the classic members do not all support, or another protocol type
    bad = join(c, clock, protocols=[("sticky", sub())])
    assert bad.result.error == E.inconsistent_group_protocol
    assert join(c, clock, protocol_type="connect").result.error == E.inconsistent_group_protocol
    assert join(c, clock, "x", protocols=[("range", b"junk")]).result.error == (
        E.unknown_server_error
    )
    # the consumer-protocol member is unknown to the classic APIs
    assert c.heartbeat("g", 1, "c1", None, clock.now) == E.unknown_member_id
    assert c.sync_group("g", 1, "c1", None, {}, clock.now).result.error == E.unknown_member_id
    assert c.leave_group("g", [("c1", None)], clock.now) == (E.none, [E.unknown_member_id])
    # generation and protocol checks
    assert c.sync_group("g", gen + 1, mid, None, {}, clock.now).result.error == (
        E.illegal_generation
    )
    s = c.sync_group("g", gen, mid, None, {}, clock.now, "consumer", "roundrobin")
    assert s.result.error == E.inconsistent_group_protocol
    s = c.sync_group("g", gen, mid, None, {}, clock.now, "connect", None)
    assert s.result.error == E.inconsistent_group_protocol
    # a new group epoch: SyncGroup sends the member back to JoinGroup
    hb(c, clock, "c2", 0)
    assert c.sync_group("g", gen, mid, None, {}, clock.now).result.error == (
        E.rebalance_in_progress
    )


def test_static_classic_member_rejoining_replaces_its_previous_instance():
    c, _, clock = make_consumer()
    hb(c, clock, "c1", 0)
    j = join(c, clock, instance="i1")  # static members get their id at once
    old = j.result.member_id
    assert j.result.error == E.none
    j2 = join(c, clock, instance="i1")
    new = j2.result.member_id
    assert j2.result.error == E.none and new != old
    g = c.groups["g"]
    assert old not in g.members and g.members[new].instance_id == "i1"
    assert join(c, clock, old, instance="i1").result.error == E.fenced_instance_id
    assert join(c, clock, "zz", instance="i9").result.error == E.unknown_member_id
    assert c.heartbeat("g", j2.result.generation_id, old, "i1", clock.now) == E.fenced_instance_id
    # LeaveGroup by instance id alone (an admin removing the member)
    epoch = g.group_epoch
    assert c.leave_group("g", [("", "i1")], clock.now) == (E.none, [E.none])
    assert new not in g.members and g.group_epoch == epoch + 1


def test_classic_member_leaves_and_commits():
    c, _, clock = make_consumer()
    hb(c, clock, "c1", 0)
    mid = join(c, clock).result.member_id
    gen = join(c, clock, mid).result.generation_id
    commit = {("a", 0): CommitOffset(5)}
    assert c.commit_offsets("g", gen, mid, None, commit, clock.now, api_version=2) == {
        ("a", 0): E.none
    }
    assert c.commit_offsets("g", gen - 1, mid, None, commit, clock.now) == {
        ("a", 0): E.illegal_generation
    }
    assert c.fetch_offsets("g", [("a", [0])], member_id=mid, member_epoch=gen - 1)[0] == (
        E.illegal_generation
    )
    g = c.groups["g"]
    epoch = g.group_epoch
    assert c.leave_group("g", [(mid, None), ("nobody", None)], clock.now) == (
        E.none,
        [E.none, E.unknown_member_id],
    )
    assert mid not in g.members and g.group_epoch == epoch + 1 and "c1" in g.members


def test_classic_member_timeouts():
    c, _, clock = make_consumer()
    hb(c, clock, "c1", 0)
    # a member that joins but never syncs is fenced after its rebalance timeout
    silent = join(c, clock).result.member_id
    join(c, clock, silent, rebalance=2_000)
    clock.advance(2_001)
    hb(c, clock, "c1", c.groups["g"].members["c1"].member_epoch)
    g = c.groups["g"]
    assert silent not in g.members
    # a member told to rejoin that does not is fenced after its rebalance timeout
    mid = join(c, clock).result.member_id
    gen, _ = rejoin_and_sync(c, clock, mid)
    hb(c, clock, "c2", 0)  # bumps the group epoch
    assert c.heartbeat("g", gen, mid, None, clock.now) == E.rebalance_in_progress
    for step in range(6):
        clock.advance(5_000)
        for m in ("c1", "c2"):
            hb(c, clock, m, g.members[m].member_epoch, g.members[m].assigned)
        if step < 5:
            assert c.heartbeat("g", gen, mid, None, clock.now) == E.rebalance_in_progress
    assert mid not in g.members  # REBALANCE (30 s) after the first REBALANCE_IN_PROGRESS
    # a member that stops heartbeating is fenced after its own session timeout
    mid = join(c, clock).result.member_id
    rejoin_and_sync(c, clock, mid)
    for _ in range(2):
        clock.advance(SESSION // 2 + 1)
        for m in ("c1", "c2"):
            hb(c, clock, m, g.members[m].member_epoch, g.members[m].assigned)
    assert mid not in g.members and "c1" in g.members


# -- downgrade -----------------------------------------------------------------------------------


def upgraded(c, clock):
    """A classic group upgraded by c1, every classic member caught up."""
    (m1, m2), _ = classic_group(c, clock)
    r = hb(c, clock, "c1", 0)
    rejoin_and_sync(c, clock, m1)
    rejoin_and_sync(c, clock, m2)
    r = hb(c, clock, "c1", r.member_epoch, {})
    assert c.groups["g"].state == "Stable"
    return m1, m2, r


def test_downgrade_when_the_last_consumer_member_leaves():
    c, mlog, clock = make_consumer()
    m1, m2, r = upgraded(c, clock)
    epoch = c.groups["g"].group_epoch
    targets = {mid: set(ps) for mid, m in c.groups["g"].target.items() for ps in m.values()}
    p = c.partition_for("g")
    before = len(mlog.records[p])
    c.commit_offsets("g", r.member_epoch, "c1", None, {("a", 1): CommitOffset(3)}, clock.now)
    assert hb(c, clock, "c1", -1).error == E.none
    g = c.groups["g"]
    assert isinstance(g, ClassicGroup)
    assert g.is_in(GroupState.PREPARING_REBALANCE) and g.generation_id == epoch
    assert (g.protocol_type, g.protocol_name) == ("consumer", "range")
    assert set(g.members) == {m1, m2}
    for mid in (m1, m2):
        assert set(parts(g.members[mid].assignment)["a"]) == targets[mid]
    assert g.offsets[("a", 1)].offset == 3
    # records: the consumer group's tombstones, then the classic group
    written = mlog.records[p][before:]
    assert rec.decode_key(written[-1][0]) == rec.GroupKey("g") and written[-1][1] is not None
    assert all(v is None for _, v in written[1:-1])
    # the members rejoin and the leader assigns again, client side
    assert c.heartbeat("g", epoch, m1, None, clock.now) == E.rebalance_in_progress
    j1 = join(c, clock, m1)
    j2 = join(c, clock, m2)
    assert j1.result.error == j2.result.error == E.none
    assert j1.result.generation_id == epoch + 1
    leader = j1.result if j1.result.members else j2.result
    assert {mid for mid, _, _ in leader.members} == {m1, m2}


def test_downgrade_when_the_consumer_member_times_out():
    c, _, clock = make_consumer()
    m1, m2, _ = upgraded(c, clock)
    g = c.groups["g"]
    gens = {mid: g.members[mid].member_epoch for mid in (m1, m2)}
    for _ in range(10):  # classic members heartbeat; c1 is silent
        clock.advance(5_000)
        for mid in (m1, m2):
            if isinstance(c.groups["g"], ConsumerGroup):
                assert c.heartbeat("g", gens[mid], mid, None, clock.now) == E.none
    assert isinstance(c.groups["g"], ClassicGroup)


def test_no_downgrade_without_the_policy_or_with_consumer_members_left():
    c, _, clock = make_consumer(consumer_migration_policy="upgrade")
    upgraded(c, clock)
    hb(c, clock, "c1", -1)
    g = c.groups["g"]
    assert isinstance(g, ConsumerGroup) and all(m.classic for m in g.members.values())
    c, _, clock = make_consumer()
    upgraded(c, clock)
    hb(c, clock, "c2", 0)
    hb(c, clock, "c1", -1)  # c2 still uses the consumer protocol
    assert isinstance(c.groups["g"], ConsumerGroup)
    c, _, clock = make_consumer()
    upgraded(c, clock)
    c.config.max_size = 1  # two classic members do not fit group.max.size
    hb(c, clock, "c1", -1)
    assert isinstance(c.groups["g"], ConsumerGroup)


# -- reload and admin views ----------------------------------------------------------------------


def test_reload_after_upgrade_and_after_downgrade():
    c, mlog, clock = make_consumer()
    m1, m2, _ = upgraded(c, clock)
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
        m2_ = g2.members[mid]
        assert (m2_.classic, m2_.member_epoch, m2_.assigned, m2_.subscribed_topic_names) == (
            m.classic,
            m.member_epoch,
            m.assigned,
            m.subscribed_topic_names,
        )
    gen = g2.members[m1].member_epoch
    assert c2.heartbeat("g", gen, m1, None, clock.now) == E.none
    s = c2.sync_group("g", gen, m1, None, {}, clock.now)
    assert parts(s.result.assignment) == {"a": g.members[m1].assigned[T1]}
    # after a downgrade the log holds a classic group again
    hb(c, clock, "c1", -1)
    c3 = reload(c, mlog, clock)
    g3 = c3.groups["g"]
    assert isinstance(g3, ClassicGroup) and set(g3.members) == {m1, m2}
    assert g3.generation_id == c.groups["g"].generation_id
    assert g3.members[m1].assignment == c.groups["g"].members[m1].assignment
    # classic members' sessions are their own after a reload (10 s here, not the 45 s of
    # group.consumer.session.timeout.ms)
    now = clock.now + SESSION + 1
    c2.poll(now)
    assert m1 not in g2.members and "c1" in g2.members


def test_describe_and_list_a_migrating_group():
    c, _, clock = make_consumer()
    m1, m2, _ = upgraded(c, clock)
    d = c.consumer_group_describe("g")
    assert d.error == E.none
    kinds = {mid: m.classic is not None for mid, m in d.group.members.items()}
    assert kinds == {m1: True, m2: True, "c1": False}
    assert d.group.members[m1].subscribed_topic_names == ("a",)
    dg = c.describe_group("g")
    assert dg.error == E.group_id_not_found and "not a classic group" in dg.message
    _, listed = c.list_groups(None, None)
    assert [(x.group_type, x.protocol_type, x.state) for x in listed] == [
        ("consumer", "consumer", "Stable")
    ]
    hb(c, clock, "c1", -1)
    _, listed = c.list_groups(None, None)
    assert [(x.group_type, x.state) for x in listed] == [("classic", "PreparingRebalance")]
    assert c.consumer_group_describe("g").error == E.group_id_not_found


def test_cooperative_classic_member_revokes_before_it_gets_more():
    """A classic member that reports what it owns (subscription v1+) keeps it until it rejoins
    without the partitions it must give up (Kafka's CurrentAssignmentBuilder)."""
    c, _, clock = make_consumer()
    (m1, m2), gen = classic_group(c, clock)
    r = hb(c, clock, "c1", 0)
    # m1 rejoins still owning 0, 1, 2 (cooperative): it must revoke one first
    j = join(c, clock, m1, owned={"a": {0, 1, 2}})
    assert j.result.generation_id == gen  # its epoch stays until it revoked
    g = c.groups["g"]
    assert g.members[m1].state == MemberState.UNREVOKED_PARTITIONS
    s = c.sync_group("g", gen, m1, None, {}, clock.now)  # revoking: no REBALANCE_IN_PROGRESS
    assert s.result.error == E.none and len(parts(s.result.assignment)["a"]) == 2
    assert c.heartbeat("g", gen, m1, None, clock.now) == E.rebalance_in_progress
    kept = parts(s.result.assignment)["a"]
    j = join(c, clock, m1, owned={"a": kept})
    assert j.result.generation_id == gen + 1
    assert g.members[m1].state == MemberState.STABLE
    r = hb(c, clock, "c1", r.member_epoch, {})
    assert sum(len(ps) for ps in r.assignment.values()) == 1  # m1's revoked partition


def test_join_group_v3_joins_without_member_id_round_trip():
    c, _, clock = make_consumer()
    hb(c, clock, "c1", 0)
    j = join(c, clock, require_known_member_id=False)
    assert j.result.error == E.none and j.result.member_id in c.groups["g"].members


def test_migration_policy_setting():
    from kafkapy.server.config.broker_config import BrokerConfig, ConfigError

    assert BrokerConfig().group_consumer_migration_policy == "bidirectional"  # Kafka 4.0's
    for value, parsed in (("UPGRADE", "upgrade"), (" disabled ", "disabled")):
        cfg = BrokerConfig.from_properties({"group.consumer.migration.policy": value})
        assert cfg.group_consumer_migration_policy == parsed
    with pytest.raises(ConfigError, match="group.consumer.migration.policy"):
        BrokerConfig.from_properties({"group.consumer.migration.policy": "sideways"})
