"""__consumer_offsets records: the spec, the byte layout, Java's String.hashCode partitioning."""

from __future__ import annotations

import json
import struct

import pytest

from kafkapy.coordinator.group import records as rec
from kafkapy.coordinator.group.partitioning import java_string_hash, kafka_abs, partition_for

SPEC = json.loads(rec.SPEC_PATH.read_text())
TYPES = {"int8", "int16", "int32", "int64", "string", "bytes", "uuid", "[]int32", "[]string"}


def test_spec_field_types_are_known():
    for k in SPEC["keys"].values():
        assert {f["type"] for f in k["fields"]} <= TYPES
        assert k["value"] in SPEC["values"]
    entries = [*SPEC["values"].values(), *SPEC["consumer_protocol"].values()]
    for v in entries:
        structs = v.get("structs", {})
        for f in v["fields"]:
            t = f["type"]
            if "tagged" in f:  # a tagged field may be a single struct
                assert isinstance(f["tagged"], int)
                assert t in TYPES or t in structs or (t.startswith("[]") and t[2:] in structs)
                continue
            assert t in TYPES or (t.startswith("[]") and t[2:] in structs)
        for fields in structs.values():
            for f in fields:
                t = f["type"]
                assert t in TYPES or (t.startswith("[]") and t[2:] in structs)


def test_member_metadata_tagged_classic_metadata_round_trip():
    base = {
        "instance_id": None,
        "rack_id": None,
        "client_id": "c",
        "client_host": "/h",
        "subscribed_topic_names": ["t"],
        "subscribed_topic_regex": None,
        "rebalance_timeout_ms": 5,
        "server_assignor": None,
    }
    plain = rec.consumer_value(rec.MEMBER_METADATA, base)
    assert plain.endswith(b"\x00")  # no tagged fields
    assert rec.decode_consumer_value(rec.MEMBER_METADATA, plain)["classic_member_metadata"] is None
    classic = {
        "session_timeout_ms": 45000,
        "supported_protocols": [{"name": "range", "metadata": b"md"}],
    }
    data = rec.consumer_value(rec.MEMBER_METADATA, {**base, "classic_member_metadata": classic})
    # one tagged field: tag 0, size, then Kafka's nullable-struct marker 1 and the struct
    body = (
        struct.pack(">i", 45000) + bytes([2, 6]) + b"range" + bytes([3]) + b"md" + b"\x00" + b"\x00"
    )
    tagged = bytes([1, 0, len(body) + 1, 1]) + body
    assert data == plain[:-1] + tagged
    assert (
        rec.decode_consumer_value(rec.MEMBER_METADATA, data)["classic_member_metadata"] == classic
    )
    # an unknown tag next to it is skipped
    other = plain[:-1] + bytes([2, 0, len(body) + 1, 1]) + body + bytes([7, 1, 9])
    assert (
        rec.decode_consumer_value(rec.MEMBER_METADATA, other)["classic_member_metadata"] == classic
    )


def test_embedded_consumer_protocol():
    from kafkapy.coordinator.group import embedded

    # v0 (kafka-python): topics and user data only
    v0 = struct.pack(">hi", 0, 1) + struct.pack(">h", 1) + b"a" + struct.pack(">i", -1)
    assert embedded.parse_subscription(v0) == embedded.Subscription(0, ("a",))
    # v3 (librdkafka, Java): owned partitions, generation, rack
    v3 = rec.encode_embedded(
        "Subscription",
        {
            "topics": ["a"],
            "user_data": b"u",
            "owned_partitions": [{"topic": "a", "partitions": [2, 0]}],
            "generation_id": 4,
            "rack_id": "r1",
        },
        3,
    )
    sub = embedded.parse_subscription(v3)
    assert (sub.owned_partitions, sub.generation_id, sub.rack_id) == ({"a": {0, 2}}, 4, "r1")
    # a newer version reads as the highest known one (extra bytes ignored)
    v9 = struct.pack(">h", 9) + v3[2:] + b"more"
    assert embedded.parse_subscription(v9).topics == ("a",)
    with pytest.raises(embedded.EmbeddedProtocolError):
        embedded.parse_subscription(b"m")
    data = embedded.encode_assignment({"b": {1}, "a": {3, 0}}, 1)
    assert data == (
        struct.pack(">hi", 1, 2)
        + struct.pack(">h", 1) + b"a" + struct.pack(">iii", 2, 0, 3)
        + struct.pack(">h", 1) + b"b" + struct.pack(">ii", 1, 1)
        + struct.pack(">i", -1)
    )  # fmt: skip
    assert embedded.parse_assignment(data) == ({"a": {0, 3}, "b": {1}}, None)
    assert embedded.encode_assignment({}, 7)[:2] == struct.pack(">h", 3)  # clamped


def test_offset_key_bytes():
    # int16 version 1, "g", "t", int32 3
    assert rec.offset_key("g", "t", 3) == (
        struct.pack(">h", 1)
        + struct.pack(">h", 1)
        + b"g"
        + struct.pack(">h", 1)
        + b"t"
        + struct.pack(">i", 3)
    )
    assert rec.decode_key(rec.offset_key("g", "t", 3)) == rec.OffsetKey("g", "t", 3)


