"""Client quotas enforced (issue 15): produce and fetch byte rates measured against the configured
rate, throttle times seen by confluent-kafka and kafka-python, request-time quotas muting the
connection, and per-IP connection creation rates.

The broker samples rates over quota.window.num=2 windows of 1 s. Measuring a rate: the client
first sends at 80 % of the quota for WARM_UP seconds (samples fill without the burst a fresh
rate allows, which Kafka's algorithm repays with a long throttle and lasting oscillations), then
as fast as it can; the rate is taken from the end of the warm-up to the end, a few seconds in
which the broker's throttling alone limits it. Requests are small relative to the quota (Kafka's
own algorithm delivers large fetches below the rate: it takes back a throttled fetch's bytes).
Clients that add pauses of their own after a throttle (the consumers) are checked for what the
quota guarantees: throttle times seen, and never more than the rate plus one window's burst.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid

import pytest
from kio.schema.alter_client_quotas.v1 import request as acq
from kio.schema.metadata.v12 import request as md

from kafkapy.protocol.errors import ErrorCode
from kafkapy.testing import BrokerProcess

from .rawclient import RawClient, encode_request

RATE = 500_000  # bytes/s
RECORDS, SIZE = 3000, 1000  # 3 MB per run
FETCH_BYTES = 16_384
WARM_UP = 2.5  # seconds at 80 % of the quota


@pytest.fixture(scope="module")
def broker(module_broker_factory) -> BrokerProcess:
    return module_broker_factory(
        {"quota.window.num": "2", "quota.window.size.seconds": "1", "num.partitions": "1"},
        name="quotas",
    )


def set_quotas(broker: BrokerProcess, entity: tuple[tuple[str, str | None], ...],
               via: RawClient | None = None, **values):
    """AlterClientQuotas for one entity (``request_percentage=None`` removes that quota)."""
    with via or RawClient(broker.bootstrap) as c:
        resp = c.request(acq.AlterClientQuotasRequest(
            entries=(acq.EntryData(
                entity=tuple(acq.EntityData(entity_type=t, entity_name=n) for t, n in entity),
                ops=tuple(acq.OpData(key=k, value=float(v or 0), remove=v is None)
                          for k, v in values.items()),
            ),),
            validate_only=False,
        ))
    assert resp.entries[0].error_code == ErrorCode.none, resp


def client(prefix: str) -> str:
    cid = f"{prefix}-{uuid.uuid4().hex[:6]}"
    return cid


class Pace:
    """Sends at 80 % of the quota until WARM_UP has passed; then records what is delivered."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.sent = 0
        self.delivered: list[tuple[float, int]] = []  # after the warm-up: (time, bytes)

    def wait(self, nbytes: int) -> None:
        """Call before sending ``nbytes``: sleeps while ahead of the warm-up pace."""
        while True:
            elapsed = time.monotonic() - self.start
            if elapsed >= WARM_UP or self.sent + nbytes <= 0.8 * RATE * elapsed:
                break
            time.sleep(0.005)
        self.sent += nbytes

    def done(self, nbytes: int) -> None:
        now = time.monotonic()
        if now - self.start >= WARM_UP:
            self.delivered.append((now, nbytes))

    def rate(self) -> float:
        """Bytes/s delivered after the warm-up (the first delivery marks the start)."""
        first, *rest = self.delivered
        return sum(n for _, n in rest) / (rest[-1][0] - first[0])


def within(rate: float) -> bool:
    return 0.9 * RATE <= rate <= 1.1 * RATE


@pytest.fixture(scope="module")
def filled(broker: BrokerProcess) -> str:
    """A topic holding RECORDS records of SIZE bytes (written without a quota)."""
    from confluent_kafka import Producer

    topic = f"filled-{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5,
                         "batch.size": 16384})
    for _ in range(RECORDS):
        producer.produce(topic, b"v" * SIZE)
        producer.poll(0)
    assert producer.flush(30) == 0
    return topic


def test_confluent_producer_at_the_quota(broker: BrokerProcess) -> None:
    from confluent_kafka import Producer

    cid = client("ck")
    set_quotas(broker, (("client-id", cid),), producer_byte_rate=RATE)
    throttled: list[float] = []
    producer = Producer({
        "bootstrap.servers": broker.bootstrap, "client.id": cid, "linger.ms": 5,
        "batch.size": 16384, "throttle_cb": lambda e: throttled.append(e.throttle_time),
    })
    pace = Pace()
    for _ in range(RECORDS):
        pace.wait(SIZE)
        while True:
            try:
                producer.produce(f"q-{cid}", b"v" * SIZE,
                                 on_delivery=lambda err, m: pace.done(len(m.value())))
                break
            except BufferError:
                producer.poll(0.005)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert throttled and max(throttled) > 0  # librdkafka saw the throttle times
    print(f"measured produce rate {pace.rate():.0f} B/s, quota {RATE}")
    assert within(pace.rate()), f"produce {pace.rate():.0f} B/s for a quota of {RATE}"


