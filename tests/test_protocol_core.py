"""Framing, request headers, the served API table and the hand-written Fetch and Produce codecs."""

from __future__ import annotations

import datetime
import io
import struct
import uuid
from dataclasses import dataclass

import pytest
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.fetch_response import PartitionResult, TopicResult, encode_fetch_response
from kafkapy.protocol.framing import FrameDecoder, FrameError, FrameReader, frame
from kafkapy.protocol.headers import parse_request_header, response_header
from kafkapy.protocol.produce_codec import (
    PartitionResponse,
    encode_produce_response,
    parse_produce_request,
)
from kafkapy.protocol.wire import DecodeError


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


def test_served_table_has_kafka_4_4_ranges():
    t = served_apis()
    assert (t["Produce"].min_version, t["Produce"].accept_min, t["Produce"].max_version) == (
        0,
        3,
        13,
    )
    assert (t["Fetch"].min_version, t["Fetch"].max_version) == (4, 18)
    assert (t["ListOffsets"].min_version, t["ListOffsets"].max_version) == (1, 11)
    assert (t["Metadata"].min_version, t["Metadata"].max_version) == (0, 13)
    assert (t["JoinGroup"].min_version, t["JoinGroup"].max_version) == (0, 9)
    assert (t["ApiVersions"].min_version, t["ApiVersions"].max_version) == (0, 5)


@dataclass
class Blob:
    data: bytes

    @property
    def length(self) -> int:
        return len(self.data)


@pytest.mark.parametrize("version", range(4, 19))
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