def test_group_key_bytes():
    assert rec.group_key("grp") == struct.pack(">hh", 2, 3) + b"grp"
    assert rec.decode_key(rec.group_key("grp")) == rec.GroupKey("grp")


def test_offset_value_v3_bytes_and_v1_with_expiry():
    v = rec.OffsetValue(
        offset=10, leader_epoch=4, metadata="m", commit_timestamp=77, expire_timestamp=-1
    )
    data = rec.offset_value(v)
    assert data == struct.pack(">hqih", 3, 10, 4, 1) + b"m" + struct.pack(">q", 77)
    assert rec.decode_offset_value(data) == v
    v1 = rec.OffsetValue(10, -1, "", 77, 99)
    data = rec.offset_value(v1)
    assert data == struct.pack(">hqh", 1, 10, 0) + struct.pack(">qq", 77, 99)
    assert rec.decode_offset_value(data) == v1


def test_offset_value_old_and_flexible_versions_decode():
    v0 = struct.pack(">hqh", 0, 5, 2) + b"hi" + struct.pack(">q", 1)
    assert rec.decode_offset_value(v0) == rec.OffsetValue(5, -1, "hi", 1, -1)
    # v4 (flexible): compact string, tagged fields (one unknown tag, skipped)
    v4 = struct.pack(">hqi", 4, 5, 3) + bytes([3]) + b"hi" + struct.pack(">q", 1)
    v4 += bytes([1, 7, 2]) + b"zz"
    assert rec.decode_offset_value(v4) == rec.OffsetValue(5, 3, "hi", 1, -1)


def test_group_value_round_trip_v3():
    v = rec.GroupValue(
        protocol_type="consumer",
        generation=3,
        protocol="range",
        leader="m1",
        current_state_timestamp=1234,
        members=[
            rec.MemberRecord("m1", "i1", "c", "/127.0.0.1", 30000, 10000, b"sub", b"asg"),
            rec.MemberRecord("m2", None, "c", "/127.0.0.1", 30000, 10000, b"", b""),
        ],
    )
    data = rec.group_value(v)
    assert data[:2] == struct.pack(">h", 3)
    assert rec.decode_group_value(data) == v
    empty = rec.GroupValue("consumer", 4, None, None, 5, [])
    assert rec.decode_group_value(rec.group_value(empty)) == empty


def test_unknown_key_versions_are_skipped_and_garbage_raises():
    assert rec.decode_key(struct.pack(">h", 11) + b"whatever") is None  # a share group key
    with pytest.raises(rec.RecordFormatError):
        rec.decode_offset_value(b"\x00")
    with pytest.raises(rec.RecordFormatError):
        rec.decode_offset_value(struct.pack(">h", 9) + b"\x00" * 20)


def test_consumer_subscription_topics():
    sub = struct.pack(">hi", 0, 2) + struct.pack(">h", 1) + b"a" + struct.pack(">h", 2) + b"bb"
    assert rec.subscribed_topics(sub) == {"a", "bb"}
    assert rec.subscribed_topics(b"junk") is None


@pytest.mark.parametrize(
    ("s", "h"),
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("console-consumer-12345", None),
        ("polygenelubricants", -2147483648),  # Integer.MIN_VALUE
        ("\U0001f600", None),  # surrogate pair: two UTF-16 code units
    ],
)
def test_java_string_hash(s, h):
    expected = 0
    for unit in struct.unpack(f">{len(s.encode('utf-16-be')) // 2}H", s.encode("utf-16-be")):
        expected = (expected * 31 + unit) % 2**32
    if expected >= 2**31:
        expected -= 2**32
    assert java_string_hash(s) == expected
    if h is not None:
        assert java_string_hash(s) == h


def test_partition_for_uses_kafka_abs():
    assert kafka_abs(-(2**31)) == 0
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("a", 50) == 97 % 50
    assert partition_for("hello", 7) == 99162322 % 7
    neg = next(s for s in (f"consumer-group-{i}" for i in range(1000)) if java_string_hash(s) < 0)
    assert partition_for(neg, 50) == abs(java_string_hash(neg)) % 50


def test_embedded_counts_above_the_bytes_left_are_refused():
    """Subscriptions and assignments come from clients: a count is checked before use."""
    subscription = struct.pack(">hi", 1, 2**31 - 1) + b"\x00\x01t"
    with pytest.raises(rec.RecordFormatError, match="array topics of 2147483647 items"):
        rec.decode_embedded("Subscription", subscription)


@pytest.mark.parametrize("expire", [-1, 0, 1_700_000_999_000])
def test_offset_commit_fast_paths_agree_with_the_spec(expire):
    for group, topic, partition, offset, epoch, metadata in (
        ("g", "t", 0, 0, -1, ""),
        ("bench-group-1", "orders", 2**31 - 1, 2**62, 17, "métadonnées ✓"),
        ("", "x" * 249, 5, -1, 0, "m" * 300),
    ):
        assert rec.offset_key(group, topic, partition) == rec.offset_key_from_spec(
            group, topic, partition
        )
        v = rec.OffsetValue(offset, epoch, metadata, 1_700_000_000_000, expire)
        assert rec.offset_value(v) == rec.offset_value_from_spec(v)
