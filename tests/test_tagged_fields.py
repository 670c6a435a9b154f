"""Unknown tagged fields in request bodies are skipped, as Kafka's rule says (KIP-482).

Messages carrying unknown tags are produced the way a newer client would: by kio's own writer
applied to a "future" copy of the schema classes that declares extra tagged fields (at the top
level and inside nested structs). The project's schema must then decode them, after
strip_unknown_tags, to exactly the entity the clean encoding gives, byte for byte.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import struct
import time
import uuid
from typing import Any

import pytest
from kio.index import load_request_schema
from kio.schema.api_versions.v3 import request as api_versions_v3
from kio.schema.create_topics.v7 import request as create_topics_v7
from kio.schema.describe_topic_partitions.v0 import request as dtp_v0
from kio.schema.fetch.v12 import request as fetch_v12
from kio.schema.fetch.v17 import request as fetch_v17
from kio.schema.metadata.v12 import request as metadata_v12
from kio.schema.produce.v3 import request as produce_v3
from kio.schema.produce.v9 import request as produce_v9
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.headers import parse_request_header
from kafkapy.protocol.tagged_fields import MalformedBody, strip_unknown_tags
from kafkapy.server.network.connection import decode_body
from kafkapy.server.request_context import CloseConnection

MS = datetime.timedelta(milliseconds=1)


def encode(entity: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def future(cls: type, extra: dict[int, tuple[Any, str | None]], **nested: Any) -> type:
    """A copy of ``cls`` with extra tagged fields ``x<tag>``, nested field types replaced."""
    specs: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(cls):
        kw: dict[str, Any] = {"metadata": f.metadata}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        specs.append((f.name, nested.get(f.name, f.type), dataclasses.field(**kw)))
    for tag, (tp, kafka_type) in extra.items():
        md: dict[str, Any] = {"tag": tag}
        if kafka_type is not None:
            md["kafka_type"] = kafka_type
        specs.append((f"x{tag}", tp | None, dataclasses.field(metadata=md, default=None)))
    return dataclasses.make_dataclass(
        "Future" + cls.__name__,
        specs,
        namespace={"__flexible__": cls.__flexible__, "__version__": cls.__version__},
        frozen=True,
        kw_only=True,
    )


def convert(entity: Any, cls: type, **over: Any) -> Any:
    """Build ``cls`` from the fields of ``entity``.

    ``over`` maps a field of ``entity`` to a converter of its (non-null) value, or a new field
    (an extra tag) to its value.
    """
    values = {}
    for f in dataclasses.fields(cls):
        if hasattr(entity, f.name):
            v = getattr(entity, f.name)
            if f.name in over and v is not None:
                v = over[f.name](v)
            values[f.name] = v
        elif f.name in over:
            values[f.name] = over[f.name]
    return cls(**values)


def check_stripped(clean: Any, noisy_bytes: bytes) -> bytes:
    """noisy_bytes fail in kio, strip to the clean encoding and decode to ``clean``."""
    cls = type(clean)
    clean_bytes = encode(clean)
    assert noisy_bytes != clean_bytes
    with pytest.raises(KeyError, match="tag"):
        entity_reader(cls)(noisy_bytes, 0)
    prefix = b"\x00\x11garbage-before-offset"
    stripped = strip_unknown_tags(cls, prefix + noisy_bytes + b"trailing", len(prefix))
    assert stripped == clean_bytes
    decoded, size = entity_reader(cls)(stripped, 0)
    assert size == len(stripped)
    assert decoded == clean
    return stripped


# --- top level ----------------------------------------------------------------------------------


def test_api_versions_v3_unknown_top_level_tags():
    R = api_versions_v3.ApiVersionsRequest
    clean = R(client_software_name="librdkafka", client_software_version="2.6.0")
    F = future(R, {3: (str, "string"), 40000: (bytes, "bytes")})
    noisy = convert(clean, F, x3="from the future", x40000=b"\x00" * 300)
    check_stripped(clean, encode(noisy))


def test_metadata_v12_unknown_tags_top_level_and_in_topics():
    R = metadata_v12.MetadataRequest
    T = metadata_v12.MetadataRequestTopic
    FT = future(T, {0: (int, "int32")})
    F = future(R, {1: (str, "string")}, topics=tuple[FT, ...] | None)
    clean = R(
        topics=(T(topic_id=None, name="a"), T(topic_id=uuid.uuid4(), name=None)),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )
    noisy = convert(clean, F, topics=lambda ts: tuple(convert(t, FT, x0=7) for t in ts), x1="hello")
    check_stripped(clean, encode(noisy))
    # A null topics array (all topics) is walked too.
    clean_null = dataclasses.replace(clean, topics=None)
    check_stripped(clean_null, encode(convert(clean_null, F, x1="x")))


def test_message_without_unknown_tags_is_returned_unchanged():
    R = metadata_v12.MetadataRequest
    clean = R(topics=None, include_topic_authorized_operations=False)
    data = encode(clean)
    assert strip_unknown_tags(R, data, 0) == data
    # Non-flexible versions have no tagged sections at all.
    P = produce_v3.ProduceRequest
    old = P(
        transactional_id=None,
        acks=1,
        timeout=1000 * MS,
        topic_data=(
            produce_v3.TopicProduceData(
                name="t",
                partition_data=(produce_v3.PartitionProduceData(index=0, records=b"abc"),),
            ),
        ),
    )
    data = encode(old)
    assert strip_unknown_tags(P, b"xx" + data, 2) == data


# --- nested levels, known tags ------------------------------------------------------------------


def fetch_request(mod: Any, topic_key: str, topic_value: Any, **top: Any) -> Any:
    partitions = tuple(
        mod.FetchPartition(
            partition=i,
            current_leader_epoch=3,
            fetch_offset=100 * i,
            last_fetched_epoch=2,
            log_start_offset=0,
            partition_max_bytes=1 << 20,
        )
        for i in range(3)
    )
    topics = (mod.FetchTopic(**{topic_key: topic_value}, partitions=partitions),)
    forgotten = (mod.ForgottenTopic(**{topic_key: topic_value}, partitions=(4, 5)),)
    return mod.FetchRequest(
        max_wait=500 * MS,
        min_bytes=1,
        max_bytes=52428800,
        isolation_level=1,
        session_id=0,
        session_epoch=-1,
        topics=topics,
        forgotten_topics_data=forgotten,
        rack_id="rack-a",
        **top,
    )


def future_fetch(mod: Any, with_replica_state: bool) -> tuple[type, type, type, Any]:
    FP = future(mod.FetchPartition, {1: (str, "string"), 9: (int, "int64")})
    FFT = future(mod.FetchTopic, {5: (bytes, "bytes")}, partitions=tuple[FP, ...])
    extra: dict[str, Any] = {}
    if with_replica_state:
        extra["replica_state"] = future(mod.ReplicaState, {2: (str, "string")})
    FR = future(
        mod.FetchRequest, {6: (str, "string"), 99: (int, "int16")}, topics=tuple[FFT, ...], **extra
    )
    return FR, FFT, FP, extra.get("replica_state")


def noisy_fetch(clean: Any, FR: type, FFT: type, FP: type, **top: Any) -> bytes:
    def parts(ps: Any) -> Any:
        return tuple(convert(p, FP, x1=f"p{p.partition}", x9=p.partition) for p in ps)

    def topics(ts: Any) -> Any:
        return tuple(convert(t, FFT, partitions=parts, x5=b"\xff" * 20) for t in ts)

    return encode(convert(clean, FR, topics=topics, x6="top", x99=-5, **top))


def test_fetch_v12_unknown_tags_at_partition_topic_and_top_level_keep_cluster_id():
    clean = fetch_request(fetch_v12, "topic", "orders", cluster_id="cluster-1")
    FR, FFT, FP, _ = future_fetch(fetch_v12, with_replica_state=False)
    stripped = check_stripped(clean, noisy_fetch(clean, FR, FFT, FP))
    assert entity_reader(type(clean))(stripped, 0)[0].cluster_id == "cluster-1"


def test_fetch_v17_known_tags_survive_at_every_level():
    mod = fetch_v17
    dir_id = uuid.uuid4()
    clean = fetch_request(
        mod,
        "topic_id",
        uuid.uuid4(),
        cluster_id="cluster-1",
        replica_state=mod.ReplicaState(replica_id=2, replica_epoch=17),
    )
    clean = dataclasses.replace(
        clean,
        topics=tuple(
            dataclasses.replace(
                t,
                partitions=tuple(
                    dataclasses.replace(p, replica_directory_id=dir_id) for p in t.partitions
                ),
            )
            for t in clean.topics
        ),
    )
    FR, FFT, FP, FRS = future_fetch(mod, with_replica_state=True)
    # replica_state (known tag 1) itself carries an unknown tag: its value is rewritten in place
    # and its size updated.
    noisy = noisy_fetch(
        clean, FR, FFT, FP, replica_state=lambda rs: convert(rs, FRS, x2="inner unknown")
    )
    stripped = check_stripped(clean, noisy)
    decoded = entity_reader(type(clean))(stripped, 0)[0]
    assert decoded.cluster_id == "cluster-1"
    assert decoded.replica_state == mod.ReplicaState(replica_id=2, replica_epoch=17)
    assert {p.replica_directory_id for p in decoded.topics[0].partitions} == {dir_id}


def test_known_tags_only_are_copied_as_is():
    mod = fetch_v17
    clean = fetch_request(
        mod,
        "topic_id",
        uuid.uuid4(),
        cluster_id="c",
        replica_state=mod.ReplicaState(replica_id=1, replica_epoch=2),
    )
    data = encode(clean)
    assert strip_unknown_tags(type(clean), data, 0) == data


def test_produce_v9_unknown_tags_next_to_records():
    R = produce_v9.ProduceRequest
    records = bytes(range(256)) * 4
    clean = R(
        transactional_id="tx",
        acks=-1,
        timeout=30000 * MS,
        topic_data=(
            produce_v9.TopicProduceData(
                name="t",
                partition_data=(
                    produce_v9.PartitionProduceData(index=0, records=records),
                    produce_v9.PartitionProduceData(index=1, records=None),
                ),
            ),
        ),
    )
    FP = future(produce_v9.PartitionProduceData, {0: (str, "string")})
    FT = future(produce_v9.TopicProduceData, {}, partition_data=tuple[FP, ...])
    F = future(R, {12: (int, "int64")}, topic_data=tuple[FT, ...])

    def topics(ts: Any) -> Any:
        return tuple(
            convert(t, FT, partition_data=lambda ps: tuple(convert(p, FP, x0="z") for p in ps))
            for t in ts
        )

    check_stripped(clean, encode(convert(clean, F, topic_data=topics, x12=1)))


def test_create_topics_v7_unknown_tags_in_assignments_and_configs():
    m = create_topics_v7
    clean = m.CreateTopicsRequest(
        topics=(
            m.CreatableTopic(
                name="t",
                num_partitions=-1,
                replication_factor=-1,
                assignments=(m.CreatableReplicaAssignment(partition_index=0, broker_ids=(1, 2)),),
                configs=(
                    m.CreatableTopicConfig(name="cleanup.policy", value="compact"),
                    m.CreatableTopicConfig(name="retention.ms", value=None),
                ),
            ),
        ),
        timeout=60000 * MS,
        validate_only=True,
    )
    FA = future(m.CreatableReplicaAssignment, {3: (int, "int32")})
    FC = future(m.CreatableTopicConfig, {0: (str, "string")})
    FT = future(
        m.CreatableTopic, {1: (bool, "bool")}, assignments=tuple[FA, ...], configs=tuple[FC, ...]
    )
    F = future(m.CreateTopicsRequest, {}, topics=tuple[FT, ...])

    def topic(t: Any) -> Any:
        return convert(
            t,
            FT,
            assignments=lambda xs: tuple(convert(x, FA, x3=1) for x in xs),
            configs=lambda xs: tuple(convert(x, FC, x0="q") for x in xs),
            x1=True,
        )

    check_stripped(clean, encode(convert(clean, F, topics=lambda ts: tuple(map(topic, ts)))))


def test_nullable_struct_with_unknown_tag_inside():
    m = dtp_v0
    clean = m.DescribeTopicPartitionsRequest(
        topics=(m.TopicRequest(name="a"),),
        response_partition_limit=2000,
        cursor=m.Cursor(topic_name="a", partition_index=7),
    )
    FC = future(m.Cursor, {4: (str, "string")})
    F = future(m.DescribeTopicPartitionsRequest, {2: (int, "int8")}, cursor=FC | None)
    check_stripped(clean, encode(convert(clean, F, cursor=lambda c: convert(c, FC, x4="u"), x2=1)))
    clean_null = dataclasses.replace(clean, cursor=None)
    check_stripped(clean_null, encode(convert(clean_null, F, x2=1)))


# --- malformed input ----------------------------------------------------------------------------


def test_every_truncation_raises_value_error():
    clean = fetch_request(fetch_v12, "topic", "orders", cluster_id="cluster-1")
    FR, FFT, FP, _ = future_fetch(fetch_v12, with_replica_state=False)
    noisy = noisy_fetch(clean, FR, FFT, FP)
    R = type(clean)
    for cut in range(len(noisy)):
        with pytest.raises(ValueError):
            strip_unknown_tags(R, noisy[:cut], 0)
    assert issubclass(MalformedBody, ValueError)


@pytest.mark.parametrize(
    "body",
    [
        b"\x01\x01" + b"\x01\x05\x09abc",  # tag 5 declares 9 bytes, 3 follow
        b"\x01\x01" + b"\xff\xff\xff\xff\x0f\x00\x00",  # count 2**32-1 in 5 bytes
        b"\x01\x01" + b"\x01\x80\x80\x80\x80\x80\x01\x00",  # tag varint over 5 bytes
    ],
)
def test_hostile_tagged_sections_raise_without_looping(body: bytes):
    R = api_versions_v3.ApiVersionsRequest
    start = time.perf_counter()
    with pytest.raises(MalformedBody):
        strip_unknown_tags(R, body, 0)
    assert time.perf_counter() - start < 0.1


def test_huge_array_count_is_refused_at_once():
    R = metadata_v12.MetadataRequest
    start = time.perf_counter()
    with pytest.raises(MalformedBody, match="array"):
        strip_unknown_tags(R, b"\xff\xff\xff\xff\x0f" + b"\x00" * 10, 0)
    assert time.perf_counter() - start < 0.1


def test_known_tag_with_wrong_size_is_malformed():
    # FetchRequest v12 top-level tag 0 is cluster_id, a compact string: declared size 5 but the
    # string inside takes 3 bytes.
    clean = fetch_request(fetch_v12, "topic", "t", cluster_id="ab")
    data = encode(clean)
    assert data.endswith(b"\x01\x00\x03\x03ab")
    bad = data[:-5] + b"\x00\x05\x03ab\x00\x00"
    with pytest.raises(MalformedBody, match="tagged field 0"):
        strip_unknown_tags(type(clean), bad, 0)


# --- speed --------------------------------------------------------------------------------------


def test_one_mib_produce_strips_fast():
    R = produce_v9.ProduceRequest
    records = b"\x5a" * (1 << 20)
    FP = future(produce_v9.PartitionProduceData, {0: (str, "string")})
    FT = future(produce_v9.TopicProduceData, {}, partition_data=tuple[FP, ...])
    F = future(R, {12: (int, "int64")}, topic_data=tuple[FT, ...])
    noisy = F(
        acks=1,
        timeout=1000 * MS,
        topic_data=(FT(name="t", partition_data=(FP(index=0, records=records, x0="z"),)),),
        x12=3,
    )
    data = encode(noisy)
    assert len(data) > 1 << 20
    strip_unknown_tags(R, data, 0)  # warm the schema cache
    start = time.perf_counter()
    for _ in range(10):
        stripped = strip_unknown_tags(R, data, 0)
    per_call = (time.perf_counter() - start) / 10
    # A per-byte walk of 1 MiB in Python takes ~100 ms; one slice copy takes well under 1 ms.
    assert per_call < 0.02, per_call
    decoded = entity_reader(R)(stripped, 0)[0]
    assert decoded.topic_data[0].partition_data[0].records == records


# --- the broker boundary ------------------------------------------------------------------------


def request_frame(api_key: int, version: int, body: bytes) -> bytes:
    client = b"kafkapy-test"
    head = struct.pack(">hhih", api_key, version, 42, len(client)) + client
    return head + b"\x01\x07\x02hi" + body  # header tagged section with one unknown tag


def test_decode_body_skips_unknown_tags():
    clean = fetch_request(fetch_v12, "topic", "orders", cluster_id="cluster-1")
    FR, FFT, FP, _ = future_fetch(fetch_v12, with_replica_state=False)
    frame = request_frame(1, 12, noisy_fetch(clean, FR, FFT, FP))
    header = parse_request_header(frame)
    assert load_request_schema(1, 12) is type(clean)
    assert decode_body(header, frame) == clean


def test_decode_body_still_closes_on_a_broken_body():
    clean = fetch_request(fetch_v12, "topic", "orders", cluster_id="cluster-1")
    FR, FFT, FP, _ = future_fetch(fetch_v12, with_replica_state=False)
    noisy = noisy_fetch(clean, FR, FFT, FP)
    frame = request_frame(1, 12, noisy[:-3])
    with pytest.raises(CloseConnection, match="does not decode"):
        decode_body(parse_request_header(frame), frame)