def _feed(reader: FrameReader, data: bytes, chunk: int) -> list[bytes]:
    """Deliver ``data`` as a socket would, at most ``chunk`` bytes per receive."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        buf = reader.buffer()
        n = min(len(buf), chunk, len(data) - pos)
        buf[:n] = data[pos : pos + n]
        pos += n
        out += [bytes(f) for f in reader.received(n)]
    return out


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 100, 10_000])
def test_frame_reader_small_and_large_frames(chunk):
    payloads = [b"abc", b"", b"x" * 50, bytes(range(256)) * 4, b"y" * 90, b"z"]
    data = b"".join(frame(p) for p in payloads)
    reader = FrameReader(2000, stage_size=64)
    assert _feed(reader, data, chunk) == payloads
    assert reader.buffered == 0


def test_frame_reader_receives_a_large_frame_in_place():
    reader = FrameReader(10_000, stage_size=64)
    big = bytes(range(200)) * 10
    buf = reader.buffer()
    head = frame(big)[:40]
    buf[: len(head)] = head
    assert reader.received(len(head)) == []
    rest = reader.buffer()  # the frame's own buffer, past the 36 bytes already staged
    assert len(rest) == len(big) - 36
    rest[:] = big[36:]
    (got,) = reader.received(len(rest))
    assert isinstance(got, bytearray) and got == big


def test_frame_reader_refuses_bad_sizes_at_the_prefix():
    for size, match in ((101, "socket.request.max.bytes"), (-1, "negative")):
        reader = FrameReader(100, stage_size=64)
        buf = reader.buffer()
        buf[:4] = struct.pack(">i", size)
        with pytest.raises(FrameError, match=match):
            reader.received(4)


T1_ID, T2_ID = uuid.UUID(int=0x71), uuid.UUID(int=0x72)


def _topic_key(version: int, name: str) -> dict:
    """How a Produce topic is named: by name up to v12, by id from v13 (KIP-516)."""
    if version >= 13:
        return {"topic_id": T1_ID if name == "t1" else T2_ID}
    return {"name": name}


def _produce_request(version: int, records: bytes | None):
    from kio.index import load_payload_module
    from kio.static.constants import EntityType

    m = load_payload_module(0, version, EntityType.request)
    return m.ProduceRequest(
        transactional_id=None if version % 2 else "txn",
        acks=-1,
        timeout=datetime.timedelta(milliseconds=1500),
        topic_data=(
            m.TopicProduceData(
                **_topic_key(version, "t1"),
                partition_data=(
                    m.PartitionProduceData(index=0, records=records),
                    m.PartitionProduceData(index=3, records=None),
                ),
            ),
            m.TopicProduceData(**_topic_key(version, "t2"), partition_data=()),
        ),
    )


@pytest.mark.parametrize("version", range(3, 14))
def test_produce_request_reader_agrees_with_kio(version):
    batch = bytes(range(256)) * 3
    body = io.BytesIO()
    req = _produce_request(version, batch)
    entity_writer(type(req))(body, req)
    head = b"HEADER"
    frame_ = bytearray(head + body.getvalue())
    got = parse_produce_request(frame_, len(head), version)
    assert (got.transactional_id, got.acks, got.timeout_ms) == (req.transactional_id, -1, 1500)
    if version >= 13:
        assert [(t.name, t.topic_id) for t in got.topics] == [("", T1_ID), ("", T2_ID)]
    else:
        assert [t.name for t in got.topics] == ["t1", "t2"]
    p0, p3 = got.topics[0].partitions
    assert (p0.index, bytes(p0.records), p3.index, p3.records) == (0, batch, 3, None)
    assert got.topics[1].partitions == []
    p0.records[0] = 0xAB  # a writable slice of the frame itself: no copy was made
    assert frame_[frame_.index(bytes(range(1, 256)) + bytes(range(256))) - 1] == 0xAB
    with pytest.raises(DecodeError):
        parse_produce_request(frame_[:-1], len(head), version)


@pytest.mark.parametrize("version", (3, 8, 9, 12, 13))
def test_produce_request_reader_refuses_every_truncation(version):
    body = io.BytesIO()
    req = _produce_request(version, b"R" * 40)
    entity_writer(type(req))(body, req)
    raw = body.getvalue()
    for cut in range(len(raw)):  # DecodeError, never another exception, at every length
        with pytest.raises(DecodeError):
            parse_produce_request(bytearray(raw[:cut]), 0, version)


def test_produce_request_reader_skips_unknown_tags():
    body = io.BytesIO()
    req = _produce_request(9, b"R" * 70)
    entity_writer(type(req))(body, req)
    raw = bytearray(body.getvalue())
    assert raw[-1] == 0  # top-level tagged fields: none
    raw[-1:] = b"\x01\x63\x02zz"  # one unknown tag (99) of 2 bytes
    got = parse_produce_request(raw, 0, 9)
    assert bytes(got.topics[0].partitions[0].records) == b"R" * 70


@pytest.mark.parametrize("version", range(3, 14))
def test_produce_response_writer_decodes_with_kafkas_schema(version):
    parts = [
        PartitionResponse(0, 0, 42, -1, 7, None),
        PartitionResponse(1, 87, -1, 1_700_000_000_000, -1, "bad record"),
    ]
    keys = (T1_ID, T2_ID) if version >= 13 else ("t1", "t2")
    body = encode_produce_response(version, [(keys[0], parts), (keys[1], [])], throttle_ms=5)
    resp, size = entity_reader(load_response_schema(0, version))(body, 0)
    assert size == len(body)
    assert resp.throttle_time == datetime.timedelta(milliseconds=5)
    t1, t2 = resp.responses
    if version >= 13:
        assert (t1.topic_id, t2.topic_id, t2.partition_responses) == (T1_ID, T2_ID, ())
    else:
        assert (t1.name, t2.name, t2.partition_responses) == ("t1", "t2", ())
    a, b = t1.partition_responses
    assert (a.index, a.error_code, a.base_offset, a.log_append_time) == (0, 0, 42, None)
    assert (b.index, b.error_code) == (1, 87)
    assert b.log_append_time.timestamp() == 1_700_000_000
    if version >= 5:
        assert (a.log_start_offset, b.log_start_offset) == (7, -1)
    if version >= 8:
        assert (a.error_message, b.error_message, a.record_errors) == (None, "bad record", ())


def test_frame_reader_releases_its_buffer_when_idle():
    reader = FrameReader(1000, stage_size=64)
    data = frame(b"abc") + frame(b"partial")
    buf = reader.buffer()
    buf[: len(data) - 2] = data[:-2]
    assert reader.received(len(data) - 2) == [bytearray(b"abc")]
    reader.release()  # a partial frame moves to its own buffer; the staging buffer goes
    assert not reader._stage and reader.missing == 2 and reader.buffered == 5
    buf = reader.buffer()
    buf[:2] = data[-2:]
    assert reader.received(2) == [bytearray(b"partial")]
    reader.release()
    assert reader.buffered == 0 and not reader._stage
    assert _feed(reader, frame(b"again"), 100) == [b"again"]
    # an incomplete size prefix keeps only its own bytes, and receiving goes on from there
    buf = reader.buffer()
    buf[:2] = frame(b"tail")[:2]
    assert reader.received(2) == []
    reader.release()
    assert len(reader._stage) == 2
    assert _feed(reader, frame(b"tail")[2:], 100) == [b"tail"]


def test_frame_reader_waits_for_memory_before_allocating():
    """With a charge gate (queued.max.request.bytes), a refused frame stays where it is and
    the reader reports it; resume() after memory was freed completes it."""
    budget = [10]

    def charge(n: int) -> bool:
        if budget[0] <= 0:
            return False
        budget[0] -= n
        return True

    reader = FrameReader(1000, stage_size=64, charge=charge)
    data = frame(b"x" * 20) + frame(b"y" * 5) + frame(b"z" * 100)
    buf = reader.buffer()
    buf[:40] = data[:40]
    # the first frame is charged (non-strict: 10 left, 20 taken), the second is refused
    assert reader.received(40) == [bytearray(b"x" * 20)]
    assert reader.waiting_for_memory and budget[0] == -10
    reader.release()  # no effect while waiting: the bytes stay staged
    assert reader.waiting_for_memory
    budget[0] = 5
    assert reader.resume() == [bytearray(b"y" * 5)]
    # the large frame's prefix is staged too: allocating its buffer needs memory as well
    assert reader.waiting_for_memory and reader.charged == 0
    budget[0] = 1
    assert reader.resume() == [] and reader.charged == 100
    rest = data[40:]
    assert _feed(reader, rest, 1000) == [b"z" * 100]
