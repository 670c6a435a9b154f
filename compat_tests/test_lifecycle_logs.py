"""The log lifecycle against a real broker with real clients: retention by time and by size
deleting segments (consumers positioned before the log start are reset), DeleteRecords through
the confluent-kafka and kafka-python admin clients, compaction seen by a consumer (latest value
per key, offsets preserved, tombstones gone after delete.retention.ms), broker-side
recompression to the topic's codec seen in fetched batches, and the dump tool on the files."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
import uuid

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.fetch.v11.request import FetchPartition, FetchRequest, FetchTopic
from kio.static.primitive import i8, i32, i64

from kafkapy.protocol.record_batch import decode_records, iter_batches
from kafkapy.storage.checkpoints import read_partition_metadata

from .rawclient import RawClient

FAST = {
    "log.retention.check.interval.ms": "200",
    "log.segment.delete.delay.ms": "300",
    "log.cleaner.backoff.ms": "200",
}
HOUR_MS = 3_600_000


def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def create(bootstrap, name, config):
    client = admin(bootstrap)
    client.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(timeout=15)


def produce_each(bootstrap, topic, records, **conf):
    """One batch per record (flush after each) so small segments roll often."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **conf})
    errors = []
    for key, value, ts in records:
        extra = {"timestamp": ts} if ts is not None else {}
        p.produce(topic, key=key, value=value, on_delivery=lambda e, m: errors.append(e), **extra)
        p.flush(10)
    assert errors == [None] * len(records), errors


def consumer(bootstrap, reset="earliest"):
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "lifecycle-no-commits",
            "enable.auto.commit": False,
            "auto.offset.reset": reset,
        }
    )


def consume_all(bootstrap, topic, start=OFFSET_BEGINNING, timeout=15.0):
    c = consumer(bootstrap)
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        c.assign([TopicPartition(topic, 0, start)])
        out = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                if out and out[-1].offset() >= high - 1:
                    break
                continue
            if msg.error():
                continue
            out.append(msg)
            if msg.offset() >= high - 1:
                break
        return low, high, out
    finally:
        c.close()


