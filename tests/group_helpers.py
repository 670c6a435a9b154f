"""Shared by the sans-io group coordinator tests: an in-memory offsets log, a fake clock that
fires timers in order, coordinators (with or without a topics view), JoinGroup requests and the
classic join/sync dance, ConsumerGroupHeartbeat requests, and reloading from the log."""

from __future__ import annotations

import uuid
from typing import Any

from kafkapy.coordinator.group import GroupCoordinator
from kafkapy.coordinator.group.coordinator import CoordinatorConfig, JoinRequest
from kafkapy.coordinator.group.modern import HeartbeatRequest
from kafkapy.protocol.errors import ErrorCode as E

# -- classic groups --------------------------------------------------------------------------------

SESSION = 10_000
REBALANCE = 30_000


class MemLog:
    def __init__(self) -> None:
        self.records: dict[int, list[tuple[bytes, bytes | None]]] = {}
        self.fail = False

    def append(self, partition, records, now_ms):
        if self.fail:
            raise OSError("disk full")
        self.records.setdefault(partition, []).extend(records)


class Clock:
    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.now = 1_000_000
        self.c = coordinator

    def advance(self, ms: int) -> None:
        """Move time forward, firing timers in deadline order as the server task would."""
        target = self.now + ms
        while True:
            d = self.c.next_deadline()
            if d is None or d > target:
                break
            self.now = max(self.now, d)
            self.c.poll(self.now)
        self.now = target
        self.c.poll(self.now)


def make(topics: Any = None, **overrides: Any) -> tuple[GroupCoordinator, MemLog, Clock]:
    """A coordinator leading 5 empty partitions of __consumer_offsets, no initial rebalance
    delay, over an in-memory log; ``topics`` is its topics view (consumer groups need one)."""
    settings = dict(num_partitions=5, initial_rebalance_delay_ms=0, min_session_timeout_ms=1000)
    cfg = CoordinatorConfig(**{**settings, **overrides})
    mlog = MemLog()
    c = GroupCoordinator(cfg, mlog, topics)
    c.add_empty_partitions(range(5), 0)
    return c, mlog, Clock(c)


def req(member_id="", group="g", protocols=(("range", b"m"),), instance=None, **kw):
    return JoinRequest(
        group_id=group,
        member_id=member_id,
        protocol_type=kw.pop("protocol_type", "consumer"),
        protocols=list(protocols),
        session_timeout_ms=kw.pop("session", SESSION),
        rebalance_timeout_ms=kw.pop("rebalance", REBALANCE),
        group_instance_id=instance,
        client_id="client",
        client_host="/127.0.0.1",
        **kw,
    )


def join_new(c, clock, group="g", **kw):
    """KIP-394 dance: MEMBER_ID_REQUIRED, then join with the id; returns the pending answer."""
    first = c.join_group(req(group=group, **kw), clock.now)
    assert first.done and first.result.error == E.member_id_required
    return c.join_group(req(first.result.member_id, group=group, **kw), clock.now)


def stable_group(c, clock, n=1, group="g"):
    answers = [join_new(c, clock, group) for _ in range(n)]
    clock.advance(0)
    assert all(a.done and a.result.error == E.none for a in answers)
    leader = next(a.result for a in answers if a.result.members)
    gen = leader.generation_id
    assignment = {a.result.member_id: f"a-{a.result.member_id}".encode() for a in answers}
    syncs = []
    for a in answers:
        r = a.result
        syncs.append(
            c.sync_group(group, gen, r.member_id, None, assignment if r.members else {}, clock.now)
        )
    assert all(s.done and s.result.error == E.none for s in syncs)
    return [a.result.member_id for a in answers], gen


# -- consumer groups (KIP-848) ---------------------------------------------------------------------

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)
CONSUMER_SESSION = 45_000


class Topics:
    def __init__(self, **topics: tuple[uuid.UUID, int]) -> None:
        self.topics = dict(topics)

    def lookup(self, name):
        return self.topics.get(name)

    def name_of(self, topic_id):
        return next((n for n, (t, _) in self.topics.items() if t == topic_id), None)

    def names(self):
        return list(self.topics)


def make_consumer(topics: Any = None, **overrides: Any) -> tuple[GroupCoordinator, MemLog, Clock]:
    """:func:`make` with a topics view (default: topic a with 6 partitions, b with 3)."""
    return make(topics or Topics(a=(T1, 6), b=(T2, 3)), **overrides)


def hb(c, clock, member, epoch, owned=None, *, names=("a",), group="g", **kw):
    if owned is None and epoch == 0:
        owned = {}
    r = HeartbeatRequest(
        group_id=group,
        member_id=member,
        member_epoch=epoch,
        rebalance_timeout_ms=kw.pop("rebalance", 60_000 if epoch == 0 else -1),
        subscribed_topic_names=names if epoch == 0 or kw.pop("send_names", False) else None,
        owned=owned,
        client_id="c",
        client_host="/127.0.0.1",
        **kw,
    )
    return c.consumer_group_heartbeat(r, clock.now)


def reload(c: GroupCoordinator, mlog: MemLog, clock: Clock) -> GroupCoordinator:
    """A new coordinator loading group g's partition from ``c``'s log."""
    p = c.partition_for("g")
    c2 = GroupCoordinator(c.config, MemLog(), c.topics)
    c2.begin_loading([p])
    c2.load_partition(p, mlog.records[p], clock.now)
    return c2
