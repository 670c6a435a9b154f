"""Differential sessions of real clients: produce and fetch with every codec (confluent-kafka's
producer, confluent-kafka's and kafka-python's consumers, and the raw Fetch to see the stored
batches), a classic consumer group (join/sync through confluent-kafka's consumer, DescribeGroups,
committed offsets, DeleteGroups) and transactions (commit and abort, read_committed reads, the
last stable offset of an open transaction). Each runs against Apache Kafka 4.4 and kafkapy;
differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw
from kafkapy.protocol.batch_header import iter_batches

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
RECORDS = 12


def _consume_confluent(target: Target, topic: str, count: int, partitions: int = 1,
                       isolation: str = "read_uncommitted",
                       timeout: float = 30.0) -> list[dict[str, Any]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "diff-unused",
                         "enable.auto.commit": False, "isolation.level": isolation,
                         "enable.partition.eof": False})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                got.append({"error": msg.error().name()})
                continue
            got.append({"partition": msg.partition(), "offset": msg.offset(),
                        "key": msg.key(), "value": msg.value(),
                        "headers": [list(h) for h in (msg.headers() or [])],
                        "timestamp_type": msg.timestamp()[0]})
        return got
    finally:
        consumer.close()


def _consume_kafka_python(target: Target, topic: str, isolation: str) -> list[Any]:
    """(offset, value) of every record kafka-python's consumer reads within a few seconds."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=target.bootstrap, enable_auto_commit=False,
                             isolation_level=isolation, consumer_timeout_ms=3_000)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        return [[m.offset, m.value] for m in consumer]
    finally:
        consumer.close()


def _raw_fetch(target: Target, topic: str, offset: int = 0, isolation: int = 0) -> Any:
    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic

    with raw(target) as client:
        return client.request(FetchRequest(
            replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
            max_bytes=1 << 20, isolation_level=isolation, session_id=0, session_epoch=-1,
            topics=(FetchTopic(topic=topic, partitions=(FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=offset,
                last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20),)),),
            forgotten_topics_data=(), rack_id=""))


def _batches(records: bytes | None) -> list[dict[str, Any]]:
    out = []
    for pos, h in iter_batches(records or b""):
        out.append({"position": pos, "base_offset": h.base_offset,
                    "last_offset_delta": h.last_offset_delta, "count": h.record_count,
                    "codec": h.codec, "transactional": h.is_transactional,
                    "control": h.is_control})
    return out


def codecs(target: Target) -> dict[str, Any]:
    from confluent_kafka import Producer
    from kafka import KafkaConsumer, TopicPartition

    out: dict[str, Any] = {}
    for codec in CODECS:
        topic = f"diff-codec-{codec}"
        create_topic(target, topic)
        # one batch of compressible records: librdkafka sends a batch uncompressed when
        # compression does not make it smaller, so small or split batches would make the stored
        # codec the client's timing rather than the broker's doing
        producer = Producer({"bootstrap.servers": target.bootstrap, "compression.type": codec,
                             "linger.ms": 500, "acks": "all"})
        reports: list[Any] = []
        for i in range(RECORDS):
            producer.produce(topic, value=(f"value-{i}-" + "x" * (200 + i * 40)).encode(),
                             key=f"k{i % 3}".encode(), headers=[("h", f"{i}".encode())],
                             on_delivery=lambda err, msg, out=reports: out.append(
                                 err.name() if err else msg.offset()))
        assert producer.flush(30) == 0
        producer.close()
        session: dict[str, Any] = {"delivered": sorted(r for r in reports if isinstance(r, int)),
                                   "delivery_errors": [r for r in reports if isinstance(r, str)]}
        session["confluent"] = _consume_confluent(target, topic, RECORDS)
        kp = KafkaConsumer(bootstrap_servers=target.bootstrap, enable_auto_commit=False,
                           consumer_timeout_ms=10_000)
        try:
            kp.assign([TopicPartition(topic, 0)])
            kp.seek_to_beginning()
            session["kafka_python"] = [[m.offset, m.key, m.value, m.headers]
                                       for _, m in zip(range(RECORDS), kp, strict=False)]
        finally:
            kp.close()
        fetched = _raw_fetch(target, topic).responses[0].partitions[0]
        # how the producer split the records into batches is the client's timing; the codec the
        # broker stored them with and their count are the broker's
        stored = _batches(fetched.records)
        session["stored_codecs"] = sorted({b["codec"] for b in stored})
        session["stored_records"] = sum(b["count"] for b in stored)
        session["high_watermark"] = fetched.high_watermark
        out[codec] = session
    return out


def test_codecs(differential: Differential) -> None:
    outcome = differential.check("codecs", codecs)
    assert outcome.observations > len(CODECS) * RECORDS * 6


def _describe_group(target: Target, group: str) -> dict[str, Any]:
    from kio.schema.describe_groups.v5.request import DescribeGroupsRequest

    with raw(target) as client:
        resp = client.request(DescribeGroupsRequest(groups=(group,),
                                                    include_authorized_operations=False))
    g = resp.groups[0]
    return {"error_code": g.error_code.name, "state": g.group_state,
            "protocol_type": g.protocol_type, "protocol": g.protocol_data,
            "members": [{"client_id": m.client_id, "instance": m.group_instance_id,
                         "has_metadata": bool(m.member_metadata),
                         "has_assignment": bool(m.member_assignment)} for m in g.members]}


