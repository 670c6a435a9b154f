"""Encoded Metadata topic entries, cached until the topic's metadata changes.

A Metadata response for many partitions is the same bytes request after request: the partition
array of a topic changes only when its leader, leader epoch, ISR or replicas change (the topic
registry then replaces the topic's ``TopicInfo``: views are never modified in place) or when the
set of live brokers changes (offline replicas). So each topic's encoded head — error code, name,
id, internal flag and partition array (protocol/metadata_response.py) — is kept per request
version, together with the ``TopicInfo`` object and the live broker ids it was encoded from, and
reused while both are the same. What may differ per request (authorized operations, filtering
of topics the principal may not describe) stays outside the cache.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from kafkapy.metadata.names import INTERNAL_TOPICS
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.metadata_response import PartitionMetadata, encode_topic_head


def partition_metadata(info: Any, live: Collection[int]) -> list[PartitionMetadata]:
    """A topic's partitions as Metadata describes them, in partition order."""
    out = []
    states = info.states
    for p in sorted(info.partitions):
        replicas = info.partitions[p]
        state = states.get(p)
        leader = state.leader if state else -1
        out.append(
            PartitionMetadata(
                ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                p,
                leader,
                state.leader_epoch if state else -1,
                replicas,
                state.isr if state else (),
                [b for b in replicas if b not in live],
            )
        )
    return out


class TopicBlockCache:
    """Encoded topic heads by (topic name, request version).

    ``current`` maps topic names to the registry's current views: when the cache has grown past
    a few entries per topic, the entries of deleted or replaced views are dropped.
    """

    def __init__(self, current: Mapping[str, Any], slack: int = 1024) -> None:
        self._entries: dict[tuple[str, int], tuple[Any, frozenset[int], bytes]] = {}
        self._current = current
        self._slack = slack

    def head(self, version: int, info: Any, live: frozenset[int]) -> bytes:
        """The encoded head of ``info`` for ``version``, given the live broker ids."""
        key = (info.name, version)
        got = self._entries.get(key)
        if got is not None and got[0] is info and got[1] == live:
            return got[2]
        block = encode_topic_head(
            version,
            ErrorCode.none,
            info.name,
            info.topic_id,
            info.name in INTERNAL_TOPICS,
            partition_metadata(info, live),
        )
        if len(self._entries) >= 4 * len(self._current) + self._slack:
            self._prune()
        self._entries[key] = (info, live, block)
        return block

    def _prune(self) -> None:
        current = self._current
        self._entries = {
            k: v for k, v in self._entries.items() if current.get(k[0]) is v[0]
        }

    def __len__(self) -> int:
        return len(self._entries)
