"""What the group coordinator knows about topics: a narrow view (name -> id and partition count,
id -> name, all names) that the broker implements over its topic registry, and the topics a
subscription regex matches (internal topics never do)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any, Protocol

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


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
    """The non-internal topics a subscription regex matches in full (none if it does not
    compile)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return set()
    return {n for n in topics.names() if n not in INTERNAL_TOPICS and compiled.fullmatch(n)}
