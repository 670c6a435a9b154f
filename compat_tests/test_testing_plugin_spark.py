"""Spark's sources on the plugin's fixtures: a Structured Streaming test against a fixture topic.

``format("kafkapy")`` (kafkapy/spark, no JVM connector) always runs; Spark's own
``format("kafka")`` runs when its connector jars are configured, as in
compat_tests/test_spark_kafka_connector.py (they come from Maven Central, which this project's
package sources do not include). The broker is the plugin's ``kafka_broker``, in this process:
Spark's Python workers and JVM reach it over loopback like any client.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from confluent_kafka import Producer

from compat_tests.suites.jvm import connector_missing

pytestmark = pytest.mark.timeout(300)


def fill(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
    values = [b"v%02d" % i for i in range(30)]
    for i, v in enumerate(values):
        producer.produce(topic, v, key=b"k%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0
    return values


def read_values(spark, source: str, bootstrap: str, topic: str) -> list[bytes]:
    df = (
        spark.read.format(source)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    return sorted(bytes(r.value) for r in df.select("value").collect())


@pytest.mark.kafka_topic(partitions=3)
def test_kafkapy_source_reads_a_fixture_topic(spark, kafka_broker, kafka_topic):
    values = fill(kafka_broker.bootstrap_servers, kafka_topic, 3)
    assert read_values(spark, "kafkapy", kafka_broker.bootstrap_servers, kafka_topic) == values


@pytest.mark.skipif(connector_missing() is not None, reason=str(connector_missing()))
@pytest.mark.kafka_topic(partitions=3)
def test_spark_kafka_source_reads_a_fixture_topic(spark, kafka_broker, kafka_topic):
    values = fill(kafka_broker.bootstrap_servers, kafka_topic, 3)
    assert read_values(spark, "kafka", kafka_broker.bootstrap_servers, kafka_topic) == values
