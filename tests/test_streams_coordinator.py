"""The streams group coordinator (KIP-1071) without a broker: configuring a topology against the
topics (task counts, internal topic partition counts, Kafka 4.4's statuses), the sticky task
assignor (balance, stickiness, standbys on other processes) and reconciliation (no active task
given while another member owns it)."""

from __future__ import annotations

import uuid

from kafkapy.coordinator.group import CoordinatorConfig, GroupCoordinator
from kafkapy.coordinator.group.streams import assignor
from kafkapy.coordinator.group.streams.configure import configure_topics
from kafkapy.coordinator.group.streams.model import (
    StreamsMember,
    StreamsTopology,
    Subtopology,
    TasksTuple,
    TopicInfo,
)
from kafkapy.coordinator.group.streams.request import StreamsHeartbeatRequest
from kafkapy.protocol.errors import ErrorCode as E


def word_count(input_topic: str = "in") -> StreamsTopology:
    return StreamsTopology(0, (
        Subtopology("0", (input_topic,), repartition_sink_topics=("app-rep",)),
        Subtopology("1", (), repartition_source_topics=(TopicInfo("app-rep"),),
                    state_changelog_topics=(TopicInfo("app-log"),)),
    ))


def test_configure_decides_internal_partition_counts() -> None:
    c = configure_topics(word_count(), {"in": 3}.get)
    assert c.subtopologies == {"0": 3, "1": 3}
    assert c.status == (3, "Internal topics are missing: app-log, app-rep")
    assert {n: t.partitions for n, t in c.to_create.items()} == {"app-rep": 3, "app-log": 3}
    ready = configure_topics(word_count(), {"in": 3, "app-rep": 3, "app-log": 3}.get)
    assert ready.is_ready and not ready.to_create


def test_configure_statuses() -> None:
    assert configure_topics(word_count(), {}.get).status == (
        1, "Source topics in are missing.")
    wrong = configure_topics(word_count(), {"in": 3, "app-rep": 3, "app-log": 5}.get)
    assert wrong.status == (2, "Existing topic app-log has different number of partitions: "
                               "expected 3, found 5")


def test_assignor_balances_keeps_tasks_and_places_standbys() -> None:
    members = {m: StreamsMember(m, process_id=p) for m, p in
               (("a", "p1"), ("b", "p2"), ("c", "p3"))}
    first = assignor.assign(members, {"0": 6}, {}, 1)
    counts = sorted(len(t.active.get("0", ())) for t in first.values())
    assert counts == [2, 2, 2]
    for mid, t in first.items():
        for p in t.standby.get("0", ()):
            owner = next(m for m, o in first.items() if p in o.active.get("0", ()))
            assert members[owner].process_id != members[mid].process_id
    members["d"] = StreamsMember("d", process_id="p4")
    second = assignor.assign(members, {"0": 6}, first, 0)
    moved = sum(len(first[m].active["0"] - second[m].active.get("0", set())) for m in first)
    assert moved == 1 and sorted(len(t.active.get("0", ())) for t in second.values()) == [
        1, 1, 2, 2]


class Topics:
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = {n: (uuid.uuid4(), c) for n, c in counts.items()}

    def lookup(self, name: str):
        return self.counts.get(name)

    def name_of(self, topic_id):
        return None

    def names(self):
        return list(self.counts)


class Log:
    def append(self, *args, **kwargs) -> None:
        pass


def test_no_active_task_is_given_while_another_member_owns_it() -> None:
    topics = Topics({"in": 2, "app-rep": 2, "app-log": 2})
    c = GroupCoordinator(CoordinatorConfig(num_partitions=1, streams_initial_rebalance_delay_ms=0,
                                           streams_assignment_interval_ms=0), Log(), topics)
    c.add_empty_partitions([0], 0)

    def hb(member: str, epoch: int, now: int, **kw):
        r = StreamsHeartbeatRequest("g", member, epoch, rebalance_timeout_ms=30_000,
                                    process_id=member, **kw)
        return c.streams_group_heartbeat(r, now)

    none: dict[str, set[int]] = {}
    a = hb("a", 0, 0, topology=word_count(), active={}, standby={}, warmup={})
    assert a.error == E.none and a.active == {"0": {0, 1}, "1": {0, 1}}
    b = hb("b", 0, 1, topology=word_count(), active={}, standby={}, warmup={})
    assert b.active == {}  # everything is still a's
    a2 = hb("a", a.member_epoch, 2, active=a.active, standby=none, warmup=none)
    assert a2.member_epoch == a.member_epoch  # revoking first, at its epoch
    kept = a2.active
    b2 = hb("b", b.member_epoch, 3, active=none, standby=none, warmup=none)
    assert b2.active is None  # still not released
    a3 = hb("a", a2.member_epoch, 4, active=kept, standby=none, warmup=none)
    assert a3.member_epoch > a2.member_epoch
    b3 = hb("b", b2.member_epoch, 5, active=none, standby=none, warmup=none)
    assert b3.active is not None
    for s in ("0", "1"):
        mine, theirs = kept.get(s, set()), b3.active.get(s, set())
        assert mine | theirs == {0, 1} and not mine & theirs
    group = c.groups["g"]
    assert group.state == "Stable"
    assert group.target["a"] == TasksTuple(active=kept)
