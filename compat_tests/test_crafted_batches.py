"""Record validation against crafted v2 batches (compat_tests/crafted_batches.py): each batch,
sent with raw Produce v9 to a topic of its own on a kafkapy broker, gets Kafka 4.4's answer
(error code, KIP-467 record_errors; compat_tests/reference/test_differential_records.py compares
with a real 4.4 broker), and every batch kafkapy stores is read back, record by record, by
kafka-python, librdkafka (confluent-kafka) and Kafka 4.4's Java consumer (ConsoleConsumer): no
batch kafkapy accepts may poison a partition for any reader (a 6-byte varint that Java cannot
read was the case that did).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from compat_tests.crafted_batches import (
    EXPECTED_ERRORS,
    EXPECTED_RECORD_ERRORS,
    TOPIC_CONFIGS,
    crafted_cases,
)
from compat_tests.reference.differential import Target
from compat_tests.reference.observe import create_topic
from compat_tests.reference.test_differential_records import list_offset, produce_crafted
from kafkapy.testing import BrokerProcess

pytestmark = pytest.mark.timeout(300)
PREFIX = "crafted-"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A broker with every crafted batch produced; yields (broker, {topic: record count}) of
    the batches it stored, having checked each answer."""
    broker = BrokerProcess(tmp_path_factory.mktemp("crafted"), {"num.partitions": "1"})
    broker.start()
    try:
        target = Target("kafkapy", broker.bootstrap)
        now = int(time.time() * 1000)
        kept: dict[str, int] = {}
        answers = {}
        for name, (kind, batch) in crafted_cases(now).items():
            topic = PREFIX + name.replace("_", "-")
            create_topic(target, topic, configs=TOPIC_CONFIGS[kind])
            part = produce_crafted(target, topic, batch)
            answers[name] = part
            if part.error_code == ErrorCode.none:
                kept[topic] = int.from_bytes(batch[57:61], "big")
        yield broker, kept, answers, now
    finally:
        assert broker.stop() == 0, broker.log_text()[-3000:]


def test_answers_are_kafka_44s(stored: Any) -> None:
    _broker, _kept, answers, _now = stored
    got = {n: p.error_code.name for n, p in answers.items() if p.error_code != ErrorCode.none}
    assert got == EXPECTED_ERRORS
    for name, part in answers.items():
        indices = [e.batch_index for e in part.record_errors]
        assert indices == EXPECTED_RECORD_ERRORS.get(name, []), name
        # a message only with record errors (KIP-467), as Kafka 4.4 sends them
        assert (part.error_message is not None) == bool(indices), (name, part.error_message)
    keyless = answers["keyless_in_compacted"]
    assert keyless.record_errors[0].batch_index_error_message == (
        "Compacted topic cannot accept message without key in topic partition "
        "crafted-keyless-in-compacted-0")
    assert keyless.error_message.startswith(
        "One or more records have been rejected due to 1 record errors in total, and only "
        "showing the first three errors at most: [RecordError(batchIndex=1, message='Compacted")
    assert answers["past_records"].error_message == (
        "One or more records have been rejected due to invalid timestamp")


def test_max_timestamp_follows_the_records(stored: Any) -> None:
    from compat_tests.rawclient import RawClient

    broker, _kept, _answers, now = stored
    half_hour = 1_800_000
    with RawClient(broker.bootstrap) as client:
        # header says now, record 1 is at now + 30 min: both lookups find record 1
        assert list_offset(client, PREFIX + "max-timestamp-understated", -3, now) == (1, half_hour)
        assert list_offset(client, PREFIX + "max-timestamp-understated", now + 1, now) == (
            1, half_hour)
        # header says now + 1 h, the records are at now: the max is record 0's now
        assert list_offset(client, PREFIX + "max-timestamp-overstated", -3, now) == (0, 0)


def test_kafka_python_reads_every_stored_batch(stored: Any) -> None:
    from kafka import KafkaConsumer, TopicPartition

    broker, kept, _answers, _now = stored
    for topic, count in kept.items():
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                                 consumer_timeout_ms=10_000)
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        for msg in consumer:
            got.append(msg.offset)
            if len(got) == count:
                break
        consumer.close()
        assert got == list(range(count)), topic


def test_librdkafka_reads_every_stored_batch(stored: Any) -> None:
    from confluent_kafka import Consumer, TopicPartition

    broker, kept, _answers, _now = stored
    for topic, count in kept.items():
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "crafted-rd",
                             "enable.auto.commit": False})
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        deadline = time.monotonic() + 15
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, (topic, msg.error())
            got.append(msg.offset())
        consumer.close()
        assert got == list(range(count)), topic


def test_java_consumer_reads_every_stored_batch(stored: Any) -> None:
    from compat_tests.suites import jvm

    jvm.require_kafka_jvm()
    broker, kept, _answers, _now = stored
    total = sum(kept.values())
    proc = jvm.run_java(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", broker.bootstrap,
        "--include", "crafted-.*", "--from-beginning", "--max-messages", str(total),
        "--timeout-ms", "30000", "--group", "crafted-java",
        "--property", "print.partition=true", "--property", "print.offset=true",
        timeout=120, check=False)
    assert "Varint is too long" not in proc.stderr + proc.stdout
    assert f"Processed a total of {total} messages" in proc.stderr, proc.stderr[-3000:]
