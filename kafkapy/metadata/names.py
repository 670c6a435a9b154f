"""Kafka's topic name rules: legal characters and length, and '.'/'_' collisions.

Metric names replace '.' with '_', so Kafka refuses a topic whose name equals an existing one after
that substitution ("a.b" vs "a_b"). Internal topics use the double-underscore prefix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_STATE_TOPIC})


def validate_topic_name(name: str) -> str | None:
    """The reason ``name`` is not a legal topic name (Apache Kafka 4.4's wording, as its broker
    answers CreateTopics), or None when it is."""
    if not name:
        return "Topic name is invalid: the empty string is not allowed"
    if name in (".", ".."):
        return f"Topic name is invalid: '{name}' is not allowed"
    if len(name) > MAX_NAME_LENGTH:
        return (
            f"Topic name is invalid: the length of '{name}' is longer than the max allowed "
            f"length {MAX_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        return (
            f"Topic name is invalid: '{name}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return None


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


def has_collision_chars(name: str) -> bool:
    """True when ``name`` contains '.' or '_' (it could collide with another name)."""
    return "." in name or "_" in name


def collides_with(name: str, existing: Iterable[str]) -> str | None:
    """Kafka's error message when ``name`` collides with (but is not equal to) existing topics."""
    key = unify_collision_chars(name)
    colliding = sorted(t for t in existing if t != name and unify_collision_chars(t) == key)
    if colliding:
        return f"Topic '{name}' collides with existing topics: {', '.join(colliding)}"
    return None


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS
