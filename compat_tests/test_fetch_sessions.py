"""Incremental fetch sessions (KIP-227) against a real broker: the protocol with a raw client
(every session error, what incremental responses hold, long polls on a session), the cache
bounded by max.incremental.fetch.session.cache.slots, and real clients that use sessions
(kafka-python here, Kafka's Java client in suites/test_java_client.py) reading every record
exactly once through a proxy that shows they stayed on incremental fetches.

librdkafka (confluent-kafka, kcat) does not implement fetch sessions: it sends every fetch with
session id 0 and epoch -1, which the broker answers sessionless (the rest of the suite)."""

from __future__ import annotations

import datetime
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.fetch.v12 import request as f12
from kio.schema.fetch.v13 import request as f13

from kafkapy.protocol.errors import ErrorCode
from kafkapy.testing import BrokerProcess, free_port

from .fetch_proxy import FetchProxy
from .rawclient import RawClient


def _partition(m, p, offset):
    return m.FetchPartition(partition=p, current_leader_epoch=-1, fetch_offset=offset,
                            last_fetched_epoch=-1, log_start_offset=-1,
                            partition_max_bytes=1 << 20)


def fetch(client, session_id, epoch, parts=(), forgotten=(), wait_ms=300, topic_id=None):
    """One Fetch v12 (v13 with ``topic_id``); returns (error, session id, [(partition, high
    watermark, record bytes)], seconds it took)."""
    m = f13 if topic_id else f12
    topics = ()
    if parts:
        key = {"topic_id": topic_id} if topic_id else {"topic": "s"}
        topics = (m.FetchTopic(**key, partitions=tuple(_partition(m, p, o) for p, o in parts)),)
    gone = ()
    if forgotten:
        key = {"topic_id": topic_id} if topic_id else {"topic": "s"}
        gone = (m.ForgottenTopic(**key, partitions=tuple(forgotten)),)
    req = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(milliseconds=wait_ms),
        min_bytes=1, max_bytes=1 << 24, isolation_level=0, session_id=session_id,
        session_epoch=epoch, topics=topics, forgotten_topics_data=gone, rack_id="",
    )
    start = time.monotonic()
    r = client.request(req)
    took = time.monotonic() - start
    parts_out = [(p.partition_index, p.high_watermark, len(p.records or b""))
                 for t in r.responses for p in t.partitions]
    return r.error_code, r.session_id, parts_out, took


def topic_id_of(client, name):
    m = __import__("kio.schema.metadata.v12.request", fromlist=["x"])
    resp = client.request(m.MetadataRequest(
        topics=(m.MetadataRequestTopic(topic_id=None, name=name),),
        allow_auto_topic_creation=False, include_topic_authorized_operations=False,
    ))
    return resp.topics[0].topic_id


def produce(bootstrap, partition, n=1):
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        p.produce("s", f"r{i}".encode(), partition=partition)
    assert p.flush(10) == 0


def create_topic(bootstrap, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("s", partitions, 1)])["s"].result(20)


@pytest.fixture
def session_broker(broker):
    create_topic(broker.bootstrap, 4)
    return broker


def test_a_session_answers_only_what_changed(session_broker):
    bs = session_broker.bootstrap
    produce(bs, 0, 3)
    with RawClient(bs) as c:
        err, sid, parts, _ = fetch(c, 0, 0, [(p, 0) for p in range(4)])
        assert err == ErrorCode.none and sid != 0
        assert [(p, hw) for p, hw, _ in parts] == [(0, 3), (1, 0), (2, 0), (3, 0)]
        assert parts[0][2] > 0
        # nothing new for the session's cached offsets... except partition 0, still at 0
        err, sid1, parts, _ = fetch(c, sid, 1)
        assert (err, sid1, [p for p, _, _ in parts]) == (0, sid, [0])
        # the client moves on: nothing at all to say, so the broker waits the whole max wait
        err, _, parts, took = fetch(c, sid, 2, [(0, 3)], wait_ms=400)
        assert (err, parts) == (0, []) and took >= 0.35
        # a produce wakes the waiting fetch: only that partition comes back, with its records
        import threading

        threading.Timer(0.2, produce, (bs, 2)).start()
        err, _, parts, took = fetch(c, sid, 3, wait_ms=5000)
        assert err == 0 and [(p, hw) for p, hw, _ in parts] == [(2, 1)] and parts[0][2] > 0
        assert took < 4
        err, _, parts, _ = fetch(c, sid, 4, [(2, 1)], wait_ms=100)
        assert (err, parts) == (0, [])


