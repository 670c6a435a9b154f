"""No request can crash or exhaust the broker (issue 12, point 0).

Each test sends what a fuzzer found (or what the issue reported) to a real broker process and
checks that the broker answers as Kafka does or closes that one connection, and keeps serving.
"""

from __future__ import annotations

import dataclasses
import datetime
import random
import struct
import time

import pytest
from kio.schema.create_partitions.v3 import request as cp3
from kio.schema.create_topics.v7 import request as ct7
from kio.schema.fetch.v15 import request as fetch15
from kio.schema.find_coordinator.v4 import request as fc4
from kio.schema.join_group.v5 import request as jg5
from kio.schema.list_partition_reassignments.v0 import request as lpr0
from kio.schema.metadata.v10 import request as md10

from kafkapy.protocol.errors import ErrorCode

from .fuzz.generate import RequestGenerator, request_header
from .rawclient import RawClient
from .test_bad_input import assert_still_serving

MS = datetime.timedelta(milliseconds=1)


def send_raw(broker, payload: bytes) -> bytes | None:
    """Send one request frame on a fresh connection: its response frame, or None if the broker
    closed the connection instead."""
    with RawClient(broker.bootstrap) as c:
        c.send_frame(payload)
        try:
            return c.recv_frame()
        except ConnectionError:  # (a timeout is a failure: the broker hangs)
            return None


# Request bodies that aborted the whole broker process inside kio's native reader
# ("memory allocation of N bytes failed"): array counts far above the bytes in the frame.
KIO_ABORTS = [
    pytest.param(3, 9, b"\xff\xff\xff\xff\x0f", id="Metadata-v9-compact-count-2**32"),
    pytest.param(3, 12, b"\x80\x80\x80\x8d\x12" + b"\x00" * 8, id="Metadata-v12-count-4.8e9"),
    pytest.param(2, 7, b"\x00" * 5 + b"\x02\x02t\xff\xff\xff\xff\x0f", id="ListOffsets-v7-parts"),
    pytest.param(3, 1, struct.pack(">i", 2**31 - 1), id="Metadata-v1-legacy-count-2**31"),
]


@pytest.mark.parametrize(("key", "version", "body"), KIO_ABORTS)
def test_array_count_bombs_close_the_connection_and_the_broker_keeps_serving(
    broker, key, version, body
):
    start = time.monotonic()
    assert send_raw(broker, request_header(key, version, 7) + body) is None
    assert time.monotonic() - start < 5
    assert_still_serving(broker)
    assert broker.proc.poll() is None
    assert "items with only" in broker.log_text()


# Non-nullable arrays sent as null: kio handed handlers None ('NoneType' object is not
# iterable); Kafka's reader refuses them ("non-nullable field X was serialized as null") and
# closes the connection.
NULL_ARRAYS = [
    pytest.param(2, 1, struct.pack(">ii", -1, -1), id="ListOffsets-v1-topics"),
    pytest.param(21, 0, struct.pack(">ii", -1, 1000), id="DeleteRecords-v0-topics"),
    pytest.param(42, 0, struct.pack(">i", -1), id="DeleteGroups-v0-groups"),
    pytest.param(15, 0, struct.pack(">i", -1), id="DescribeGroups-v0-groups"),
    pytest.param(23, 2, struct.pack(">i", -1), id="OffsetForLeaderEpoch-v2-topics"),
    pytest.param(
        14,
        0,
        b"\x00\x01g" + struct.pack(">i", 1) + b"\x00\x01m" + b"\xff\xff\xff\xff",
        id="SyncGroup-v0-assignments",
    ),
]


@pytest.mark.parametrize(("key", "version", "body"), NULL_ARRAYS)
def test_null_where_the_schema_forbids_it_closes_as_kafka_does(broker, key, version, body):
    assert send_raw(broker, request_header(key, version, 9) + body) is None
    assert_still_serving(broker)
    log = broker.log_text()
    assert "was serialized as null" in log
    assert "unexpected error" not in log


def test_null_where_the_schema_allows_it_is_answered_by_every_handler(broker):
    """Every nullable array and struct of every served version, sent as null, gets an answer
    (Kafka's meaning of null: all topics, all configs, no assignment, ...), no handler error."""
    gen = RequestGenerator(random.Random(0), null_rate=1.0, min_items=1)
    with RawClient(broker.bootstrap) as c:
        for key, version in NULLABLE_VERSIONS:
            request = gen.request(key, version)
            response = c.request(request)  # the same connection: never closed
            assert response is not None
    assert "unexpected error" not in broker.log_text()


