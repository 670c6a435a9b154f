"""Bad input gets Kafka's answer, and the broker keeps serving every other client."""

from __future__ import annotations

import datetime
import socket
import struct
import time

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.fetch.v12 import request as fetch12
from kio.schema.metadata.v12 import request as md12
from kio.schema.produce.v9 import request as produce9

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import Record, encode_batch

from .rawclient import RawClient, encode_request


def assert_still_serving(broker):
    with RawClient(broker.bootstrap) as c:
        resp = c.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        assert resp.error_code == ErrorCode.none


def metadata(c, names, auto=True, timeout=10.0):
    """Metadata of ``names``; with auto-creation, retried as clients retry it while the first
    answers say UNKNOWN_TOPIC_OR_PARTITION (creation is asynchronous, as in Kafka 4.4)."""
    topics = tuple(md12.MetadataRequestTopic(topic_id=None, name=n) for n in names)
    deadline = time.monotonic() + timeout
    while True:
        resp = c.request(
            md12.MetadataRequest(
                topics=topics,
                allow_auto_topic_creation=auto,
                include_topic_authorized_operations=False,
            )
        )
        creating = any(t.error_code == ErrorCode.unknown_topic_or_partition for t in resp.topics)
        if not (auto and creating) or time.monotonic() > deadline:
            return resp
        time.sleep(0.02)


def produce(c, topic, records, acks=-1, partition=0):
    req = produce9.ProduceRequest(
        transactional_id=None,
        acks=acks,
        timeout=datetime.timedelta(seconds=5),
        topic_data=(
            produce9.TopicProduceData(
                name=topic,
                partition_data=(produce9.PartitionProduceData(index=partition, records=records),),
            ),
        ),
    )
    resp = c.request(req)
    return resp.responses[0].partition_responses[0]


def batch(values, **kw):
    recs = [
        Record(offset=i, timestamp=1_700_000_000_000 + i, key=None, value=v, headers=[])
        for i, v in enumerate(values)
    ]
    return encode_batch(recs, **kw)


def test_oversized_frame_closes_connection_without_allocating(broker):
    with RawClient(broker.bootstrap) as c:
        c.sock.sendall(struct.pack(">i", 2_000_000_000))  # > socket.request.max.bytes
        assert c.is_closed_by_peer()
    assert_still_serving(broker)


def test_negative_frame_size_closes_connection(broker):
    with RawClient(broker.bootstrap) as c:
        c.sock.sendall(struct.pack(">i", -5))
        assert c.is_closed_by_peer()
    assert_still_serving(broker)


def test_truncated_frame_then_disconnect(broker):
    s = socket.create_connection(("127.0.0.1", broker.port))
    s.sendall(struct.pack(">i", 100) + b"\x00\x12\x00")
    s.close()
    assert_still_serving(broker)


def test_garbage_bytes(broker):
    with RawClient(broker.bootstrap) as c:
        c.send_frame(b"\xff" * 3)  # shorter than any request header
        assert c.is_closed_by_peer()
    with RawClient(broker.bootstrap) as c:
        c.send_frame(bytes(range(256)) * 4)
        assert c.is_closed_by_peer()
    assert_still_serving(broker)


def test_unknown_api_key_closes_connection(broker):
    with RawClient(broker.bootstrap) as c:
        c.send_frame(struct.pack(">hhih", 999, 0, 7, -1))
        assert c.is_closed_by_peer()
    assert_still_serving(broker)


def test_unsupported_api_versions_version_gets_v0_error_reply(broker):
    with RawClient(broker.bootstrap) as c:
        c.send_frame(struct.pack(">hhih", 18, 99, 42, -1) + b"\x00")
        frame = c.recv_frame()
        corr, error, count = struct.unpack_from(">ihi", frame, 0)
        assert (corr, error, count) == (42, ErrorCode.unsupported_version, 1)
        rng = served_apis()["ApiVersions"]
        assert struct.unpack_from(">hhh", frame, 10) == (18, 0, rng.max_version)


