"""The bounds guard run before kio's native reader (kafkapy/protocol/request_guard.py).

kio's reader reserves memory for an array from the count it reads: a compact count of 2**32
aborts the whole process. The guard must refuse every such body, accept exactly what Kafka's
reader accepts, and agree with kio on where every valid body ends.
"""

from __future__ import annotations

import random
import struct

import pytest
from kio.index import load_request_schema
from kio.serial import entity_reader

from compat_tests.fuzz.generate import RequestGenerator, encode_body, served_versions
from kafkapy.protocol.request_guard import UnknownTaggedField, guard_for
from kafkapy.protocol.tagged_fields import MalformedBody

SERVED = served_versions()


@pytest.mark.parametrize(("name", "key", "version"), SERVED, ids=[f"{n}v{v}" for n, _, v in SERVED])
def test_valid_requests_pass_and_end_where_kio_ends(name: str, key: int, version: int):
    rng = random.Random(f"{name}-{version}")
    gen = RequestGenerator(rng)
    schema = load_request_schema(key, version)
    guard = guard_for(schema)
    reader = entity_reader(schema)
    for _ in range(25):
        entity = gen.request(key, version)
        body = encode_body(entity)
        framed = b"head" + body + b"tail"
        assert guard(framed, 4, 4 + len(body)) == 4 + len(body)
        decoded, size = reader(body, 0)
        assert size == len(body)
        # kio reads a zero UUID as None (and drops it as a tagged field): compare round trips
        assert reader(encode_body(decoded), 0)[0] == decoded
        # every strict prefix is refused (the message needs all its bytes)
        for cut in sorted({0, len(body) // 2, len(body) - 1} - {-1, len(body)}):
            with pytest.raises(MalformedBody):
                guard(body[:cut], 0, cut)


# Bodies that made kio's native reader abort the broker ("memory allocation of N bytes failed").
KIO_ABORTS = [
    (3, 9, b"\xff\xff\xff\xff\x0f"),  # Metadata v9: topics count 2**32 - 2
    (3, 12, b"\x80\x80\x80\x8d\x12" + b"\x00" * 8),  # Metadata v12: count 4859101183
    (2, 7, b"\x00" * 5 + b"\x02\x02t" + b"\xff\xff\xff\xff\x0f"),  # ListOffsets v7 partitions
]


@pytest.mark.parametrize(("key", "version", "body"), KIO_ABORTS)
def test_counts_above_the_bytes_left_are_refused(key: int, version: int, body: bytes):
    with pytest.raises(MalformedBody, match="array .* items with only"):
        guard_for(load_request_schema(key, version))(body, 0, len(body))


def test_legacy_array_count_above_the_bytes_left_is_refused():
    # ListOffsets v1: replica_id, topics (int32 count): 2**31 - 1 topics in 4 bytes
    body = struct.pack(">ii", -1, 2**31 - 1) + b"\x00" * 4
    with pytest.raises(MalformedBody, match="array topics of 2147483647 items"):
        guard_for(load_request_schema(2, 1))(body, 0, len(body))


def test_null_where_the_schema_forbids_it_is_refused_as_kafka_does():
    # ListOffsets v1 topics is not nullable; kio would hand the handler None
    body = struct.pack(">ii", -1, -1)
    with pytest.raises(MalformedBody, match="non-nullable field topics was serialized as null"):
        guard_for(load_request_schema(2, 1))(body, 0, len(body))
    # Metadata v1 topics is nullable (all topics)
    body = struct.pack(">i", -1)
    assert guard_for(load_request_schema(3, 1))(body, 0, len(body)) == 4


def test_strings_longer_than_kafkas_limit_are_refused():
    # FindCoordinator v3 (flexible): key as a compact string of 40,000 bytes
    raw = b"k" * 40_000
    n = len(raw) + 1
    varint = bytes([(n & 0x7F) | 0x80, ((n >> 7) & 0x7F) | 0x80, n >> 14])
    body = varint + raw + b"\x00\x00"
    with pytest.raises(MalformedBody, match="string field key had invalid length 40000"):
        guard_for(load_request_schema(10, 3))(body, 0, len(body))


def test_unknown_tag_is_signalled_and_varints_are_bounded():
    guard = guard_for(load_request_schema(12, 4))  # Heartbeat v4
    base = b"\x02g" + struct.pack(">i", 1) + b"\x02m" + b"\x00"
    with pytest.raises(UnknownTaggedField):
        guard(base + b"\x01\x07\x01x", 0, len(base) + 4)
    for tags in (
        b"\x01\x80\x80\x80\x80\x80\x01\x00",
        b"\xff\xff\xff\xff\x0f\x00",
        b"\x01\x07\x09x",
    ):
        with pytest.raises(MalformedBody):
            guard(base + tags, 0, len(base) + len(tags))


@pytest.mark.parametrize(("key", "version"), [(23, 3), (2, 7), (1, 12), (3, 12)])
def test_responses_a_follower_reads_pass_the_guard(key: int, version: int):
    """The replica fetcher guards the responses it decodes with kio (peer_connection.py)."""
    from kio.index import load_response_schema

    gen = RequestGenerator(random.Random(key), min_items=1)
    schema = load_response_schema(key, version)
    for _ in range(20):
        body = encode_body(gen.entity(schema))
        assert guard_for(schema)(body, 0, len(body)) == len(body)
        assert entity_reader(schema)(body, 0)[1] == len(body)