def _offset_fetch(target: Target, group: str, topic: str) -> Any:
    from kio.schema.offset_fetch.v8.request import (
        OffsetFetchRequest,
        OffsetFetchRequestGroup,
        OffsetFetchRequestTopics,
    )

    with raw(target) as client:
        resp = client.request(OffsetFetchRequest(groups=(OffsetFetchRequestGroup(
            group_id=group, topics=(OffsetFetchRequestTopics(
                name=topic, partition_indexes=(0, 1, 7)),)),), require_stable=True))
    return entity_obs(resp.groups[0])


def classic_group(target: Target) -> dict[str, Any]:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest

    topic, group = "diff-group-topic", "diff-group"
    create_topic(target, topic, partitions=2)
    producer = Producer({"bootstrap.servers": target.bootstrap})
    for i in range(10):
        producer.produce(topic, value=b"g%d" % i, partition=i % 2)
    assert producer.flush(30) == 0
    producer.close()
    out: dict[str, Any] = {}
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": group,
                         "client.id": "diff-member", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 10_000})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 40
        while len(got) < 10 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value())
        out["consumed"] = sorted(got)
        out["assignment"] = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        consumer.commit(asynchronous=False)
        out["committed_by_consumer"] = sorted(
            (tp.partition, tp.offset) for tp in consumer.committed(
                [TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10))
        out["stable"] = _describe_group(target, group)
    finally:
        consumer.close()
    out["after_close"] = _describe_group(target, group)
    out["unknown_group"] = _describe_group(target, "diff-group-never")
    out["offset_fetch"] = _offset_fetch(target, group, topic)
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    listed = admin.list_consumer_groups().result(timeout=30)
    out["listed"] = sorted((g.group_id, str(g.state), str(g.type)) for g in listed.valid
                           if g.group_id.startswith("diff-group"))
    with raw(target) as client:
        for name in ("delete", "delete_again"):
            resp = client.request(DeleteGroupsRequest(groups_names=(group,)))
            out[name] = entity_obs(resp.results[0])
    out["after_delete"] = _describe_group(target, group)
    out["offset_fetch_after_delete"] = _offset_fetch(target, group, topic)
    return out


def test_classic_group(differential: Differential) -> None:
    outcome = differential.check("classic_group", classic_group)
    assert outcome.observations > 30


def _list_offset(target: Target, topic: str, isolation: int) -> Any:
    from kio.schema.list_offsets.v7.request import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    with raw(target) as client:
        resp = client.request(ListOffsetsRequest(
            replica_id=-1, isolation_level=isolation, topics=(ListOffsetsTopic(
                name=topic, partitions=(ListOffsetsPartition(
                    partition_index=0, current_leader_epoch=-1, timestamp=-1),)),)))
    part = resp.topics[0].partitions[0]
    return {"error_code": part.error_code.name, "offset": part.offset}


def _fetch_obs(target: Target, topic: str, isolation: int) -> dict[str, Any]:
    part = _raw_fetch(target, topic, isolation=isolation).responses[0].partitions[0]
    return {"error_code": part.error_code.name, "high_watermark": part.high_watermark,
            "last_stable_offset": part.last_stable_offset,
            "aborted": [a.first_offset for a in part.aborted_transactions or ()],
            "batches": _batches(part.records)}


def transactions(target: Target) -> dict[str, Any]:
    from confluent_kafka import Producer

    topic = "diff-txn-topic"
    create_topic(target, topic)
    producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": "diff-txn",
                         "transaction.timeout.ms": 60_000})
    producer.init_transactions(30)
    for values, commit in (([b"a1", b"a2", b"a3"], True), ([b"b1", b"b2"], False),
                           ([b"c1"], True)):
        producer.begin_transaction()
        for v in values:
            producer.produce(topic, value=v)
        producer.flush(30)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    out: dict[str, Any] = {
        "read_committed": [m.get("value") for m in _consume_confluent(
            target, topic, 4, isolation="read_committed", timeout=15)],
        "read_uncommitted": [m.get("value") for m in _consume_confluent(
            target, topic, 6, timeout=15)],
        "read_committed_kafka_python": _consume_kafka_python(target, topic, "read_committed"),
        "read_uncommitted_kafka_python": _consume_kafka_python(target, topic,
                                                               "read_uncommitted"),
        "closed": {"hw": _list_offset(target, topic, 0), "lso": _list_offset(target, topic, 1)},
    }
    producer.begin_transaction()
    producer.produce(topic, value=b"d1")
    producer.flush(30)
    out["open"] = {"hw": _list_offset(target, topic, 0), "lso": _list_offset(target, topic, 1),
                   "fetch_committed": _fetch_obs(target, topic, 1),
                   "fetch_uncommitted": _fetch_obs(target, topic, 0)}
    producer.abort_transaction(30)
    # the coordinator writes the markers after it answers EndTxn: wait until they are there
    deadline = time.monotonic() + 15
    while (_list_offset(target, topic, 1) != _list_offset(target, topic, 0)
           or _list_offset(target, topic, 0)["offset"] < 11) and time.monotonic() < deadline:
        time.sleep(0.1)
    out["after_abort"] = {"hw": _list_offset(target, topic, 0),
                          "lso": _list_offset(target, topic, 1),
                          "fetch_committed": _fetch_obs(target, topic, 1)}
    producer.close()
    return out


def test_transactions(differential: Differential) -> None:
    outcome = differential.check("transactions", transactions)
    assert outcome.observations > 30
