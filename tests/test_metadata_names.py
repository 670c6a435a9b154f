"""Topic name rules, with Apache Kafka 4.4's messages."""

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
        ("", "Topic name is invalid: the empty string is not allowed"),
        (".", "Topic name is invalid: '.' is not allowed"),
        ("..", "Topic name is invalid: '..' is not allowed"),
        ("x" * 250, "is longer than the max allowed length 249"),
        ("a b", "'a b' contains one or more characters other than ASCII alphanumerics"),
        ("a/b", "contains one or more characters other than ASCII alphanumerics"),
        ("é", "contains one or more characters other than ASCII alphanumerics"),
        ("a\n", "contains one or more characters other than ASCII alphanumerics"),
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
