"""Topic name rules, with Kafka's messages."""

from __future__ import annotations

import pytest

from kafkapy.metadata.cluster import collides_with, validate_topic_name
from kafkapy.metadata.names import has_collision_chars


@pytest.mark.parametrize("name", ["a", "A-b_c.d", "x" * 249, "__consumer_offsets", "0"])
def test_legal(name: str) -> None:
    assert validate_topic_name(name) is None


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "can't be empty"),
        (".", 'cannot be "." or ".."'),
        ("..", 'cannot be "." or ".."'),
        ("x" * 250, "can't be longer than 249 characters"),
        ("a b", "contains a character other than ASCII alphanumerics"),
        ("a/b", "contains a character other than ASCII alphanumerics"),
        ("é", "contains a character other than ASCII alphanumerics"),
        ("a\n", "contains a character other than ASCII alphanumerics"),
    ],
)
def test_illegal(name: str, fragment: str) -> None:
    reason = validate_topic_name(name)
    assert reason is not None and fragment in reason


def test_collisions() -> None:
    assert collides_with("a.b", ["a_b", "other"]) == (
        "Topic 'a.b' collides with existing topics: a_b"
    )
    assert collides_with("a_b", ["a.b"]) is not None
    assert collides_with("a.b", ["a.b"]) is None  # same name is "exists", not a collision
    assert collides_with("ab", ["a_b"]) is None
    assert has_collision_chars("a.b") and not has_collision_chars("ab")