def test_session_errors_and_closing(session_broker):
    bs = session_broker.bootstrap
    with RawClient(bs) as c:
        _, sid, _, _ = fetch(c, 0, 0, [(0, 0), (1, 0)])
        assert fetch(c, sid, 5, wait_ms=0)[:2] == (ErrorCode.invalid_fetch_session_epoch, 0)
        assert fetch(c, sid + 1, 1, wait_ms=0)[:2] == (ErrorCode.fetch_session_id_not_found, 0)
        assert fetch(c, sid, 1, wait_ms=0)[:2] == (0, sid)  # an error does not end the session
        # forgetting every partition ends the session; its id is gone
        err, sid2, parts, _ = fetch(c, sid, 2, forgotten=[0, 1], wait_ms=0)
        assert (err, sid2, parts) == (0, 0, [])
        assert fetch(c, sid, 3, wait_ms=0)[0] == ErrorCode.fetch_session_id_not_found
        # a session opened by topic names cannot continue by topic ids
        _, sid, _, _ = fetch(c, 0, 0, [(0, 0)])
        tid = topic_id_of(c, "s")
        assert fetch(c, sid, 1, wait_ms=0, topic_id=tid)[0] == (
            ErrorCode.fetch_session_topic_id_error
        )
        # a full fetch naming a session closes it and opens another; epoch -1 opens none
        err, by_id, parts, _ = fetch(c, sid, 0, [(0, 0), (3, 0)], topic_id=tid, wait_ms=0)
        assert err == 0 and by_id not in (0, sid) and len(parts) == 2
        assert fetch(c, by_id, 1, wait_ms=0, topic_id=tid)[:3] == (0, by_id, [])
        assert fetch(c, sid, 1, wait_ms=0)[0] == ErrorCode.fetch_session_id_not_found
        assert fetch(c, by_id, -1, [(0, 0)], topic_id=tid, wait_ms=0)[1] == 0


def test_log_start_moves_and_out_of_range_offsets_reach_the_session(session_broker):
    """A partition skipped as unchanged is answered again as soon as its log start moves
    (DeleteRecords), and an offset that fell out of range is an error, not silence."""
    from confluent_kafka import TopicPartition

    bs = session_broker.bootstrap
    produce(bs, 1, 5)
    with RawClient(bs) as c:
        _, sid, _, _ = fetch(c, 0, 0, [(0, 0), (1, 5)])
        assert fetch(c, sid, 1, wait_ms=0)[2] == []  # both unchanged: nothing listed, unread
        assert fetch(c, sid, 2, wait_ms=0)[2] == []
        admin = AdminClient({"bootstrap.servers": bs})
        tp = TopicPartition("s", 1, 3)
        admin.delete_records([tp])[tp].result(10)
        err, _, parts, _ = fetch(c, sid, 3, wait_ms=0)
        assert (err, [(p, hw) for p, hw, _ in parts]) == (0, [(1, 5)])
        assert fetch(c, sid, 4, wait_ms=0)[2] == []
        # the client goes back below the new log start: OFFSET_OUT_OF_RANGE for that partition
        m = f12
        req = m.FetchRequest(
            cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1,
            max_bytes=1 << 20, isolation_level=0, session_id=sid, session_epoch=5,
            topics=(m.FetchTopic(topic="s", partitions=(_partition(m, 1, 1),)),),
            forgotten_topics_data=(), rack_id="",
        )
        r = c.request(req)
        codes = [(p.partition_index, p.error_code) for t in r.responses for p in t.partitions]
        assert codes == [(1, ErrorCode.offset_out_of_range)]


def test_a_deleted_topic_is_reported_in_the_session(session_broker):
    bs = session_broker.bootstrap
    with RawClient(bs) as c:
        _, sid, _, _ = fetch(c, 0, 0, [(0, 0), (1, 0)])
        admin = AdminClient({"bootstrap.servers": bs})
        admin.delete_topics(["s"])["s"].result(10)
        err, _, parts, took = fetch(c, sid, 1, wait_ms=3000)
        assert err == 0 and took < 2  # errors answer at once
        errors = {p for p, _, _ in parts}
        assert errors == {0, 1}


def test_the_cache_holds_at_most_the_configured_sessions(broker_factory):
    b = broker_factory({"max.incremental.fetch.session.cache.slots": "1"})
    create_topic(b.bootstrap, 4)
    with RawClient(b.bootstrap) as one, RawClient(b.bootstrap) as two:
        _, first, _, _ = fetch(one, 0, 0, [(0, 0)])
        # the only slot is taken by a young session: a bigger consumer session cannot evict it
        err, second, parts, _ = fetch(two, 0, 0, [(p, 0) for p in range(4)])
        assert (err, second, len(parts)) == (0, 0, 4)  # answered in full, without a session
        assert fetch(one, first, 1, wait_ms=0)[:2] == (0, first)
    off = broker_factory({"max.incremental.fetch.session.cache.slots": "0"}, name="off")
    create_topic(off.bootstrap, 1)
    with RawClient(off.bootstrap) as c:
        assert fetch(c, 0, 0, [(0, 0)], wait_ms=0)[1] == 0


