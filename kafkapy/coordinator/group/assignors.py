"""Server-side assignors of the consumer protocol (KIP-848): "uniform" and "range".

An assignor maps a group's members to partitions from a ``GroupSpec``: every member's subscribed
topic ids and its current target assignment, and every subscribed topic's partition count. It
returns the new target assignment, ``{member id: {topic id: set of partitions}}``, with every
partition of a subscribed topic given to exactly one member subscribed to that topic (none for a
topic nobody subscribes to). Assignors are pure functions of the spec: deterministic, no clock.

- ``uniform`` (Kafka's default): balanced and sticky. Members keep what they already have as long
  as it stays within their fair share, and the rest moves to the least loaded eligible member.
  With identical subscriptions the partition counts differ by at most one; with different
  subscriptions a partition moves from a member to another eligible one while that narrows the
  gap by two or more.
- ``range``: per topic, the subscribed members sorted by (instance id or member id) get contiguous
  ranges; the first ``partitions % members`` get one extra. Members with the same subscription get
  the same partition numbers on co-partitioned topics (the point of range).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

Assignment = dict[uuid.UUID, set[int]]


@dataclass(slots=True)
class MemberSpec:
    subscribed: frozenset[uuid.UUID]
    instance_id: str | None = None
    current: Mapping[uuid.UUID, set[int]] = field(default_factory=dict)

    def sort_key(self, member_id: str) -> tuple[str, str]:
        return (self.instance_id or member_id, member_id)


@dataclass(slots=True)
class GroupSpec:
    members: dict[str, MemberSpec]
    partitions: dict[uuid.UUID, int]  # subscribed topic id -> partition count


class Assignor(Protocol):
    name: str

    def assign(self, spec: GroupSpec) -> dict[str, Assignment]: ...


def _empty(spec: GroupSpec) -> dict[str, Assignment]:
    return {mid: {} for mid in spec.members}


class RangeAssignor:
    name = "range"

    def assign(self, spec: GroupSpec) -> dict[str, Assignment]:
        out = _empty(spec)
        for tid, count in sorted(spec.partitions.items(), key=lambda kv: str(kv[0])):
            members = sorted(
                (mid for mid, m in spec.members.items() if tid in m.subscribed),
                key=lambda mid: spec.members[mid].sort_key(mid),
            )
            if not members or count <= 0:
                continue
            base, extra = divmod(count, len(members))
            start = 0
            for i, mid in enumerate(members):
                n = base + (1 if i < extra else 0)
                if n:
                    out[mid][tid] = set(range(start, start + n))
                start += n
        return out


class UniformAssignor:
    name = "uniform"

    def assign(self, spec: GroupSpec) -> dict[str, Assignment]:
        members = spec.members
        if not members:
            return {}
        order = sorted(members, key=lambda mid: members[mid].sort_key(mid))
        eligible: dict[tuple[uuid.UUID, int], list[str]] = {}
        for tid, count in spec.partitions.items():
            subs = [mid for mid in order if tid in members[mid].subscribed]
            if subs:
                for p in range(count):
                    eligible[(tid, p)] = subs
        owned: dict[str, set[tuple[uuid.UUID, int]]] = {mid: set() for mid in order}
        homogeneous = len({members[mid].subscribed for mid in order}) == 1
        quota: dict[str, int] = {}
        if homogeneous:
            base, extra = divmod(len(eligible), len(order))
            # members already holding more keep the extra slots, so fewer partitions move
            by_size = sorted(
                order,
                key=lambda mid: -sum(len(ps) for ps in members[mid].current.values()),
            )
            for i, mid in enumerate(by_size):
                quota[mid] = base + (1 if i < extra else 0)
        else:
            # heterogeneous: a fair share among the members each partition could go to
            share: dict[str, float] = dict.fromkeys(order, 0.0)
            for subs in eligible.values():
                for mid in subs:
                    share[mid] += 1 / len(subs)
            quota = {mid: int(share[mid]) + 1 for mid in order}
        # 1. stickiness: keep current partitions that are still valid, up to the quota
        taken: set[tuple[uuid.UUID, int]] = set()
        for mid in order:
            for tid, parts in sorted(members[mid].current.items(), key=lambda kv: str(kv[0])):
                for p in sorted(parts):
                    tp = (tid, p)
                    if tp in taken or tp not in eligible or mid not in eligible[tp]:
                        continue
                    if len(owned[mid]) >= quota[mid]:
                        break
                    owned[mid].add(tp)
                    taken.add(tp)
        # 2. the rest to the least loaded eligible member (ties: fewest choices, then order)
        rank = {mid: i for i, mid in enumerate(order)}
        free = sorted(
            (tp for tp in eligible if tp not in taken),
            key=lambda tp: (len(eligible[tp]), str(tp[0]), tp[1]),
        )
        for tp in free:
            mid = min(
                eligible[tp], key=lambda m: (len(owned[m]) >= quota[m], len(owned[m]), rank[m])
            )
            owned[mid].add(tp)
        # 3. heterogeneous subscriptions: move while it narrows a gap by two or more
        if not homogeneous:
            moved = True
            while moved:
                moved = False
                for mid in sorted(order, key=lambda m: -len(owned[m])):
                    for tp in sorted(owned[mid], key=lambda tp: (str(tp[0]), tp[1])):
                        target = min(eligible[tp], key=lambda m: (len(owned[m]), rank[m]))
                        if len(owned[mid]) - len(owned[target]) >= 2:
                            owned[mid].discard(tp)
                            owned[target].add(tp)
                            moved = True
                            break
                    if moved:
                        break
        out = _empty(spec)
        for mid, tps in owned.items():
            for tid, p in tps:
                out[mid].setdefault(tid, set()).add(p)
        return out


ASSIGNORS: dict[str, Assignor] = {a.name: a for a in (UniformAssignor(), RangeAssignor())}
