"""The follower's hand-written Fetch v12 codec agrees with kio and with the broker's writer."""

from __future__ import annotations

import datetime
import io
import struct
import uuid
from dataclasses import dataclass

import pytest
from kio.schema.fetch.v12 import request as fetch_req
from kio.serial import entity_writer

from kafkapy.protocol.fetch_response import PartitionResult, TopicResult, encode_fetch_response
from kafkapy.protocol.replica_fetch import (
    FetchPartitionRequest,
    decode_replica_fetch_response,
    encode_replica_fetch,
)


def test_request_matches_kio():
    ours = encode_replica_fetch(
        2,
        500,
        1,
        10485760,
        [
            ("orders", [FetchPartitionRequest(0, 3, 1234, 17, 1048576)]),
            ("t", [FetchPartitionRequest(1, 0, 0, 0, 65536), FetchPartitionRequest(4, 9, 5, 2, 7)]),
        ],
    )

    def part(p, epoch, offset, start, max_bytes):
        return fetch_req.FetchPartition(
            partition=p,
            current_leader_epoch=epoch,
            fetch_offset=offset,
            last_fetched_epoch=-1,
            log_start_offset=start,
            partition_max_bytes=max_bytes,
        )

    entity = fetch_req.FetchRequest(
        cluster_id=None,
        replica_id=2,
        max_wait=datetime.timedelta(milliseconds=500),
        min_bytes=1,
        max_bytes=10485760,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=(
            fetch_req.FetchTopic(topic="orders", partitions=(part(0, 3, 1234, 17, 1048576),)),
            fetch_req.FetchTopic(
                topic="t", partitions=(part(1, 0, 0, 0, 65536), part(4, 9, 5, 2, 7))
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )
    out = io.BytesIO()
    entity_writer(fetch_req.FetchRequest)(out, entity)
    assert ours == out.getvalue()


@dataclass
class Region:
    data: bytes

    @property
    def length(self) -> int:
        return len(self.data)


def _wire(parts) -> bytes:
    return b"".join(p.data if isinstance(p, Region) else p for p in parts)


def test_response_is_read_in_place():
    recs = bytes(range(256)) * 5
    topics = [
        TopicResult(
            "orders",
            uuid.uuid4(),
            [
                PartitionResult(0, 0, 100, 100, 3, [(7, 8), (9, 10)], [Region(recs[:700])]),
                PartitionResult(1, 6, -1, -1, -1),
            ],
        ),
        TopicResult("t", uuid.uuid4(), [PartitionResult(2, 0, 5, 5, 0, None, [Region(recs)])]),
    ]
    body = _wire(encode_fetch_response(12, topics, session_id=0))
    frame = memoryview(bytearray(b"xx" + body))
    error, _session, got = decode_replica_fetch_response(frame, 2)
    assert error == 0
    assert [name for name, _ in got] == ["orders", "t"]
    p0, p1 = got[0][1]
    assert (p0.partition_index, p0.error_code, p0.high_watermark, p0.log_start_offset) == (
        0,
        0,
        100,
        3,
    )
    assert bytes(p0.records) == recs[:700] and p0.records.obj is frame.obj  # a view, no copy
    assert p1.error_code == 6 and p1.records is None
    assert bytes(got[1][1][0].records) == recs


def test_truncated_response_is_refused():
    topics = [
        TopicResult("t", uuid.uuid4(), [PartitionResult(0, 0, 5, 5, 0, None, [Region(b"x" * 90)])])
    ]
    body = _wire(encode_fetch_response(12, topics))
    for cut in range(len(body) - 1):  # (the response's own tagged fields are not read)
        with pytest.raises(ValueError):
            decode_replica_fetch_response(memoryview(body[:cut]))


@pytest.mark.parametrize(
    "tail",
    [
        b"\xff\xff\xff\xff\x0f",  # topics: 2**32 - 2
        b"\x02\x02t\xff\xff\xff\xff\x7f",  # partitions of topic t: 2**35 - 2
        b"\x02\x02t\x02" + bytes(30) + b"\xff\xff\xff\xff\x0f",  # aborted transactions
    ],
)
def test_hostile_counts_are_refused_before_use(tail):
    body = struct.pack(">ihi", 0, 0, 0) + tail + bytes(8)
    with pytest.raises(ValueError, match="in .* bytes of a Fetch response"):
        decode_replica_fetch_response(memoryview(body))