def wait_for(predicate, timeout=20.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not reached in time")


def watermarks(bootstrap, topic):
    c = consumer(bootstrap)
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        c.close()


def test_retention_by_time_deletes_segments_and_resets_consumers(broker_factory):
    b = broker_factory(FAST)
    create(b.bootstrap, "rt", {"segment.bytes": "600", "retention.ms": str(HOUR_MS)})
    old = int(time.time() * 1000) - 3 * HOUR_MS
    produce_each(b.bootstrap, "rt", [(b"k%d" % i, bytes(300), old + i) for i in range(6)])
    produce_each(b.bootstrap, "rt", [(b"new", b"fresh" + bytes(300), None)])
    low, high = wait_for(lambda: (lambda w: w if w[0] > 0 else None)(watermarks(b.bootstrap, "rt")))
    assert high == 7
    assert low == 6  # every old segment went, the active one (with offset 6) stays
    seg_dir = b.data_dir / "logs" / "rt-0"
    wait_for(lambda: not list(seg_dir.glob("*.deleted")))
    assert not (seg_dir / "00000000000000000000.log").exists()
    # a consumer positioned at 0 is out of range and resets to the earliest offset
    _, _, msgs = consume_all(b.bootstrap, "rt", start=0)
    assert [m.offset() for m in msgs] == [6] and msgs[0].value().startswith(b"fresh")


def test_retention_by_size(broker_factory):
    b = broker_factory(FAST)
    create(b.bootstrap, "rs", {"segment.bytes": "600", "retention.bytes": "1500"})
    produce_each(b.bootstrap, "rs", [(b"k", bytes(300), None) for _ in range(10)])
    low, high = wait_for(lambda: (lambda w: w if w[0] > 0 else None)(watermarks(b.bootstrap, "rs")))
    assert high == 10 and low >= 5
    size = sum(p.stat().st_size for p in (b.data_dir / "logs" / "rs-0").glob("*.log"))
    assert size <= 1500 + 600


def test_delete_records_confluent_and_kafka_python(broker):
    create(broker.bootstrap, "dr", {"segment.bytes": "600"})
    produce_each(broker.bootstrap, "dr", [(b"k", bytes(300), None) for _ in range(8)])
    client = admin(broker.bootstrap)
    tp = TopicPartition("dr", 0, 3)
    result = client.delete_records([tp])[tp].result(timeout=15)
    assert result.low_watermark == 3
    assert watermarks(broker.bootstrap, "dr") == (3, 8)
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP

    kadmin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        out = kadmin.delete_records({KTP("dr", 0): 5})
        assert out[KTP("dr", 0)]["low_watermark"] == 5
    finally:
        kadmin.close()
    low, high, msgs = consume_all(broker.bootstrap, "dr", start=0)
    assert (low, high) == (5, 8) and [m.offset() for m in msgs] == [5, 6, 7]


def test_compaction_visible_to_consumer(broker_factory):
    b = broker_factory(FAST)
    create(
        b.bootstrap,
        "ct",
        {
            "cleanup.policy": "compact",
            "segment.bytes": "800",
            "min.cleanable.dirty.ratio": "0.01",
            "delete.retention.ms": "1000",
        },
    )
    records = []
    for r in range(5):
        for k in range(4):
            records.append((b"key%d" % k, b"value-%d-%d" % (k, r) + bytes(60), None))
    records.append((b"key3", None, None))  # tombstone
    records += [(b"key0", b"last", None), (b"pad", bytes(700), None), (b"pad", b"x", None)]
    produce_each(b.bootstrap, "ct", records, **{"compression.type": "lz4"})
    expected = {}
    for k, v, _ in records:
        expected[k] = v

    def compacted():
        low, high, msgs = consume_all(b.bootstrap, "ct")
        keys = {m.key() for m in msgs}
        return msgs if len(msgs) < len(records) and b"key3" not in keys else None

    msgs = wait_for(compacted, timeout=30)
    offsets = [m.offset() for m in msgs]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    view = {}
    for m in msgs:
        view[m.key()] = m.value()
    assert view == {k: v for k, v in expected.items() if v is not None}
    # offsets are the produced ones (gaps allowed): key0's last value kept its offset
    assert [m.offset() for m in msgs if m.key() == b"key0"][-1] == 21


def fetch_batches(bootstrap, topic):
    req = FetchRequest(
        max_wait=datetime.timedelta(milliseconds=100),
        min_bytes=i32(1),
        max_bytes=i32(10_000_000),
        isolation_level=i8(0),
        session_id=i32(0),
        session_epoch=i32(-1),
        topics=(
            FetchTopic(
                topic=topic,
                partitions=(
                    FetchPartition(
                        partition=i32(0), fetch_offset=i64(0), partition_max_bytes=i32(10_000_000)
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )
    with RawClient(bootstrap) as c:
        resp = c.request(req)
    data = resp.responses[0].partitions[0].records
    return [(h, data[pos : pos + h.size]) for pos, h in iter_batches(data)]


def test_broker_recompresses_to_topic_codec_and_dump_tool(broker):
    create(broker.bootstrap, "gz", {"compression.type": "gzip"})
    produce_each(
        broker.bootstrap,
        "gz",
        [(b"k%d" % i, b"v%d" % i, None) for i in range(3)],
        **{"compression.type": "lz4"},
    )
    produce_each(broker.bootstrap, "gz", [(b"plain", b"p", None)])
    batches = fetch_batches(broker.bootstrap, "gz")
    assert [h.codec for h, _ in batches] == [1, 1, 1, 1]  # gzip
    assert [h.base_offset for h, _ in batches] == [0, 1, 2, 3]
    values = [r.value for _, raw in batches for r in decode_records(raw)]
    assert values == [b"v0", b"v1", b"v2", b"p"]
    _, _, msgs = consume_all(broker.bootstrap, "gz")
    assert [m.value() for m in msgs] == values
    # the dump tool reads the running broker's files
    seg = broker.data_dir / "logs" / "gz-0" / "00000000000000000000.log"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkapy.cli.main",
            "dump-log",
            "--files",
            str(seg),
            "--print-data-log",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines()[0] == f"Dumping {seg}"
    assert out.count("compresscodec: gzip") == 4 and "isvalid: true" in out
    assert "| offset: 3 CreateTime:" in out and "key: plain payload: p" in out


def test_created_partitions_get_their_topic_id_files_without_any_record(broker):
    """partition.metadata is written in the background after CreateTopics, before any record
    (as Kafka's flush-metadata-file task), and holds the id Metadata reports."""
    client = admin(broker.bootstrap)
    client.create_topics([NewTopic("ids", 12, 1)])["ids"].result(timeout=15)
    desc = client.describe_topics(TopicCollection(["ids"]))["ids"].result(timeout=15)
    files = [broker.data_dir / "logs" / f"ids-{p}" / "partition.metadata" for p in range(12)]
    deadline = time.monotonic() + 15
    while not all(f.exists() for f in files) and time.monotonic() < deadline:
        time.sleep(0.05)
    tid = desc.topic_id  # confluent-kafka's Uuid: its two halves as signed longs
    want = uuid.UUID(int=(tid.get_most_significant_bits() % 2**64) << 64
                     | tid.get_least_significant_bits() % 2**64)
    assert {read_partition_metadata(f) for f in files} == {want}
