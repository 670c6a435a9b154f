"""An unexpected exception in a handler is answered, not a disconnect (issue 12, point 2).

Kafka's request handler turns it into the request's own error response: UNKNOWN_SERVER_ERROR on
every topic, partition, resource and group the request named, the connection kept. Failures are
injected with KAFKAPY_TEST_FAIL_APIS (a test-only seam, unset by default), and real clients must
report UNKNOWN_SERVER_ERROR at once instead of reconnecting and retrying until they time out.
"""

from __future__ import annotations

import dataclasses
import random
import struct
import time
from typing import Any

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.headers import is_flexible
from kafkapy.testing import BrokerProcess

from .fuzz.generate import RequestGenerator, served_versions
from .rawclient import RawClient, encode_request

FAIL_APIS = "KAFKAPY_TEST_FAIL_APIS"
LOGGED = "unexpected error in handler, answering UNKNOWN_SERVER_ERROR"


@pytest.fixture
def failing_broker(tmp_path, monkeypatch):
    """A broker whose handlers fail for the APIs given (the env var is read at start)."""
    started: list[BrokerProcess] = []

    def start(apis: str) -> BrokerProcess:
        monkeypatch.setenv(FAIL_APIS, apis)
        proc = BrokerProcess(tmp_path / f"broker{len(started)}")
        started.append(proc)
        proc.start()
        monkeypatch.delenv(FAIL_APIS)
        return proc

    yield start
    for proc in started:
        assert proc.stop() == 0


def error_codes(entity: Any) -> list[int]:
    """Every error code in a response entity (error_code, AddPartitionsToTxn's
    partition_error_code), depth first."""
    found = []
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if f.name == "error_code" or f.metadata.get("kafka_type") == "error_code":
            found.append(int(value))
        elif isinstance(value, tuple):
            for item in value:
                if dataclasses.is_dataclass(item):
                    found += error_codes(item)
        elif dataclasses.is_dataclass(value):
            found += error_codes(value)
    return found


# Create/Renew/ExpireDelegationToken: their error responses carry -1 timestamps (Kafka's
# prepareResponse does the same), which kio's timestamp fields refuse to decode
TIMESTAMPED_TOKEN_ANSWERS = {38, 39, 40}


def test_every_served_api_answers_its_own_error_response_on_one_connection(failing_broker):
    broker = failing_broker("*")
    gen = RequestGenerator(random.Random(12), min_items=1, null_rate=0)
    sent = 0
    with RawClient(broker.bootstrap) as c:
        for name, key, version in served_versions():
            request = gen.request(key, version)
            if key == 0 and request.acks == 0:
                request = dataclasses.replace(request, acks=1)
            sent += 1
            if key in TIMESTAMPED_TOKEN_ANSWERS:  # -1 timestamps, as Kafka: kio cannot decode
                c.send_frame(encode_request(request, 10_000 + sent, c.client_id))
                body = c.recv_frame()[5 if is_flexible(key, version) else 4:]
                assert struct.unpack(">h", body[:2])[0] == ErrorCode.unknown_server_error
                continue
            response = c.request(request)  # the same connection throughout: never closed
            codes = error_codes(response)
            # an error on everything named (DescribeLogDirs v1-2 has no field for it, in Kafka
            # too: its results list log dirs, not what the request named)
            if not (name == "DescribeLogDirs" and version < 3):
                assert codes, (name, version, response)
            assert set(codes) <= {ErrorCode.unknown_server_error}, (name, version, response)
    log = broker.log_text()
    assert log.count(LOGGED) == sent
    assert "api=ListOffsets version=7 " in log and "InjectedFailure" in log


def test_error_response_names_every_partition_and_group(failing_broker):
    from kio.schema.add_partitions_to_txn.v3 import request as apt3
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from kio.schema.list_offsets.v7 import request as lo7

    broker = failing_broker("ListOffsets,DeleteGroups,AddPartitionsToTxn,DescribeTransactions")
    with RawClient(broker.bootstrap) as c:
        resp = c.request(
            lo7.ListOffsetsRequest(
                replica_id=-1,
                isolation_level=0,
                topics=tuple(
                    lo7.ListOffsetsTopic(
                        name=t,
                        partitions=tuple(
                            lo7.ListOffsetsPartition(
                                partition_index=p, current_leader_epoch=-1, timestamp=-1
                            )
                            for p in (0, 3)
                        ),
                    )
                    for t in ("a", "b")
                ),
            )
        )
        got = [
            (t.name, p.partition_index, p.error_code, p.offset)
            for t in resp.topics
            for p in t.partitions
        ]
        unknown = ErrorCode.unknown_server_error
        assert got == [
            ("a", 0, unknown, -1),
            ("a", 3, unknown, -1),
            ("b", 0, unknown, -1),
            ("b", 3, unknown, -1),
        ]
        resp = c.request(DeleteGroupsRequest(groups_names=("g1", "g2")))
        assert [(r.group_id, r.error_code) for r in resp.results] == [
            ("g1", unknown),
            ("g2", unknown),
        ]
        resp = c.request(
            apt3.AddPartitionsToTxnRequest(
                v3_and_below_transactional_id="tx",
                v3_and_below_producer_id=7,
                v3_and_below_producer_epoch=0,
                v3_and_below_topics=(apt3.AddPartitionsToTxnTopic(name="a", partitions=(0, 2)),),
            )
        )
        assert [
            (t.name, p.partition_index, p.partition_error_code)
            for t in resp.results_by_topic_v3_and_below
            for p in t.results_by_partition
        ] == [("a", 0, unknown), ("a", 2, unknown)]
        resp = c.request(DescribeTransactionsRequest(transactional_ids=("t1", "t2")))
        assert [(s.transactional_id, s.error_code) for s in resp.transaction_states] == [
            ("t1", unknown),
            ("t2", unknown),
        ]
        # the connection is still served, by handlers that do not fail
        ok = c.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        assert ok.error_code == ErrorCode.none


def test_kafka_python_producer_reports_unknown_server_error_at_once(failing_broker):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import UnknownError

    broker = failing_broker("Produce")
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("t", 1, 1)])
    admin.close()
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap, retries=5, request_timeout_ms=30000, linger_ms=0
    )
    try:
        start = time.monotonic()
        future = producer.send("t", b"v")
        with pytest.raises(UnknownError):
            future.get(timeout=20)
        assert time.monotonic() - start < 10  # answered, not retried into a timeout
    finally:
        producer.close(timeout=5)
    log = broker.log_text()
    assert "api=Produce version=" in log and "closing connection" not in log


def test_confluent_admin_reports_unknown_server_error_at_once(failing_broker):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    broker = failing_broker("CreateTopics")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    start = time.monotonic()
    future = admin.create_topics([NewTopic("t", 1, 1)], request_timeout=30)["t"]
    with pytest.raises(KafkaException) as info:
        future.result(timeout=25)
    assert info.value.args[0].code() == KafkaError.UNKNOWN
    assert time.monotonic() - start < 10
    assert broker.log_text().count(LOGGED) == 1
