"""The hand-written Fetch request reader agrees with kio for every served version, skips unknown
tagged fields and refuses every truncated body with DecodeError."""

from __future__ import annotations

import datetime
import io
import random
import uuid

import pytest
from kio.index import load_payload_module
from kio.serial import entity_writer
from kio.static.constants import EntityType

from kafkapy.protocol.fetch_request import parse_fetch_request
from kafkapy.protocol.wire import DecodeError
from kafkapy.server.responses import build, has_field

VERSIONS = range(4, 18)


def _kio_request(version: int, rng: random.Random):
    m = load_payload_module(1, version, EntityType.request)

    def partition(i: int):
        return build(
            m.FetchPartition,
            partition=i,
            current_leader_epoch=rng.randint(-1, 9),
            fetch_offset=rng.randint(0, 2**40),
            last_fetched_epoch=rng.randint(-1, 9),
            log_start_offset=rng.randint(-1, 2**30),
            partition_max_bytes=rng.randint(1, 2**20),
            replica_directory_id=rng.choice((None, uuid.uuid4())),
        )

    def topic(t: int):
        return build(
            m.FetchTopic,
            topic=f"topic-{t}",
            topic_id=uuid.uuid4(),
            partitions=tuple(partition(i) for i in range(rng.randint(0, 4))),
        )

    kw = {}
    if has_field(m.FetchRequest, "replica_state"):
        kw["replica_state"] = m.ReplicaState(
            replica_id=rng.choice((-1, 2)), replica_epoch=rng.choice((-1, 7))
        )
    return build(
        m.FetchRequest,
        cluster_id=rng.choice((None, "the-cluster")),
        replica_id=rng.choice((-1, 3)),
        max_wait=datetime.timedelta(milliseconds=rng.randint(0, 30000)),
        min_bytes=rng.randint(0, 100),
        max_bytes=rng.randint(1, 2**30),
        isolation_level=rng.choice((0, 1)),
        session_id=rng.randint(0, 2**31 - 1),
        session_epoch=rng.randint(-1, 100),
        topics=tuple(topic(t) for t in range(rng.randint(0, 3))),
        forgotten_topics_data=tuple(
            build(
                m.ForgottenTopic,
                topic=f"gone-{t}",
                topic_id=uuid.uuid4(),
                partitions=tuple(range(rng.randint(0, 3))),
            )
            for t in range(rng.randint(0, 2) if version >= 7 else 0)
        ),
        rack_id=rng.choice(("", "rack-a")),
        **kw,
    )


def _encode(entity) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


@pytest.mark.parametrize("version", VERSIONS)
def test_reader_agrees_with_kio(version):
    rng = random.Random(version)
    for _ in range(25):
        req = _kio_request(version, rng)
        head = b"HDR"
        got = parse_fetch_request(bytearray(head + _encode(req)), len(head), version)
        state = getattr(req, "replica_state", None)
        if version >= 15:
            want_rid = -1 if state is None else state.replica_id
            got_rid = -1 if got.replica_state is None else got.replica_state.replica_id
            assert got_rid == want_rid and got.replica_id == -1
        else:
            assert got.replica_id == req.replica_id
        assert got.max_wait_ms == req.max_wait // datetime.timedelta(milliseconds=1)
        assert (got.min_bytes, got.max_bytes, got.isolation_level) == (
            req.min_bytes, req.max_bytes, req.isolation_level
        )
        if version >= 7:
            assert (got.session_id, got.session_epoch) == (req.session_id, req.session_epoch)
        if version >= 11:
            assert got.rack_id == req.rack_id
        if version >= 12:
            assert got.cluster_id == req.cluster_id
        assert len(got.topics) == len(req.topics)
        for g, w in zip(got.topics, req.topics, strict=True):
            if version >= 13:
                assert (g.topic, g.topic_id) == (None, w.topic_id)
            else:
                assert (g.topic, g.topic_id) == (w.topic, None)
            assert [
                (p.partition, p.fetch_offset, p.partition_max_bytes) for p in g.partitions
            ] == [(p.partition, p.fetch_offset, p.partition_max_bytes) for p in w.partitions]
            for gp, wp in zip(g.partitions, w.partitions, strict=True):
                for name in ("current_leader_epoch", "last_fetched_epoch", "log_start_offset"):
                    if has_field(type(wp), name):
                        assert getattr(gp, name) == getattr(wp, name), name
        forgotten = getattr(req, "forgotten_topics_data", ())
        assert [(f.topic, f.topic_id, f.partitions) for f in got.forgotten_topics_data] == [
            (
                None if version >= 13 else f.topic,
                f.topic_id if version >= 13 else None,
                list(f.partitions),
            )
            for f in forgotten
        ]


def test_zero_topic_id_reads_as_none():
    m = load_payload_module(1, 13, EntityType.request)
    req = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1,
        max_bytes=100, isolation_level=0, session_id=0, session_epoch=-1,
        topics=(m.FetchTopic(topic_id=uuid.UUID(int=0), partitions=()),),
        forgotten_topics_data=(), rack_id="",
    )
    (t,) = parse_fetch_request(_encode(req), 0, 13).topics
    assert t.topic_id is None


def test_unknown_tags_are_skipped_everywhere():
    m = load_payload_module(1, 12, EntityType.request)
    req = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1,
        max_bytes=100, isolation_level=0, session_id=0, session_epoch=-1,
        topics=(m.FetchTopic(topic="t", partitions=(
            m.FetchPartition(partition=4, current_leader_epoch=1, fetch_offset=9,
                             last_fetched_epoch=-1, log_start_offset=-1,
                             partition_max_bytes=10),
        )),),
        forgotten_topics_data=(), rack_id="",
    )
    raw = bytearray(_encode(req))
    assert raw[-1] == 0
    raw[-1:] = b"\x01\x63\x02zz"  # request: one unknown tag (99) of 2 bytes
    got = parse_fetch_request(raw, 0, 12)
    assert got.topics[0].partitions[0].fetch_offset == 9


@pytest.mark.parametrize("version", (4, 7, 11, 12, 13, 15, 17))
def test_every_truncation_is_a_decode_error(version):
    raw = _encode(_kio_request(version, random.Random(1)))
    for cut in range(len(raw)):
        with pytest.raises(DecodeError):
            parse_fetch_request(bytearray(raw[:cut]), 0, version)
    with pytest.raises(DecodeError):
        parse_fetch_request(bytearray(raw + b"\x00"), 0, version)  # trailing bytes


def test_hostile_counts_are_refused_before_allocating():
    raw = bytearray(_encode(_kio_request(12, random.Random(3))))
    # the topics count right after the fixed head (4*4 + 1 + 4 + 4 = 25 bytes)
    raw[25:26] = b"\xff\xff\xff\xff\x07"  # about 2**31 topics in a few bytes
    with pytest.raises(DecodeError):
        parse_fetch_request(raw, 0, 12)
