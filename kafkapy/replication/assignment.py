"""Replica placement for new topics and partitions, as Kafka's AdminUtils.assignReplicasToBrokers.

Rack-unaware: the first replica of partition p goes to broker (p + start) % n; followers follow
at a shift that grows by one every n partitions, so leaders and followers spread evenly.
Rack-aware (every broker has broker.rack): the brokers are first arranged alternating between
racks, then each replica goes to the next broker on a rack (and broker) not yet holding one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


class AssignmentError(ValueError):
    """Replication factor above the broker count, or no brokers."""


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated(brokers: Mapping[int, str]) -> list[int]:
    """Brokers ordered rack by rack in turn: racks sorted, brokers sorted within a rack."""
    by_rack: dict[str, list[int]] = {}
    for b, rack in sorted(brokers.items()):
        by_rack.setdefault(rack, []).append(b)
    racks = sorted(by_rack)
    out: list[int] = []
    i = 0
    while len(out) < len(brokers):
        for r in racks:
            if i < len(by_rack[r]):
                out.append(by_rack[r][i])
        i += 1
    return out


def assign_replicas(
    brokers: Mapping[int, str | None],
    num_partitions: int,
    replication_factor: int,
    *,
    start_partition: int = 0,
    start_index: int = -1,
    replica_shift: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Partition -> replicas for ``num_partitions`` partitions numbered from
    ``start_partition``. ``brokers`` maps broker id to rack (None when unset)."""
    n = len(brokers)
    if n == 0:
        raise AssignmentError("no live brokers")
    if replication_factor <= 0:
        raise AssignmentError("Replication factor must be larger than 0.")
    if replication_factor > n:
        raise AssignmentError(
            f"Replication factor: {replication_factor} larger than available brokers: {n}."
        )
    rng = rng or random.Random()
    racks = {b: r for b, r in brokers.items() if r is not None}
    rack_aware = len(racks) == n and len(set(racks.values())) > 1
    arranged = rack_alternated(racks) if rack_aware else sorted(brokers)
    num_racks = len(set(racks.values())) if rack_aware else 1
    start = start_index if start_index >= 0 else rng.randrange(n)
    shift = replica_shift if replica_shift >= 0 else rng.randrange(n)
    out: dict[int, list[int]] = {}
    p = max(start_partition, 0)
    for _ in range(num_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        leader = arranged[first]
        replicas = [leader]
        if rack_aware:
            used_racks = {racks[leader]}
            used = {leader}
            k = 0
            for _ in range(replication_factor - 1):
                while True:
                    b = arranged[_replica_index(first, shift * num_racks, k, n)]
                    k += 1
                    rack_ok = racks[b] not in used_racks or len(used_racks) == num_racks
                    broker_ok = b not in used or len(used) == n
                    if rack_ok and broker_ok:
                        replicas.append(b)
                        used_racks.add(racks[b])
                        used.add(b)
                        break
        else:
            for j in range(replication_factor - 1):
                replicas.append(arranged[_replica_index(first, shift, j, n)])
        out[p] = replicas
        p += 1
    return out
