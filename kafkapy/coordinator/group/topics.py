"""What the group coordinator knows about topics: a narrow view (name -> id and partition count,
id -> name, all names) that the broker implements over its topic registry, and the topics a
subscription regex matches: every topic whose whole name it matches, internal topics included,
as Kafka's group coordinator resolves a KIP-848 SubscribedTopicRegex over all the topics of its
metadata image (GroupMetadataManager.refreshRegularExpressions, no internal-topic filter);
leaving internal topics out is for the clients, as the classic consumer's client-side regex does
(exclude.internal.topics)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any, Protocol


class TopicsView(Protocol):
    """What the coordinator needs to know about topics: name -> (id, partition count)."""

    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None: ...

    def name_of(self, topic_id: uuid.UUID) -> str | None: ...

    def names(self) -> Iterable[str]: ...


class NoTopics:
    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None:
        return None

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        return None

    def names(self) -> Iterable[str]:
        return ()


class RegistryTopics:
    """A ``TopicsView`` over an object with ``by_name``/``by_id`` maps of topic infos (the broker's
    topic registry)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def lookup(self, name: str) -> tuple[uuid.UUID, int] | None:
        info = self.registry.by_name.get(name)
        return None if info is None else (info.topic_id, len(info.partitions))

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        info = self.registry.by_id.get(topic_id)
        return None if info is None else info.name

    def names(self) -> Iterable[str]:
        return list(self.registry.by_name)


def topics_matching(topics: TopicsView, pattern: str) -> set[str]:
    """The topics a subscription regex matches in full, internal ones too (none if it does not
    compile)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return set()
    return {n for n in topics.names() if compiled.fullmatch(n)}
