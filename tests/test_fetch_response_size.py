"""fetch_response_size (what a fetch's quota is charged) is the size encode_fetch_response
writes, for every version and shape of partition result."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from kafkapy.protocol.fetch_response import (
    PartitionResult,
    TopicResult,
    encode_fetch_response,
    fetch_response_size,
)


def _encoded_size(version: int, topics: list[TopicResult]) -> int:
    parts = encode_fetch_response(version, topics, session_id=7, throttle_ms=3)
    return sum(len(p) if isinstance(p, bytes) else p.length for p in parts)


def _topics() -> list[TopicResult]:
    region = SimpleNamespace(length=300)
    big = SimpleNamespace(length=70_000)
    return [
        TopicResult("t" * 130, uuid.uuid4(), [
            PartitionResult(0),
            PartitionResult(1, aborted=[]),
            PartitionResult(2, aborted=[(5, 10)] * 70, regions=[region, big]),
        ]),
        TopicResult("ü", uuid.uuid4(), [PartitionResult(i, regions=[region]) for i in range(130)]),
        TopicResult("empty", uuid.uuid4(), []),
    ]


def test_size_matches_the_encoding_for_every_version():
    for version in range(4, 19):
        for topics in ([], _topics()):
            assert fetch_response_size(version, topics) == _encoded_size(version, topics), version
