"""Framing, request headers, the served API table and the hand-written Fetch response writer."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

import pytest
from kio.index import load_response_schema
from kio.serial import entity_reader

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.fetch_response import PartitionResult, TopicResult, encode_fetch_response
from kafkapy.protocol.framing import FrameDecoder, FrameError, frame
from kafkapy.protocol.headers import parse_request_header, response_header


def test_frames_split_across_reads_and_joined_in_one_read():
    d = FrameDecoder(100)
    data = frame(b"abc") + frame(b"") + frame(b"x" * 50)
    assert d.feed(data[:2]) == []
    assert d.feed(data[2:11]) == [b"abc", b""]
    assert d.feed(data[11:]) == [b"x" * 50]
    assert d.buffered == 0


def test_oversized_frame_is_refused_at_the_prefix():
    d = FrameDecoder(100)
    with pytest.raises(FrameError, match="socket.request.max.bytes"):
        d.feed(struct.pack(">i", 101))
    with pytest.raises(FrameError, match="negative"):
        FrameDecoder(100).feed(struct.pack(">i", -1))


def test_request_header_v1_and_v2():
    v1 = struct.pack(">hhih", 3, 8, 77, 3) + b"cli" + b"BODY"
    h = parse_request_header(v1)
    assert (h.api_key, h.api_version, h.correlation_id, h.client_id, h.flexible) == (
        3,
        8,
        77,
        "cli",
        False,
    )
    assert v1[h.body_offset :] == b"BODY"
    # header v2 with a tagged field that must be skipped
    v2 = struct.pack(">hhih", 3, 12, 5, -1) + b"\x01\x07\x02zz" + b"BODY"
    h = parse_request_header(v2)
    assert (h.client_id, h.flexible, v2[h.body_offset :]) == (None, True, b"BODY")


def test_response_headers():
    assert response_header(3, 9, flexible=True) == struct.pack(">i", 9) + b"\x00"
    assert response_header(3, 9, flexible=False) == struct.pack(">i", 9)
    assert response_header(18, 9, flexible=True) == struct.pack(">i", 9)  # ApiVersions: v0


def test_served_table_is_kafka_4_0():
    t = served_apis()
    assert (t["Produce"].min_version, t["Produce"].accept_min, t["Produce"].max_version) == (
        0,
        3,
        12,
    )
    assert (t["Fetch"].min_version, t["Fetch"].max_version) == (4, 17)
    assert (t["ListOffsets"].min_version, t["ListOffsets"].max_version) == (1, 10)
    assert (t["Metadata"].min_version, t["Metadata"].max_version) == (0, 13)


@dataclass
class Blob:
    data: bytes

    @property
    def length(self) -> int:
        return len(self.data)


@pytest.mark.parametrize("version", range(4, 18))
def test_fetch_response_writer_decodes_with_kafkas_schema(version):
    tid = uuid.uuid4()
    topics = [
        TopicResult(
            "t1",
            tid,
            [
                PartitionResult(0, 0, 10, 10, 2, None, [Blob(b"A" * 7), Blob(b"B" * 5)]),
                PartitionResult(1, 1, -1, -1, -1, [(5, 100)], []),
            ],
        )
    ]
    parts = encode_fetch_response(version, topics, error_code=0, session_id=0)
    body = b"".join(p if isinstance(p, bytes) else p.data for p in parts)
    resp, size = entity_reader(load_response_schema(1, version))(body, 0)
    assert size == len(body)
    t = resp.responses[0]
    assert (t.topic_id if version >= 13 else t.topic) == (tid if version >= 13 else "t1")
    p0, p1 = t.partitions
    assert (p0.partition_index, p0.high_watermark, p0.records) == (0, 10, b"A" * 7 + b"B" * 5)
    assert p1.error_code == 1 and p1.aborted_transactions[0].first_offset == 100
    if version >= 5:
        assert p0.log_start_offset == 2
