"""Spark's built-in kafka connector (spark-sql-kafka-0-10), unchanged, against kafkapy.

The connector comes by name from Maven Central for the PySpark version pyproject.toml pins
(compat_tests/suites/artifacts.py; scripts/bootstrap.sh --tests fetches it), and the compat
tests' conftest hands its jars to Spark through KAFKAPY_SPARK_KAFKA_JARS (spark.jars). By hand,
with other jars: KAFKAPY_SPARK_KAFKA_JARS=<comma-separated jar paths> (or
KAFKAPY_SPARK_KAFKA_PACKAGES=org.apache.spark:spark-sql-kafka-0-10_2.13:<PySpark's version>).
Every option below is spelled as the connector's documentation
spells it; the code under test is the same format("kafka") a Spark user writes for Apache
Kafka: AdminClient offset listing and topic description, subscribe / assign /
subscribePattern, startingOffsets / endingOffsets JSON, startingTimestamp /
startingOffsetsByTimestamp / endingOffsetsByTimestamp, maxOffsetsPerTrigger, failOnDataLoss
after DeleteRecords, includeHeaders, kafka.isolation.level, and the sink's idempotent producer.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

pytest.importorskip("pyspark")

from compat_tests.suites.jvm import connector_missing

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(connector_missing() is not None, reason=str(connector_missing())),
]

from confluent_kafka import TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient  # noqa: E402
from pyspark.errors import StreamingQueryException  # noqa: E402

from compat_tests.test_spark_source import T0, create, produce  # noqa: E402


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    return module_broker_factory()


@pytest.fixture(scope="module")
def data(broker):
    create(broker.bootstrap, "jsrc", 3)
    return produce(broker.bootstrap, "jsrc", 300, 3)


def kread(spark, broker, **options):
    r = spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load()


def offsets(df) -> list[tuple[int, int]]:
    return sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())


def test_subscribe_assign_pattern(spark, broker, data):
    assert kread(spark, broker, subscribe="jsrc").count() == 300
    assert offsets(kread(spark, broker, assign=json.dumps({"jsrc": [1]}))) == [
        (1, o) for o in range(100)]
    create(broker.bootstrap, "jsrc-two", 1)
    produce(broker.bootstrap, "jsrc-two", 4, 1)
    got = {r.topic: r["count"] for r in kread(spark, broker, subscribePattern="jsrc.*")
           .groupBy("topic").count().collect()}
    assert got == {"jsrc": 300, "jsrc-two": 4}


def test_offsets_json_and_timestamps(spark, broker, data):
    df = kread(spark, broker, subscribe="jsrc",
               startingOffsets=json.dumps({"jsrc": {"0": 10, "1": -2, "2": 99}}),
               endingOffsets=json.dumps({"jsrc": {"0": 20, "1": 5, "2": -1}}))
    assert offsets(df) == [(0, o) for o in range(10, 20)] + [(1, o) for o in range(5)] + [
        (2, 99)]
    # timestamps T0 + i with i = 3 * offset + partition
    df = kread(spark, broker, subscribe="jsrc", startingTimestamp=T0 + 150)
    assert df.count() == 150
    df = kread(spark, broker, subscribe="jsrc",
               startingOffsetsByTimestamp=json.dumps({"jsrc": {"0": T0, "1": T0 + 30,
                                                               "2": T0 + 299}}),
               endingOffsetsByTimestamp=json.dumps({"jsrc": {"0": T0 + 30, "1": T0 + 60,
                                                             "2": T0 + 10**9}}))
    assert offsets(df) == [(0, o) for o in range(10)] + [(1, o) for o in range(10, 20)] + [
        (2, 99)]
    rows = kread(spark, broker, subscribe="jsrc", includeHeaders="true").selectExpr(
        "unix_millis(timestamp) AS ms", "timestampType", "headers", "partition",
        "offset").collect()
    r = next(r for r in rows if r.partition == 0 and r.offset == 1)  # i = 3
    assert r.ms == T0 + 3 and r.timestampType == 0
    assert [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers] == [
        ("h1", b"x3"), ("h2", None)]


def test_isolation_level_read_committed(spark, broker, data):
    df = kread(spark, broker, subscribe="jsrc", **{"kafka.isolation.level": "read_committed"})
    assert df.count() == 300


def test_streaming_max_offsets_per_trigger_and_restart(spark, broker, tmp_path):
    create(broker.bootstrap, "jstream", 2)
    produce(broker.bootstrap, "jstream", 100, 2)

    def run():
        q = (spark.readStream.format("kafka")
             .option("kafka.bootstrap.servers", broker.bootstrap)
             .option("subscribe", "jstream").option("startingOffsets", "earliest")
             .option("maxOffsetsPerTrigger", "30").load()
             .writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
        q.awaitTermination(300)
        assert q.exception() is None
        return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]

    assert run() == [30, 30, 30, 10]
    produce(broker.bootstrap, "jstream", 41, 2, first=100)
    assert sum(run()) == 41
    assert spark.read.parquet(str(tmp_path / "out")).count() == 141


def test_fail_on_data_loss_after_delete_records(spark, broker, tmp_path):
    create(broker.bootstrap, "jtrim", 1)
    produce(broker.bootstrap, "jtrim", 20, 1)

    def stream(fail: bool):
        q = (spark.readStream.format("kafka")
             .option("kafka.bootstrap.servers", broker.bootstrap)
             .option("subscribe", "jtrim").option("startingOffsets", "earliest")
             .option("failOnDataLoss", str(fail).lower()).load()
             .writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
        try:
            q.awaitTermination(300)
        except StreamingQueryException:
            pass
        return q

    assert stream(True).exception() is None
    produce(broker.bootstrap, "jtrim", 30, 1, first=20)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.delete_records([TopicPartition("jtrim", 0, 35)]).values():
        f.result(10)
    q = stream(True)
    assert q.exception() is not None and "failOnDataLoss" in str(q.exception())
    assert stream(False).exception() is None
    got = sorted(r.offset for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert got == list(range(20)) + list(range(35, 50))


def test_sink_idempotent_producer_with_headers(spark, broker):
    create(broker.bootstrap, "jout", 2)
    rows = [(f"k{i}", f"v{i}", [("h", f"{i}".encode())]) for i in range(40)]
    (spark.createDataFrame(rows, "key string, value string, "
                                 "headers array<struct<key:string,value:binary>>")
     .write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
     .option("topic", "jout").option("kafka.enable.idempotence", "true")
     .option("kafka.acks", "all").mode("append").save())
    back = kread(spark, broker, subscribe="jout", includeHeaders="true").selectExpr(
        "CAST(key AS STRING) k", "CAST(value AS STRING) v", "headers").collect()
    assert sorted((r.k, r.v, [(h.key, bytes(h.value)) for h in r.headers]) for r in back) == \
        sorted(rows)


def test_pipeline_on_the_builtin_connector(spark, broker, tmp_path):
    from compat_tests.test_spark_pipeline import (
        BASE,
        closed,
        expected_windows,
        read_all,
        run_job,
    )
    from compat_tests.test_spark_pipeline import produce as produce_lines
    from kafkapy.pipelines.access_log_generator import AccessLogGenerator
    from kafkapy.pipelines.access_log_job import JobConfig

    create(broker.bootstrap, "jlogs", 2)
    lines = AccessLogGenerator(seed=7, malformed_fraction=0.05).lines(
        1500, BASE, timedelta(minutes=6))
    produce_lines(broker.bootstrap, "jlogs", lines)
    cfg = JobConfig(bootstrap=broker.bootstrap, input="jlogs", output="jstats",
                    dead_letter="jlogs-dlq", parquet=str(tmp_path / "pq"),
                    checkpoint=str(tmp_path / "ckpt"), source="kafka")
    run_job(spark, cfg)
    assert sorted(m.value() or b"" for m in read_all(broker.bootstrap, "jlogs-dlq")) == sorted(
        ln.raw for ln in lines if not ln.ok)
    got = {m.key().decode(): json.loads(m.value()) for m in read_all(broker.bootstrap,
                                                                      "jstats")}
    exp = closed(expected_windows(lines), lines)
    assert sorted(got) == sorted(exp)
    for k, e in exp.items():
        assert got[k]["requests"] == e["requests"] and got[k]["top_paths"] == e["top_paths"]