def _nullable_versions() -> list[tuple[int, int]]:
    """(key, version) of every served request version with a nullable array or struct."""
    import typing
    from types import NoneType, UnionType

    from kio.index import load_request_schema

    from .fuzz.generate import served_versions

    def nullable(cls: type) -> bool:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            args = typing.get_args(tp) if typing.get_origin(tp) is UnionType else ()
            inner = next((a for a in args if a is not NoneType), tp)
            if args and (typing.get_origin(inner) is tuple or dataclasses.is_dataclass(inner)):
                return True
            if typing.get_origin(inner) is tuple:
                inner = typing.get_args(inner)[0]
            if dataclasses.is_dataclass(inner) and nullable(inner):
                return True
        return False

    return [
        (key, version)
        for _name, key, version in served_versions()
        if key != 0 and nullable(load_request_schema(key, version))
    ]


NULLABLE_VERSIONS = _nullable_versions()


def test_metadata_v10_by_null_name_is_invalid_request(broker):
    # Topic ids are served from v12; before, Kafka refuses a null name (the broker used to
    # fail encoding the null name in a v10 response)
    with RawClient(broker.bootstrap) as c:
        resp = c.request(
            md10.MetadataRequest(
                topics=(md10.MetadataRequestTopic(topic_id=None, name=None),),
                allow_auto_topic_creation=False,
                include_cluster_authorized_operations=False,
                include_topic_authorized_operations=False,
            )
        )
    assert [(t.name, t.error_code) for t in resp.topics] == [("", ErrorCode.invalid_request)]
    assert "unexpected error" not in broker.log_text()


def create_topic(c, name: str, partitions: int) -> int:
    topic = ct7.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1, assignments=(), configs=()
    )
    resp = c.request(
        ct7.CreateTopicsRequest(topics=(topic,), timeout=1000 * MS, validate_only=False)
    )
    return resp.topics[0].error_code


def test_partition_counts_beyond_kafkas_batch_limit_are_refused_at_once(broker):
    huge = 2**31 - 1
    with RawClient(broker.bootstrap, timeout=10) as c:
        start = time.monotonic()
        assert create_topic(c, "huge", huge) == ErrorCode.policy_violation
        assert create_topic(c, "small", 1) == ErrorCode.none
        resp = c.request(
            cp3.CreatePartitionsRequest(
                topics=(cp3.CreatePartitionsTopic(name="small", count=huge, assignments=None),),
                timeout=1000 * MS,
                validate_only=True,
            )
        )
        assert resp.results[0].error_code == ErrorCode.policy_violation
        assert time.monotonic() - start < 5
    assert_still_serving(broker)


def test_join_group_repeating_a_protocol_name_does_not_stop_the_broker(broker_factory):
    broker = broker_factory({"group.initial.rebalance.delay.ms": "0"})
    protocols = (
        jg5.JoinGroupRequestProtocol(name="range", metadata=b""),
        jg5.JoinGroupRequestProtocol(name="range", metadata=b""),
    )

    def join(c, member_id):
        return c.request(
            jg5.JoinGroupRequest(
                group_id="g",
                session_timeout=10000 * MS,
                rebalance_timeout=5000 * MS,
                member_id=member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=protocols,
            )
        )

    with RawClient(broker.bootstrap) as c:
        found = c.request(fc4.FindCoordinatorRequest(key_type=0, coordinator_keys=("g",)))
        assert found.coordinators[0].error_code == ErrorCode.none
        first = join(c, "")
        assert first.error_code == ErrorCode.member_id_required
        joined = join(c, first.member_id)
        assert joined.error_code == ErrorCode.none
        assert joined.protocol_name == "range"
    assert_still_serving(broker)


def test_fetch_by_the_zero_topic_id_is_unknown_topic_id(broker):
    # kio reads the zero UUID as None, which the response writer could not encode
    partition = fetch15.FetchPartition(
        partition=0,
        current_leader_epoch=-1,
        fetch_offset=0,
        last_fetched_epoch=-1,
        log_start_offset=-1,
        partition_max_bytes=1 << 20,
    )
    request = fetch15.FetchRequest(
        **dict(max_wait=0 * MS, min_bytes=1, max_bytes=1 << 20, isolation_level=0),
        **dict(session_id=0, session_epoch=-1, forgotten_topics_data=(), rack_id=""),
        topics=(fetch15.FetchTopic(topic_id=None, partitions=(partition,)),),
    )
    with RawClient(broker.bootstrap) as c:
        resp = c.request(request)
    assert resp.responses[0].partitions[0].error_code == ErrorCode.unknown_topic_id
    assert "unexpected error" not in broker.log_text()


def test_list_partition_reassignments_of_impossible_names_lists_nothing(broker):
    with RawClient(broker.bootstrap) as c:
        resp = c.request(
            lpr0.ListPartitionReassignmentsRequest(
                timeout=1000 * MS,
                topics=tuple(
                    lpr0.ListPartitionReassignmentsTopics(name=n, partition_indexes=(0,))
                    for n in ("", "a/b", "..")
                ),
            )
        )
    assert resp.error_code == ErrorCode.none and resp.topics == ()
    assert "unexpected error" not in broker.log_text()