def test_unsupported_version_of_other_api_closes(broker):
    with RawClient(broker.bootstrap) as c:
        c.send_frame(struct.pack(">hhih", 3, 99, 1, -1))
        assert c.is_closed_by_peer()
    assert_still_serving(broker)


def test_invalid_topic_name(broker):
    with RawClient(broker.bootstrap) as c:
        resp = metadata(c, ["bad/name", "x" * 250, ".."])
        assert [t.error_code for t in resp.topics] == [ErrorCode.invalid_topic_exception] * 3


def test_corrupt_crc_too_large_and_bad_acks(broker, broker_factory):
    with RawClient(broker.bootstrap) as c:
        metadata(c, ["victim"])
        good = batch([b"hello"])
        corrupt = bytearray(good)
        corrupt[-1] ^= 0xFF
        assert produce(c, "victim", bytes(corrupt)).error_code == ErrorCode.corrupt_message
        big = batch([b"x" * 1_100_000])
        assert produce(c, "victim", big).error_code == ErrorCode.message_too_large
        assert produce(c, "victim", good, acks=2).error_code == ErrorCode.invalid_required_acks
        ok = produce(c, "victim", good)
        assert (ok.error_code, ok.base_offset) == (ErrorCode.none, 0)


def test_produce_to_missing_topic_without_auto_create(broker_factory):
    b = broker_factory({"auto.create.topics.enable": "false"})
    with RawClient(b.bootstrap) as c:
        resp = produce(c, "nope", batch([b"v"]))
        assert resp.error_code == ErrorCode.unknown_topic_or_partition
        md = metadata(c, ["nope"])
        assert md.topics[0].error_code == ErrorCode.unknown_topic_or_partition


def test_fetch_beyond_log_end(broker):
    with RawClient(broker.bootstrap) as c:
        metadata(c, ["short"])
        produce(c, "short", batch([b"a", b"b"]))
        req = fetch12.FetchRequest(
            replica_id=-1,
            max_wait=datetime.timedelta(milliseconds=100),
            min_bytes=1,
            max_bytes=1 << 20,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=(
                fetch12.FetchTopic(
                    topic="short",
                    partitions=(
                        fetch12.FetchPartition(
                            partition=0,
                            current_leader_epoch=-1,
                            fetch_offset=50,
                            last_fetched_epoch=-1,
                            log_start_offset=-1,
                            partition_max_bytes=1 << 20,
                        ),
                    ),
                ),
            ),
            forgotten_topics_data=(),
            rack_id="",
        )
        resp = c.request(req)
        part = resp.responses[0].partitions[0]
        assert part.error_code == ErrorCode.offset_out_of_range
        # no offsets with the error, as Kafka 4.4 (ListOffsets tells the real ones)
        assert (part.high_watermark, part.log_start_offset) == (-1, -1)


def test_disconnect_mid_request(broker):
    payload = encode_request(
        ApiVersionsRequest(client_software_name="t", client_software_version="1")
    )
    s = socket.create_connection(("127.0.0.1", broker.port))
    s.sendall(struct.pack(">i", len(payload)) + payload[: len(payload) // 2])
    s.close()
    assert_still_serving(broker)


@pytest.mark.parametrize("n", [5])
def test_pipelined_requests_answered_in_order(broker, n):
    with RawClient(broker.bootstrap) as c:
        for i in range(n):
            c.sock.sendall(
                b"".join(
                    [
                        struct.pack(">i", len(p)) + p
                        for p in [
                            encode_request(
                                ApiVersionsRequest(
                                    client_software_name="t", client_software_version="1"
                                ),
                                correlation_id=100 + i,
                            )
                        ]
                    ]
                )
            )
        corrs = [struct.unpack(">i", c.recv_frame()[:4])[0] for _ in range(n)]
        assert corrs == [100 + i for i in range(n)]


def test_two_batches_in_one_partition_are_refused(broker):
    with RawClient(broker.bootstrap) as c:
        metadata(c, ["twice"])
        resp = produce(c, "twice", batch([b"a"]) + batch([b"b"]))
        assert resp.error_code == ErrorCode.invalid_record
        assert "exactly one record batch" in resp.error_message
