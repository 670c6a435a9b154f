"""The "kafkapy" PySpark data source against a real kafkapy broker, on real Spark (local[2]).

Data is produced with confluent-kafka and read back in batch and streaming with Spark's kafka
option names; the writer round-trips keys, values and headers; bad input gives clear errors.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.errors import StreamingQueryException

from kafkapy.testing import BrokerProcess, free_port

pytestmark = pytest.mark.timeout(300)

T0 = 1_700_000_000_000  # record timestamps: T0 + i ms


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    return module_broker_factory()


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(10)


def produce(bootstrap: str, topic: str, n: int, partitions: int, first: int = 0) -> list[dict]:
    """n records round-robin over partitions; every 7th without key, every 3rd with headers."""
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    sent = []
    for i in range(first, first + n):
        rec = {
            "key": None if i % 7 == 0 else f"k{i}".encode(),
            "value": f"value-{i}".encode() * (1 + i % 3),
            "partition": i % partitions,
            "timestamp": T0 + i,
            "headers": [("h1", f"x{i}".encode()), ("h2", None)] if i % 3 == 0 else [],
        }
        p.produce(topic, value=rec["value"], key=rec["key"], partition=rec["partition"],
                  timestamp=rec["timestamp"], headers=rec["headers"] or None)
        sent.append(rec)
    assert p.flush(30) == 0
    return sent


def opts(broker, **kw) -> dict[str, str]:
    return {"kafka.bootstrap.servers": broker.bootstrap, **{k: str(v) for k, v in kw.items()}}


def read(spark, broker, **kw):
    return spark.read.format("kafkapy").options(**opts(broker, **kw)).load()


@pytest.fixture(scope="module")
def data(broker):
    create(broker.bootstrap, "src", 3)
    return produce(broker.bootstrap, "src", 300, 3)


def test_batch_read_all_columns(spark, broker, data):
    df = read(spark, broker, subscribe="src", includeHeaders="true")
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp",
                          "timestampType", "headers"]
    rows = df.selectExpr("*", "unix_millis(timestamp) AS ms").collect()
    assert len(rows) == len(data)
    by_value = {(r.partition, bytes(r.value)): r for r in rows}
    per_part: dict[int, int] = {}
    for rec in data:
        r = by_value[(rec["partition"], rec["value"])]
        assert (bytes(r.key) if r.key is not None else None) == rec["key"]
        assert r.topic == "src"
        assert r.offset == per_part.get(rec["partition"], 0)
        per_part[rec["partition"]] = r.offset + 1
        assert r.ms == rec["timestamp"]
        assert r.timestampType == 0
        assert [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers] == \
            rec["headers"]
    # without includeHeaders the schema is the kafka source's 7 columns
    assert read(spark, broker, subscribe="src").columns == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    # one Spark partition per Kafka partition
    assert read(spark, broker, subscribe="src").rdd.getNumPartitions() == 3


def test_batch_offsets_json_assign_and_pattern(spark, broker, data):
    df = read(spark, broker, assign='{"src":[0,2]}',
              startingOffsets='{"src":{"0":10,"2":-2}}',
              endingOffsets='{"src":{"0":20,"2":-1}}')
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == [(0, o) for o in range(10, 20)] + [(2, o) for o in range(100)]

    create(broker.bootstrap, "src-other", 1)
    produce(broker.bootstrap, "src-other", 5, 1)
    topics = {r.topic: r.n for r in read(spark, broker, subscribePattern="src.*")
              .groupBy("topic").count().withColumnRenamed("count", "n").collect()}
    assert topics == {"src": 300, "src-other": 5}
    both = read(spark, broker, subscribe="src,src-other").count()
    assert both == 305


def test_batch_by_timestamp(spark, broker, data):
    # records with timestamp >= T0+150 start at offset 50 in every partition (i = 3*off + p)
    df = read(spark, broker, subscribe="src", startingTimestamp=T0 + 150)
    got = df.groupBy("partition").agg({"offset": "min"}).collect()
    assert {r.partition: r["min(offset)"] for r in got} == {0: 50, 1: 50, 2: 50}
    assert df.count() == 150
    df = read(spark, broker, subscribe="src",
              startingOffsetsByTimestamp=f'{{"src":{{"0":{T0},"1":{T0 + 30},"2":{T0 + 299}}}}}',
              endingOffsetsByTimestamp=f'{{"src":{{"0":{T0 + 30},"1":{T0 + 60},'
                                       f'"2":{T0 + 10**9}}}}}')
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    # p0: [0,10), p1: from ts>=T0+30 (i=31 -> off 10) to ts>=T0+60 (i=61 -> off 20),
    # p2: from ts>=T0+299 (i=299 -> off 99) to no such timestamp -> latest (100)
    assert got == [(0, o) for o in range(10)] + [(1, o) for o in range(10, 20)] + [(2, 99)]
    with pytest.raises(Exception, match="startingOffsetsByTimestampStrategy"):
        read(spark, broker, subscribe="src", startingTimestamp=T0 + 10**9).collect()
    assert read(spark, broker, subscribe="src", startingTimestamp=T0 + 10**9,
                startingOffsetsByTimestampStrategy="latest").count() == 0


def test_streaming_available_now_max_offsets_and_restart(spark, broker, tmp_path):
    create(broker.bootstrap, "stream", 2)
    sent = produce(broker.bootstrap, "stream", 100, 2)
    out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")

    def run():
        q = (spark.readStream.format("kafkapy")
             .options(**opts(broker, subscribe="stream", startingOffsets="earliest",
                             maxOffsetsPerTrigger=30, includeHeaders="true"))
             .load()
             .writeStream.format("parquet").option("path", out)
             .option("checkpointLocation", ckpt).trigger(availableNow=True).start())
        q.awaitTermination(180)
        assert q.exception() is None
        return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]

    assert run() == [30, 30, 30, 10]  # maxOffsetsPerTrigger split over the 2 partitions
    more = produce(broker.bootstrap, "stream", 41, 2, first=100)
    assert sum(run()) == 41  # the restart continues from the checkpoint: nothing twice
    rows = spark.read.parquet(out).collect()
    assert len(rows) == 141
    assert sorted(bytes(r.value) for r in rows) == sorted(r["value"] for r in sent + more)
    assert len({(r.partition, r.offset) for r in rows}) == 141


def test_streaming_latest_default_and_new_data(spark, broker, tmp_path):
    create(broker.bootstrap, "late", 1)
    produce(broker.bootstrap, "late", 10, 1)
    q = (spark.readStream.format("kafkapy").options(**opts(broker, subscribe="late")).load()
         .selectExpr("CAST(value AS STRING) AS v").writeStream.format("memory")
         .queryName("late_values").option("checkpointLocation", str(tmp_path / "c"))
         .trigger(processingTime="200 milliseconds").start())
    try:
        deadline = time.monotonic() + 60
        while q.lastProgress is None and time.monotonic() < deadline:
            time.sleep(0.2)
        produce(broker.bootstrap, "late", 5, 1, first=10)
        while time.monotonic() < deadline:
            q.processAllAvailable()
            got = sorted(r.v for r in spark.sql("SELECT v FROM late_values").collect())
            if len(got) >= 5:
                break
            time.sleep(0.5)
        # startingOffsets defaults to latest for streaming: only the 5 produced after start
        assert got == sorted(f"value-{i}" * (1 + i % 3) for i in range(10, 15))
    finally:
        q.stop()


def test_writer_round_trips_keys_values_headers(spark, broker, tmp_path):
    create(broker.bootstrap, "written", 2)
    rows = [(f"k{i}" if i % 4 else None, f"v{i}".encode(), i % 2,
             [("a", f"{i}".encode()), ("b", None)] if i % 2 else [])
            for i in range(50)]
    df = spark.createDataFrame(
        rows, "key string, value binary, partition int, "
              "headers array<struct<key:string,value:binary>>")
    df.write.format("kafkapy").options(**opts(broker, topic="written")).mode("append").save()
    back = read(spark, broker, subscribe="written", includeHeaders="true").collect()
    got = sorted(((None if r.key is None else bytes(r.key).decode(), bytes(r.value), r.partition,
                   [(h.key, None if h.value is None else bytes(h.value)) for h in r.headers])
                  for r in back), key=lambda t: t[1])
    assert got == sorted(((k, v, p, h) for k, v, p, h in rows), key=lambda t: t[1])

    # the topic column wins over no option; streaming writer too
    q = (spark.readStream.format("kafkapy")
         .options(**opts(broker, subscribe="written", startingOffsets="earliest")).load()
         .selectExpr("'copied' AS topic", "key", "value")
         .writeStream.format("kafkapy").options(**opts(broker))
         .option("checkpointLocation", str(tmp_path / "w")).trigger(availableNow=True).start())
    q.awaitTermination(120)
    assert q.exception() is None
    copied = read(spark, broker, subscribe="copied").collect()
    assert sorted(bytes(r.value) for r in copied) == sorted(v for _, v, _, _ in rows)


def test_deleted_records_fail_on_data_loss(spark, broker, tmp_path):
    create(broker.bootstrap, "trimmed", 1)
    produce(broker.bootstrap, "trimmed", 20, 1)
    ckpt = str(tmp_path / "ckpt")

    def stream(fail: bool):
        q = (spark.readStream.format("kafkapy")
             .options(**opts(broker, subscribe="trimmed", startingOffsets="earliest",
                             maxOffsetsPerTrigger=20, failOnDataLoss=str(fail).lower()))
             .load().writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", ckpt).trigger(availableNow=True).start())
        try:
            q.awaitTermination(120)
        except StreamingQueryException:
            pass  # checked by the caller through q.exception()
        return q

    q = stream(True)  # reads [0, 20)
    assert q.exception() is None
    produce(broker.bootstrap, "trimmed", 30, 1, first=20)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.delete_records([TopicPartition("trimmed", 0, 35)]).values():
        f.result(10)

    with pytest.raises(Exception, match="failOnDataLoss"):
        read(spark, broker, subscribe="trimmed", startingOffsets='{"trimmed":{"0":5}}').collect()
    assert read(spark, broker, subscribe="trimmed", startingOffsets='{"trimmed":{"0":5}}',
                failOnDataLoss="false").count() == 15

    q = stream(True)
    assert q.exception() is not None and "failOnDataLoss" in str(q.exception())
    q = stream(False)
    assert q.exception() is None
    offsets = sorted(r.offset for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert offsets == list(range(20)) + list(range(35, 50))


def test_bad_input_errors(spark, broker, data):
    with pytest.raises(Exception, match="'no-such-topic' does not exist"):
        read(spark, broker, subscribe="no-such-topic").collect()
    with pytest.raises(Exception, match="exactly one of the options"):
        read(spark, broker).collect()
    with pytest.raises(Exception, match="option 'startingOffsets' is not valid JSON"):
        read(spark, broker, subscribe="src", startingOffsets="{bad").collect()
    with pytest.raises(Exception, match="option 'failOnDataLoss' must be 'true' or 'false'"):
        read(spark, broker, subscribe="src", failOnDataLoss="maybe").collect()
    with pytest.raises(Exception, match="option 'kafka.auto.offset.reset' is not supported"):
        read(spark, broker, subscribe="src", **{"kafka.auto.offset.reset": "earliest"}).collect()
    with pytest.raises(Exception, match="kafka.no.such.setting"):
        read(spark, broker, subscribe="src", **{"kafka.no.such.setting": "1"}).collect()
    with pytest.raises(Exception, match="startingOffsets' must give an offset for exactly"):
        read(spark, broker, subscribe="src", startingOffsets='{"src":{"0":1}}').collect()
    # an unreachable bootstrap server: a clear error within the configured timeout
    t = time.monotonic()
    with pytest.raises(Exception, match="kafka.default.api.timeout.ms=3000"):
        spark.read.format("kafkapy").options(**{
            "kafka.bootstrap.servers": f"127.0.0.1:{free_port()}", "subscribe": "x",
            "kafka.default.api.timeout.ms": "3000"}).load().collect()
    assert time.monotonic() - t < 30


def test_batch_read_committed_skips_aborted_and_open_transactions(spark, tmp_path):
    """kafka.isolation.level=read_committed: aborted records never appear, reads end at the
    first open transaction; read_uncommitted reads them all (markers are never rows). A raw
    client plays the transaction coordinator (its own broker: KIP-890 verification off)."""
    broker = BrokerProcess(tmp_path, {"transaction.partition.verification.enable": "false"})
    broker.start()
    try:
        _read_committed_checks(spark, broker)
    finally:
        broker.stop()


def _read_committed_checks(spark, broker):
    from compat_tests.rawclient import RawClient
    from compat_tests.txn_raw import batch, create_topic, producer_id, txn_batch, write_markers
    from compat_tests.txn_raw import produce as raw_produce

    with RawClient(broker.bootstrap) as c:
        create_topic(c, "txsrc")
        a, b, o = producer_id(c), producer_id(c), producer_id(c)
        raw_produce(c, "txsrc", batch([b"p0"]))
        raw_produce(c, "txsrc", txn_batch(a, 0, [b"a0", b"a1"]), "ta")
        raw_produce(c, "txsrc", txn_batch(b, 0, [b"b0"]), "tb")
        write_markers(c, a, True, {"txsrc": [0]})
        write_markers(c, b, False, {"txsrc": [0]})
        raw_produce(c, "txsrc", batch([b"p1"]))
        raw_produce(c, "txsrc", txn_batch(o, 0, [b"open"]), "to")
        raw_produce(c, "txsrc", batch([b"p2"]))

    def values(**kw):
        df = read(spark, broker, subscribe="txsrc", **kw)
        return [bytes(r.value) for r in df.orderBy("offset").collect()]

    assert values(**{"kafka.isolation.level": "read_committed"}) == [b"p0", b"a0", b"a1", b"p1"]
    assert values() == [b"p0", b"a0", b"a1", b"b0", b"p1", b"open", b"p2"]