def test_kafka_python_producer_at_the_quota(broker: BrokerProcess) -> None:
    from kafka import KafkaProducer

    cid = client("kp")
    # (user, client-id) is the most specific entity: it wins over the client-id default
    set_quotas(broker, (("client-id", None),), producer_byte_rate=RATE * 100)
    set_quotas(broker, (("user", "ANONYMOUS"), ("client-id", cid)), producer_byte_rate=RATE)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, client_id=cid, linger_ms=5,
                             batch_size=16384)
    pace = Pace()
    futures = []
    for _ in range(RECORDS):
        pace.wait(SIZE)
        futures.append(producer.send(f"q-{cid}", b"v" * SIZE).add_callback(
            lambda _md: pace.done(SIZE)))
    for f in futures:
        f.get(60)
    throttle_max = producer.metrics()["producer-metrics"]["throttle-time-max"]
    producer.close()
    set_quotas(broker, (("client-id", None),), producer_byte_rate=None)
    assert throttle_max > 0  # kafka-python saw the throttle times
    print(f"measured produce rate {pace.rate():.0f} B/s, quota {RATE}")
    assert within(pace.rate()), f"produce {pace.rate():.0f} B/s for a quota of {RATE}"


def test_fetch_at_the_quota(broker: BrokerProcess, filled: str) -> None:
    """Fetches sent as soon as the last was answered (a muted connection reads nothing
    meanwhile): the rate the broker delivers, without a client's own pauses."""
    cid = client("raw")
    set_quotas(broker, (("client-id", cid),), consumer_byte_rate=RATE)
    offset, throttles, pace = 0, [], Pace()
    with RawClient(broker.bootstrap, client_id=cid) as c:
        while offset < RECORDS:
            pace.wait(FETCH_BYTES)
            resp = c.request(fetch_request(filled, offset))
            throttles.append(resp.throttle_time.total_seconds())
            records = resp.responses[0].partitions[0].records if resp.responses else None
            got = batches_end(records, offset)
            pace.done((got - offset) * SIZE)
            offset = got
    assert any(throttles)  # some fetches were throttled: answered empty, with the time
    print(f"measured fetch rate {pace.rate():.0f} B/s, quota {RATE}")
    assert within(pace.rate()), f"fetch {pace.rate():.0f} B/s for a quota of {RATE}"


def test_consumers_observe_fetch_throttling(broker: BrokerProcess, filled: str) -> None:
    """confluent-kafka and kafka-python consumers are throttled: they see throttle times and
    read no faster than the quota allows (the rate plus one window's burst); they add pauses of
    their own after a throttled fetch, so they may stay below it."""
    from confluent_kafka import Consumer
    from kafka import KafkaConsumer

    def allowed(seconds: float) -> float:
        return 1.1 * RATE * seconds + RATE  # quota.window.num=2: one window of burst

    cid, wanted = client("cons"), RECORDS // 2
    set_quotas(broker, (("client-id", cid),), consumer_byte_rate=RATE)
    throttled: list[float] = []
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap, "client.id": cid, "group.id": cid,
        "auto.offset.reset": "earliest", "fetch.max.bytes": FETCH_BYTES,
        "max.partition.fetch.bytes": FETCH_BYTES, "message.max.bytes": FETCH_BYTES,
        "throttle_cb": lambda e: throttled.append(e.throttle_time),
    })
    consumer.subscribe([filled])
    read, start = 0, time.monotonic()
    try:
        while read < wanted and time.monotonic() - start < 60:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                read += 1
    finally:
        consumer.close()
    assert read == wanted and throttled and max(throttled) > 0
    assert wanted * SIZE <= allowed(time.monotonic() - start)
    time.sleep(2.1)  # the samples of the shared client-id rate expire (2 windows)
    kp = KafkaConsumer(filled, bootstrap_servers=broker.bootstrap, client_id=cid,
                       auto_offset_reset="earliest", fetch_max_bytes=FETCH_BYTES,
                       max_partition_fetch_bytes=FETCH_BYTES, consumer_timeout_ms=20000)
    read, start = 0, time.monotonic()
    for _ in kp:
        read += 1
        if read == wanted:
            break
    throttle = max(v.get("throttle-time-max", 0) for v in kp.metrics().values())
    kp.close()
    assert read == wanted and throttle > 0
    assert wanted * SIZE <= allowed(time.monotonic() - start)


