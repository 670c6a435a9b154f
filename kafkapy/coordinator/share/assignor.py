"""The share groups' server-side assignor ``simple`` (Kafka's SimpleAssignor for share groups).

Unlike a consumer group's assignment, a share group's may give one partition to several members:
they share its records, each record being acquired by one member at a time. Every member gets
the partitions of the topics it subscribes to spread evenly: with fewer members than partitions,
each partition goes to one member (round robin over the members in member-id order); with more
members than partitions, each member gets one partition, the partitions taken in turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

Assignment = dict[uuid.UUID, set[int]]


def assign(
    subscriptions: Mapping[str, frozenset[str]],
    topics: Mapping[str, tuple[uuid.UUID, int]],
) -> dict[str, Assignment]:
    """member id -> its partitions, for members subscribed to ``subscriptions[member]`` (topic
    names) and ``topics`` (name -> (id, partition count)) the existing subscribed topics."""
    out: dict[str, Assignment] = {m: {} for m in subscriptions}
    for name in sorted(topics):
        topic_id, count = topics[name]
        members = sorted(m for m, subs in subscriptions.items() if name in subs)
        if not members or count <= 0:
            continue
        if len(members) <= count:
            for p in range(count):
                out[members[p % len(members)]].setdefault(topic_id, set()).add(p)
        else:
            for i, m in enumerate(members):
                out[m].setdefault(topic_id, set()).add(i % count)
    return out