def test_a_session_evicted_during_its_long_poll(broker_factory):
    """A follower's full fetch (privileged) evicts a young consumer session from a full cache
    while the consumer's long poll waits on it: the poll is still answered at its deadline (as
    Kafka's delayed fetch is; its watch went with the session), and the consumer's next
    incremental fetch gets FETCH_SESSION_ID_NOT_FOUND."""
    import threading

    b = broker_factory({"max.incremental.fetch.session.cache.slots": "1"})
    create_topic(b.bootstrap, 2)
    with RawClient(b.bootstrap) as consumer, RawClient(b.bootstrap) as follower:
        _, sid, _, _ = fetch(consumer, 0, 0, [(0, 0), (1, 0)])
        got = {}
        poll = threading.Thread(target=lambda: got.update(r=fetch(consumer, sid, 1, wait_ms=2000)))
        poll.start()
        time.sleep(0.5)
        m = f12
        req = m.FetchRequest(
            cluster_id=None, replica_id=7, max_wait=datetime.timedelta(0), min_bytes=1,
            max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=0,
            topics=(m.FetchTopic(topic="s", partitions=(_partition(m, 0, 0),)),),
            forgotten_topics_data=(), rack_id="",
        )
        assert follower.request(req).session_id not in (0, sid)  # took the only slot
        poll.join(10)
        err, _, parts, took = got["r"]
        assert err == 0 and parts == [] and 1.9 < took < 4
        assert fetch(consumer, sid, 2, wait_ms=0)[0] == ErrorCode.fetch_session_id_not_found


@pytest.fixture
def proxied_broker(tmp_path):
    port = free_port()
    proxy = FetchProxy(port)
    b = BrokerProcess(tmp_path / "broker", {
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}",
        "group.initial.rebalance.delay.ms": "0",
    }, port=port).start()
    yield b, proxy, f"127.0.0.1:{proxy.port}"
    b.stop()
    proxy.close()


def test_kafka_python_reads_everything_on_incremental_sessions(proxied_broker):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewTopic as KpTopic

    b, proxy, bs = proxied_broker
    admin = KafkaAdminClient(bootstrap_servers=bs)
    admin.create_topics([KpTopic("s", 30, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bs, linger_ms=5)
    consumer = KafkaConsumer("s", bootstrap_servers=bs, group_id="sessions",
                             auto_offset_reset="earliest", fetch_max_wait_ms=100,
                             enable_auto_commit=False)
    seen: dict[tuple[int, int], bytes] = {}
    expected: dict[tuple[int, int], bytes] = {}

    def send_round(r, partitions):
        for p in partitions:
            for i in range(3):
                md = producer.send("s", f"{r}-{p}-{i}".encode(), partition=p).get(10)
                expected[(p, md.offset)] = f"{r}-{p}-{i}".encode()

    def consume_until_complete(deadline_s):
        end = time.monotonic() + deadline_s
        while set(seen) != set(expected) and time.monotonic() < end:
            for records in consumer.poll(200).values():
                for rec in records:
                    assert (rec.partition, rec.offset) not in seen, "a record read twice"
                    seen[(rec.partition, rec.offset)] = rec.value

    try:
        send_round(0, range(30))
        consume_until_complete(30)
        for r in range(1, 4):  # idle fetches in between, then a few partitions get records
            t = time.monotonic() + 1.0
            while time.monotonic() < t:
                assert not consumer.poll(100)
            send_round(r, (r, 7 * r % 30, 29))
            consume_until_complete(20)
    finally:
        consumer.close()
        producer.close()
    assert seen == expected
    fetches, responses = proxy.snapshot()
    incremental = [f for f in fetches if f.session_id != 0 and f.epoch > 0]
    assert len(incremental) > 10, fetches[:20]
    # incremental fetches name (almost) nothing and are answered with (almost) nothing
    assert sum(f.partitions for f in incremental) < len(incremental) * 5
    assert all(r.error == 0 for r in responses), [r for r in responses if r.error][:5]
    assert sum(r.partitions == 0 for r in responses) > len(responses) // 2
    assert not proxy.problems, proxy.problems[:3]