def fetch_request(topic: str, offset: int):
    import datetime

    from kio.schema.fetch.v12 import request as f

    return f.FetchRequest(
        replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=FETCH_BYTES,
        isolation_level=0, session_id=0, session_epoch=-1,
        topics=(f.FetchTopic(topic=topic, partitions=(f.FetchPartition(
            partition=0, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
            log_start_offset=-1, partition_max_bytes=FETCH_BYTES),)),),
        forgotten_topics_data=(), rack_id="")


def batches_end(records: bytes | None, offset: int) -> int:
    """The offset after the last whole record batch in ``records`` (``offset`` if none)."""
    data, pos = bytes(records or b""), 0
    while pos + 61 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        offset = base + struct.unpack_from(">i", data, pos + 57)[0]
        pos += 12 + length
    return offset


def test_request_time_quota_throttles_and_mutes(broker: BrokerProcess) -> None:
    cid = client("req")
    set_quotas(broker, (("client-id", cid),), request_percentage=0.01)  # 0.1 ms/s of a handler
    request = md.MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                 include_topic_authorized_operations=True)
    with RawClient(broker.bootstrap) as c:
        throttles = []
        for i in range(20):
            c.sock.sendall(_frame(request, i, cid))
            resp = _read_metadata(c)
            throttles.append(resp.throttle_time.total_seconds() * 1000)
            if throttles[-1] > 0:
                break
        assert throttles[-1] > 0  # capped at one window
        assert throttles[-1] <= 1000
        # muted: the next request is answered only after the throttle time
        start = time.monotonic()
        c.sock.sendall(_frame(request, 99, cid))
        _read_metadata(c)
        assert time.monotonic() - start >= throttles[-1] / 1000 * 0.8
    set_quotas(broker, (("client-id", cid),), request_percentage=None)


def _frame(entity, correlation_id: int, client_id: str) -> bytes:
    payload = encode_request(entity, correlation_id, client_id)
    return len(payload).to_bytes(4, "big") + payload


def _read_metadata(c: RawClient):
    from kio.index import load_response_schema
    from kio.serial import entity_reader

    frame = c.recv_frame()
    return entity_reader(load_response_schema(3, 12))(frame, 5)[0]


def test_connection_creation_rate_per_ip(broker: BrokerProcess) -> None:
    admin = RawClient(broker.bootstrap)  # opened before the limit
    set_quotas(broker, (("ip", "127.0.0.1"),), via=_Kept(admin), connection_creation_rate=5)
    try:
        opened = []
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
            opened.append(s)
        closed = 0
        for s in opened:  # refused ones are closed after at most one window
            s.settimeout(2.0)
            try:
                s.sendall(_frame(md.MetadataRequest(
                    topics=(), allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False), 1, "conn"))
                closed += s.recv(4) == b""
            except (ConnectionError, TimeoutError):
                closed += 1
            finally:
                s.close()
        assert 5 <= closed <= 15, closed  # 5/s over the first windows, the others refused
    finally:
        set_quotas(broker, (("ip", "127.0.0.1"),), via=admin, connection_creation_rate=None)
    with RawClient(broker.bootstrap):  # back to normal
        pass


class _Kept:
    """A RawClient used in a with block without being closed."""

    def __init__(self, c: RawClient) -> None:
        self.c = c

    def __enter__(self) -> RawClient:
        return self.c

    def __exit__(self, *exc: object) -> None:
        pass


def test_broker_wide_connection_creation_rate_is_a_dynamic_config(broker: BrokerProcess) -> None:
    """max.connection.creation.rate set at run time: new connections beyond the rate are served
    late, never refused."""
    from kio.schema.api_versions.v3.request import ApiVersionsRequest
    from kio.schema.incremental_alter_configs.v1 import request as iac

    def set_rate(value: str | None) -> None:
        with RawClient(broker.bootstrap) as c:
            resp = c.request(iac.IncrementalAlterConfigsRequest(
                resources=(iac.AlterConfigsResource(
                    resource_type=4, resource_name="0",
                    configs=(iac.AlterableConfig(name="max.connection.creation.rate",
                                                 config_operation=0 if value else 1,
                                                 value=value),),
                ),),
                validate_only=False,
            ))
        assert resp.responses[0].error_code == ErrorCode.none, resp

    set_rate("4")
    try:
        start, latencies = time.monotonic(), []
        for _ in range(10):  # 4/s over the first window: the later ones wait
            with RawClient(broker.bootstrap) as c:
                resp = c.request(ApiVersionsRequest(client_software_name="t",
                                                    client_software_version="1"))
                assert resp.error_code == ErrorCode.none
                latencies.append(time.monotonic() - start)
        assert latencies[0] < 0.5 and latencies[-1] >= 0.5, latencies
    finally:
        time.sleep(1.1)  # let the connection above be accepted at the rate before resetting
        set_rate(None)
