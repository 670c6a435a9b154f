"""Every served API at every served version, against one real broker: each request is built from
kio's own schema for that version and each answer is checked for meaning, not just for decoding.

The table comes from kafkapy.protocol.api_table.served_apis() (Produce from accept_min). Requests
are built generically (`build`): fields are filled by name (topic names point at the pre-created
topic "sweep", topic ids at its real id, partition indexes 0, ...) then by kafka_type, and each
API's case overrides what it needs. The broker log is checked for "unexpected error" after every
request and once more at the end of the module.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
import typing
import uuid
from functools import cache
from typing import Any

import pytest
from kio.index import load_request_schema

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.testing import BrokerProcess

from .rawclient import RawClient, encode_request

SWEEP = "sweep"
ZERO_UUID = uuid.UUID(int=0)
NOW_MS = int(time.time() * 1000) - 60_000  # recent enough that retention never applies
SEED = {0: 5, 1: 3}  # records written to each partition of "sweep" before the sweep
SEED_TS_STEP = 10  # record i of a seed batch has timestamp NOW_MS + 10 * i
RETENTION_OVERRIDE = "86400000"
UNEXPECTED = "unexpected error"

CASES = [
    (name, v) for name, r in served_apis().items() for v in range(r.accept_min, r.max_version + 1)
]


# --------------------------------------------------------------------------- generic builder


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _entity_in(hint: Any) -> tuple[type | None, bool]:
    """(entity class, is a tuple of them) for a field's type hint, or (None, False)."""
    if dataclasses.is_dataclass(hint):
        return hint, False
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and args and dataclasses.is_dataclass(args[0]):
        return args[0], True
    for a in args:  # X | None, tuple[X, ...] | None
        cls, many = _entity_in(a)
        if cls is not None:
            return cls, many
    return None, False


def _nullable(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


_BY_TYPE: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "float64": 0.0,
    "bool": False,
    "string": SWEEP,
    "timedelta_i32": datetime.timedelta(seconds=5),
    "timedelta_i64": datetime.timedelta(seconds=5),
    "datetime_i64": None,
    "uuid": ZERO_UUID,
    "bytes": b"",
    "records": None,
}


def by_name(env: Env) -> dict[str, Any]:
    """Values for fields (at any depth) that have no kio default, by field name."""
    return {
        "name": SWEEP,
        "topic": SWEEP,
        "topic_names": (SWEEP,),
        "resource_name": SWEEP,
        "resource_type": 2,
        "topic_id": env.topic_id,
        "transactional_id": None,
        "partition_index": 0,
        "partition": 0,
        "index": 0,
        "replica_id": -1,
        "acks": -1,
        "timestamp": -1,
        "leader_epoch": 0,
        "fetch_offset": 0,
        "partition_max_bytes": 1 << 20,
        "min_bytes": 1,
        "max_wait": datetime.timedelta(milliseconds=100),
        "timeout": datetime.timedelta(seconds=10),
        "transaction_timeout": datetime.timedelta(seconds=60),
        "num_partitions": 1,
        "replication_factor": 1,
        "count": 1,
        "isolation_level": 0,
        "forgotten_topics_data": [],
        "assignments": [],
        "configs": [],
        "client_software_name": "kafkapy-sweep",
        "client_software_version": "1.0",
    }


_MISSING = object()


def _has_default(f: dataclasses.Field) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def build(cls: type, spec: dict[str, Any], env: Env, path: str = "") -> Any:
    """Fill the dataclass `cls`: spec (by dotted path, then by bare name, at any depth), then
    kio's default, then by_name(), then a value for the field's kafka_type. A nested entity list
    given as a list of dicts builds one element per dict (each dict overriding the spec below it);
    left unspecified it gets one element from defaults."""
    names = by_name(env)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = _hints(cls)[f.name]
        key = path + f.name
        val = spec.get(key, spec.get(f.name, _MISSING))
        entity, many = _entity_in(hint)
        if entity is not None:
            if val is _MISSING:
                if _has_default(f):
                    continue
                val = names.get(f.name, [{}] if many else {})
            if val is None:
                kwargs[f.name] = None
            elif many:
                items = val if isinstance(val, list | tuple) else [val]
                kwargs[f.name] = tuple(
                    item
                    if dataclasses.is_dataclass(item)
                    else build(entity, {**spec, **item}, env, key + ".")
                    for item in items
                )
            else:
                kwargs[f.name] = (
                    val
                    if dataclasses.is_dataclass(val)
                    else build(entity, {**spec, **val}, env, key + ".")
                )
            continue
        if val is _MISSING:
            if _has_default(f):
                continue
            if f.name in names:
                val = names[f.name]
            elif _nullable(hint):
                val = None
            else:
                val = _BY_TYPE[f.metadata["kafka_type"]]
        kwargs[f.name] = val
    return cls(**kwargs)


def make(api: str, version: int, env: Env, **spec: Any) -> Any:
    cls = load_request_schema(served_apis()[api].key, version)
    return build(cls, spec, env)


# --------------------------------------------------------------------------- environment


@dataclasses.dataclass
class Env:
    broker: BrokerProcess
    topic_id: uuid.UUID = ZERO_UUID
    node_id: int = -1
    cluster_id: str = ""
    leader_epoch: int = 0
    hw: dict[int, int] = dataclasses.field(default_factory=dict)  # expected HW of "sweep"
    producer_ids: set[int] = dataclasses.field(default_factory=set)
    log_mark: int = 0

    def client(self) -> RawClient:
        return RawClient(self.broker.bootstrap)

    def request(self, entity: Any) -> Any:
        with self.client() as c:
            return c.request(entity)

    def new_log(self) -> str:
        """Broker log written since the previous call."""
        text = self.broker.log_text()
        new, self.log_mark = text[self.log_mark :], len(text)
        return new


def seed_records(partition: int, n: int) -> list[Record]:
    return [
        Record(
            offset=i,
            timestamp=NOW_MS + SEED_TS_STEP * i,
            key=f"k{partition}-{i}".encode(),
            value=f"seed-{partition}-{i}".encode(),
            headers=[("h", b"1")],
        )
        for i in range(n)
    ]


def create_topic(env: Env, name: str, partitions: int = 1, configs: dict[str, str] | None = None):
    resp = env.request(
        make(
            "CreateTopics",
            7,
            env,
            topics=[
                {
                    "name": name,
                    "num_partitions": partitions,
                    "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
                }
            ],
        )
    )
    (t,) = resp.topics
    assert t.error_code == 0, (name, t)
    return t.topic_id


def produce(env: Env, topic: str, partition: int, records: list[Record], version: int = 9):
    resp = env.request(
        make(
            "Produce",
            version,
            env,
            topic_data=[
                {
                    "name": topic,
                    "partition_data": [{"index": partition, "records": encode_batch(records)}],
                }
            ],
        )
    )
    p = resp.responses[0].partition_responses[0]
    assert p.error_code == 0, p
    return p.base_offset


def metadata12(env: Env, names: list[str]) -> Any:
    return env.request(
        make(
            "Metadata",
            12,
            env,
            topics=[{"name": n, "topic_id": None} for n in names],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
    )


def list_offset(env: Env, topic: str, partition: int, ts: int, version: int = 7) -> Any:
    resp = env.request(
        make(
            "ListOffsets",
            version,
            env,
            isolation_level=0,
            topics=[
                {"name": topic, "partitions": [{"partition_index": partition, "timestamp": ts}]}
            ],
        )
    )
    return resp.topics[0].partitions[0]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    proc = BrokerProcess(
        tmp_path_factory.mktemp("sweep-broker"), {"group.initial.rebalance.delay.ms": "0"}
    )
    proc.start()
    e = Env(broker=proc)
    try:
        create_topic(e, SWEEP, 2, {"retention.ms": RETENTION_OVERRIDE})
        for p, n in SEED.items():
            assert produce(e, SWEEP, p, seed_records(p, n)) == 0
            e.hw[p] = n
        md = metadata12(e, [SWEEP])
        (t,) = md.topics
        assert t.error_code == 0 and t.topic_id not in (None, ZERO_UUID), t
        e.topic_id = t.topic_id
        e.node_id = md.brokers[0].node_id
        e.cluster_id = md.cluster_id
        e.leader_epoch = t.partitions[0].leader_epoch
        e.new_log()
        yield e
    finally:
        code = proc.stop()
    assert code == 0, f"broker did not shut down cleanly (exit {code})"


# --------------------------------------------------------------------------- per-API checks


def ok(code: Any) -> bool:
    return int(code) == 0


def check_produce(env: Env, v: int) -> None:
    recs = [
        Record(offset=i, timestamp=NOW_MS + 1 + i, key=None, value=f"p{v}-{i}".encode(), headers=[])
        for i in range(3)
    ]
    resp = env.request(
        make(
            "Produce",
            v,
            env,
            topic_data=[{"partition_data": [{"index": 0, "records": encode_batch(recs)}]}],
        )
    )
    (t,) = resp.responses
    if v >= 13:  # topics named by id (KIP-516), in the request and the answer
        assert t.topic_id == env.topic_id, t
    else:
        assert t.name == SWEEP
    (p,) = t.partition_responses
    assert p.index == 0
    assert ok(p.error_code), p
    assert p.base_offset == env.hw[0], f"base_offset {p.base_offset}, expected {env.hw[0]}"
    env.hw[0] = p.base_offset + len(recs)
    assert p.log_append_time is None, p  # -1: CreateTime topic
    if v >= 5:
        assert p.log_start_offset == 0, p
    if v >= 8:
        assert p.record_errors == () and p.error_message is None, p
    # The records are readable at the offsets the broker gave them.
    rows = [r for r in fetch_rows(env, 0, p.base_offset) if r.offset >= p.base_offset]
    assert [(r.offset, r.value) for r in rows[:3]] == [
        (p.base_offset + i, f"p{v}-{i}".encode()) for i in range(3)
    ]
    # acks=1 is answered like acks=-1; acks=0 gets no answer, and the connection goes on.
    one = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"a1-{v}".encode())]
    resp = env.request(
        make(
            "Produce",
            v,
            env,
            acks=1,
            topic_data=[{"partition_data": [{"records": encode_batch(one)}]}],
        )
    )
    p = resp.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[0], p
    env.hw[0] += 1
    zero = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"a0-{v}".encode())]
    with env.client() as c:
        req = make(
            "Produce",
            v,
            env,
            acks=0,
            topic_data=[{"partition_data": [{"records": encode_batch(zero)}]}],
        )
        c._corr += 1
        c.send_frame(encode_request(req, c._corr))
        resp = c.request(make("ApiVersions", 3, env))  # asserts the correlation id matches
        assert ok(resp.error_code)
    env.hw[0] += 1
    assert list_offset(env, SWEEP, 0, -1).offset == env.hw[0]
    # Errors: bad acks, an unknown topic (an unknown topic id from v13), an unknown partition.
    absent_topic = (
        ({"topic_data": [{"topic_id": uuid.uuid4(), "partition_data": [{}]}]}, E.unknown_topic_id)
        if v >= 13
        else (
            {"topic_data": [{"name": "sweep-absent", "partition_data": [{}]}]},
            E.unknown_topic_or_partition,
        )
    )
    for spec, want in (
        ({"acks": 2}, E.invalid_required_acks),
        absent_topic,
        ({"topic_data": [{"partition_data": [{"index": 9}]}]}, E.unknown_topic_or_partition),
    ):
        resp = env.request(make("Produce", v, env, **{"records": encode_batch(one), **spec}))
        p = resp.responses[0].partition_responses[0]
        assert p.error_code == want, (spec, p)
    assert list_offset(env, SWEEP, 0, -1).offset == env.hw[0]


def fetch_rows(env: Env, partition: int, offset: int, topic: str = SWEEP) -> list[Record]:
    resp = env.request(
        make(
            "Fetch",
            12,
            env,
            topics=[
                {"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset}]}
            ],
        )
    )
    p = resp.responses[0].partitions[0]
    assert ok(p.error_code), p
    return decode_all(p.records)


def decode_all(records: bytes | None) -> list[Record]:
    out: list[Record] = []
    buf = records or b""
    for pos, h in iter_batches(buf):
        out += decode_records(buf[pos : pos + h.size])
    return out


def check_fetch(env: Env, v: int) -> None:
    by_id = v >= 13
    resp = env.request(
        make(
            "Fetch",
            v,
            env,
            topics=[
                {
                    "partitions": [
                        {"partition": 0, "fetch_offset": 0},
                        {"partition": 1, "fetch_offset": 1},
                    ]
                }
            ],
        )
    )
    if v >= 7:
        assert ok(resp.error_code), resp
    (t,) = resp.responses
    if by_id:
        assert t.topic_id == env.topic_id
    else:
        assert t.topic == SWEEP
    parts = {p.partition_index: p for p in t.partitions}
    assert set(parts) == {0, 1}
    for index, start in ((0, 0), (1, 1)):
        p = parts[index]
        assert ok(p.error_code), p
        assert p.high_watermark == env.hw[index], (index, p.high_watermark, env.hw[index])
        assert p.last_stable_offset == env.hw[index]
        if v >= 5:
            assert p.log_start_offset == 0
        rows = decode_all(p.records)
        offsets = [r.offset for r in rows if r.offset >= start]
        assert offsets == list(range(start, env.hw[index])), (index, offsets)
        seed = {r.offset: r for r in seed_records(index, SEED[index])}
        for r in rows:
            if r.offset in seed:
                s = seed[r.offset]
                assert (r.key, r.value, r.timestamp, r.headers) == (
                    s.key,
                    s.value,
                    s.timestamp,
                    s.headers,
                )
        assert p.aborted_transactions in ((), None)
        if v >= 11:
            assert p.preferred_read_replica == -1
    # KIP-74: a limit smaller than the first batch still returns that whole batch.
    resp = env.request(
        make(
            "Fetch",
            v,
            env,
            max_bytes=1,
            topics=[{"partitions": [{"partition": 0, "partition_max_bytes": 1}]}],
        )
    )
    p = resp.responses[0].partitions[0]
    assert ok(p.error_code), p
    rows = decode_all(p.records)
    assert rows and rows[0].offset == 0 and rows[0].value == b"seed-0-0", rows
    # At the high watermark: an empty answer after max_wait; past it: OFFSET_OUT_OF_RANGE.
    for offset, want in ((env.hw[0], E.none), (env.hw[0] + 1, E.offset_out_of_range)):
        resp = env.request(
            make("Fetch", v, env, topics=[{"partitions": [{"fetch_offset": offset}]}])
        )
        p = resp.responses[0].partitions[0]
        hw = env.hw[0] if want == E.none else -1  # OFFSET_OUT_OF_RANGE: no offsets, as 4.4
        assert (p.error_code, p.high_watermark) == (want, hw), (offset, p)
        assert not p.records
    # read_committed sees the same records (no transactions): the LSO is the high watermark.
    resp = env.request(make("Fetch", v, env, isolation_level=1))
    p = resp.responses[0].partitions[0]
    assert ok(p.error_code) and p.last_stable_offset == env.hw[0], p
    assert [r.offset for r in decode_all(p.records)] == list(range(env.hw[0]))
    # An unknown partition of a known topic.
    resp = env.request(make("Fetch", v, env, topics=[{"partitions": [{"partition": 7}]}]))
    assert resp.responses[0].partitions[0].error_code == E.unknown_topic_or_partition
    if v >= 7:  # a full fetch that asks for a session (epoch 0) is served, session or not
        resp = env.request(make("Fetch", v, env, session_id=0, session_epoch=0))
        assert ok(resp.error_code) and resp.session_id >= 0, resp
        p = resp.responses[0].partitions[0]
        assert ok(p.error_code) and p.high_watermark == env.hw[0], p
    # An unknown topic is refused per partition, by name or by id as the version uses.
    unknown = {"topic_id": uuid.uuid4()} if by_id else {"topic": "sweep-no-such-topic"}
    resp = env.request(
        make("Fetch", v, env, topics=[{**unknown, "partitions": [{"partition": 0}]}])
    )
    p = resp.responses[0].partitions[0]
    assert p.error_code == (E.unknown_topic_id if by_id else E.unknown_topic_or_partition), p


def check_list_offsets(env: Env, v: int) -> None:
    hw = env.hw[0]
    epoch = env.leader_epoch

    def one(ts: int):
        p = list_offset(env, SWEEP, 0, ts, version=v)
        assert p.partition_index == 0 and ok(p.error_code), (ts, p)
        if v >= 4:
            if p.offset >= 0:
                assert p.leader_epoch == epoch, (ts, p)
        return p.timestamp, p.offset

    assert one(-2) == (-1, 0)
    assert one(-1) == (-1, hw)
    # The first record at or after a real timestamp: seed record 2 has NOW_MS + 20.
    assert one(NOW_MS + 15) == (NOW_MS + 20, 2)
    assert one(NOW_MS) == (NOW_MS, 0)
    assert one(NOW_MS + 10**9) == (-1, -1)
    if v >= 7:  # max timestamp: the last seed record (produced records are older)
        last = SEED[0] - 1
        assert one(-3) == (NOW_MS + SEED_TS_STEP * last, last)
    if v >= 8:
        assert one(-4) == (-1, 0)
    # Partition 1 too, in the same request as partition 0.
    resp = env.request(
        make(
            "ListOffsets",
            v,
            env,
            isolation_level=0,
            topics=[
                {
                    "partitions": [
                        {"partition_index": 0, "timestamp": -1},
                        {"partition_index": 1, "timestamp": -1},
                    ]
                }
            ],
        )
    )
    (t,) = resp.topics
    assert t.name == SWEEP
    got = {p.partition_index: (int(p.error_code), p.offset) for p in t.partitions}
    assert got == {0: (0, env.hw[0]), 1: (0, env.hw[1])}
    if v >= 2:  # read_committed: the last stable offset, equal to the HW without transactions
        resp = env.request(
            make(
                "ListOffsets",
                v,
                env,
                isolation_level=1,
                topics=[{"partitions": [{"partition_index": 0, "timestamp": -1}]}],
            )
        )
        p = resp.topics[0].partitions[0]
        assert (p.error_code, p.offset) == (E.none, env.hw[0]), p
    p = list_offset(env, SWEEP, 9, -1, version=v)
    assert p.error_code == E.unknown_topic_or_partition, p


def check_metadata(env: Env, v: int) -> None:
    topic = {"name": SWEEP, "topic_id": None} if v >= 10 else {"name": SWEEP}
    spec: dict[str, Any] = {"topics": [topic]}
    if v >= 4:
        spec["allow_auto_topic_creation"] = False
    if v >= 8:
        spec["include_topic_authorized_operations"] = False
    if 8 <= v <= 10:
        spec["include_cluster_authorized_operations"] = False
    resp = env.request(make("Metadata", v, env, **spec))
    host, port = env.broker.bootstrap.rsplit(":", 1)
    assert [(b.node_id, b.host, b.port) for b in resp.brokers] == [(env.node_id, host, int(port))]
    if v >= 1:
        assert resp.controller_id == env.node_id
    if v >= 2:
        assert resp.cluster_id == env.cluster_id and env.cluster_id
    if v >= 13:
        assert ok(resp.error_code)
    (t,) = resp.topics
    assert ok(t.error_code) and t.name == SWEEP, t
    if v >= 1:
        assert t.is_internal is False
    if v >= 10:
        assert t.topic_id == env.topic_id and t.topic_id != ZERO_UUID
    assert sorted(p.partition_index for p in t.partitions) == [0, 1]
    for p in t.partitions:
        assert ok(p.error_code)
        assert p.leader_id == env.node_id
        assert tuple(p.replica_nodes) == (env.node_id,) and tuple(p.isr_nodes) == (env.node_id,)
        if v >= 5:
            assert tuple(p.offline_replicas) == ()
        if v >= 7:
            assert p.leader_epoch == env.leader_epoch
    if v == 0:  # v0: an empty list means all topics
        resp = env.request(make("Metadata", 0, env, topics=[]))
        assert SWEEP in {t.name for t in resp.topics}, resp.topics
    if v >= 12:  # by id, without a name
        resp = env.request(
            make(
                "Metadata", v, env, **{**spec, "topics": [{"name": None, "topic_id": env.topic_id}]}
            )
        )
        (t,) = resp.topics
        assert ok(t.error_code) and t.name == SWEEP and t.topic_id == env.topic_id, t
        unknown = uuid.uuid4()
        resp = env.request(
            make("Metadata", v, env, **{**spec, "topics": [{"name": None, "topic_id": unknown}]})
        )
        (t,) = resp.topics
        assert t.error_code == E.unknown_topic_id and t.topic_id == unknown, t
    if v >= 4:  # no auto-creation when refused
        resp = env.request(
            make("Metadata", v, env, **{**spec, "topics": [{**topic, "name": "sweep-absent"}]})
        )
        (t,) = resp.topics
        assert t.error_code == E.unknown_topic_or_partition and t.name == "sweep-absent", t
    if v >= 1:  # null list: all topics
        resp = env.request(make("Metadata", v, env, **{**spec, "topics": None}))
        assert SWEEP in {t.name for t in resp.topics}


def check_api_versions(env: Env, v: int) -> None:
    v5 = {"cluster_id": None, "node_id": -1}  # v5: a client that does not name the broker yet
    resp = env.request(make("ApiVersions", v, env, **v5))
    assert ok(resp.error_code), resp
    got = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    want = {r.key: (r.min_version, r.max_version) for r in served_apis().values()}
    assert got == want
    if v >= 3:  # KIP-511: a client software name that breaks the pattern is INVALID_REQUEST
        resp = env.request(
            make("ApiVersions", v, env, client_software_name="bad name!", **v5)
        )
        assert resp.error_code == E.invalid_request, resp
    if v >= 5:  # this broker named: served; another cluster or node: REBOOTSTRAP_REQUIRED;
        # only one of the two: INVALID_REQUEST (Kafka 4.4's KafkaApis)
        for cluster_id, node_id, want in (
            (env.cluster_id, env.node_id, E.none),
            ("AAAAAAAAAAAAAAAAAAAAAA", env.node_id, E.rebootstrap_required),
            (env.cluster_id, env.node_id + 1, E.rebootstrap_required),
            (env.cluster_id, -1, E.invalid_request),
            (None, env.node_id, E.invalid_request),
        ):
            resp = env.request(
                make("ApiVersions", v, env, cluster_id=cluster_id, node_id=node_id)
            )
            assert resp.error_code == want, (cluster_id, node_id, resp)
            assert bool(resp.api_keys) == (want == E.none), resp


def check_create_topics(env: Env, v: int) -> None:
    name = f"sweep-ct-v{v}"
    resp = env.request(
        make(
            "CreateTopics",
            v,
            env,
            validate_only=False,
            topics=[
                {
                    "name": name,
                    "num_partitions": 3,
                    "configs": [{"name": "retention.ms", "value": "3600000"}],
                },
                {"name": SWEEP, "num_partitions": 1},
            ],
        )
    )
    res = {t.name: t for t in resp.topics}
    t = res[name]
    assert ok(t.error_code), t
    if v >= 5:
        assert (t.num_partitions, t.replication_factor) == (3, 1)
        cfg = {c.name: c for c in t.configs}
        assert cfg["retention.ms"].value == "3600000" and cfg["retention.ms"].config_source == 1
    if v >= 7:
        assert t.topic_id not in (None, ZERO_UUID)
    assert res[SWEEP].error_code == E.topic_already_exists
    (m,) = metadata12(env, [name]).topics
    assert ok(m.error_code) and len(m.partitions) == 3
    if v >= 7:
        assert m.topic_id == t.topic_id
    if v >= 4:  # -1 partitions / replication factor: the broker's defaults
        dflt = f"sweep-ct-default-v{v}"
        resp = env.request(
            make(
                "CreateTopics",
                v,
                env,
                validate_only=False,
                topics=[{"name": dflt, "num_partitions": -1, "replication_factor": -1}],
            )
        )
        (t,) = resp.topics
        assert ok(t.error_code), t
        if v >= 5:
            assert (t.num_partitions, t.replication_factor) == (1, 1), t
        (m,) = metadata12(env, [dflt]).topics
        assert ok(m.error_code) and len(m.partitions) == 1
    # validate_only creates nothing.
    dry = f"sweep-ct-dry-v{v}"
    resp = env.request(
        make(
            "CreateTopics", v, env, validate_only=True, topics=[{"name": dry, "num_partitions": 2}]
        )
    )
    assert ok(resp.topics[0].error_code), resp.topics[0]
    (m,) = metadata12(env, [dry]).topics
    assert m.error_code == E.unknown_topic_or_partition


def check_delete_topics(env: Env, v: int) -> None:
    name = f"sweep-dt-v{v}"
    tid = create_topic(env, name)
    if v >= 6:
        req = make("DeleteTopics", v, env, topics=[{"name": None, "topic_id": tid}])
    else:
        req = make("DeleteTopics", v, env, topic_names=(name,))
    (r,) = env.request(req).responses
    assert ok(r.error_code), r
    assert r.name == name
    if v >= 6:
        assert r.topic_id == tid
    (m,) = metadata12(env, [name]).topics
    assert m.error_code == E.unknown_topic_or_partition, m
    # Deleting it again: unknown.
    if v >= 6:
        req = make("DeleteTopics", v, env, topics=[{"name": None, "topic_id": tid}])
        want = E.unknown_topic_id
    else:
        req = make("DeleteTopics", v, env, topic_names=(name,))
        want = E.unknown_topic_or_partition
    (r,) = env.request(req).responses
    assert r.error_code == want, r
    if v >= 6:  # v6 by name (null id)
        other = f"sweep-dt-name-v{v}"
        other_id = create_topic(env, other)
        req = make("DeleteTopics", v, env, topics=[{"name": other, "topic_id": None}])
        (r,) = env.request(req).responses
        assert ok(r.error_code) and r.name == other and r.topic_id == other_id, r
    # "sweep" is untouched.
    assert ok(metadata12(env, [SWEEP]).topics[0].error_code)


def check_delete_records(env: Env, v: int) -> None:
    name = f"sweep-dr-v{v}"
    create_topic(env, name)
    produce(env, name, 0, seed_records(0, 10))

    def delete(offset: int):
        resp = env.request(
            make(
                "DeleteRecords",
                v,
                env,
                topics=[{"name": name, "partitions": [{"partition_index": 0, "offset": offset}]}],
            )
        )
        (t,) = resp.topics
        assert t.name == name
        (p,) = t.partitions
        assert p.partition_index == 0 and ok(p.error_code), p
        return p.low_watermark

    assert delete(4) == 4
    p = list_offset(env, name, 0, -2)
    assert (p.offset, int(p.error_code)) == (4, 0)
    # Whole batches are served, so records before the fetch offset may come along.
    rows = fetch_rows(env, 0, 4, topic=name)
    assert [r.offset for r in rows if r.offset >= 4] == list(range(4, 10))
    resp = env.request(
        make("Fetch", 12, env, topics=[{"topic": name, "partitions": [{"fetch_offset": 0}]}])
    )
    p = resp.responses[0].partitions[0]
    assert (p.error_code, p.log_start_offset) == (E.offset_out_of_range, -1), p  # as 4.4
    assert delete(-1) == 10  # -1: up to the high watermark
    assert list_offset(env, name, 0, -2).offset == 10
    # Beyond the high watermark: OFFSET_OUT_OF_RANGE.
    resp = env.request(
        make("DeleteRecords", v, env, topics=[{"name": name, "partitions": [{"offset": 11}]}])
    )
    assert resp.topics[0].partitions[0].error_code == E.offset_out_of_range


def check_init_producer_id(env: Env, v: int) -> None:
    resp = env.request(make("InitProducerId", v, env))
    assert ok(resp.error_code), resp
    assert resp.producer_id >= 0 and resp.producer_epoch == 0, resp
    assert resp.producer_id not in env.producer_ids
    env.producer_ids.add(resp.producer_id)
    # The id works for an idempotent produce.
    rec = [Record(offset=0, timestamp=NOW_MS + 2, key=None, value=f"idem-{v}".encode())]
    batch = encode_batch(rec, producer_id=resp.producer_id, producer_epoch=0, base_sequence=0)
    pr = env.request(
        make("Produce", 9, env, topic_data=[{"partition_data": [{"index": 1, "records": batch}]}])
    )
    p = pr.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[1], p
    env.hw[1] += 1
    # A transactional id gets its own producer id from the transaction coordinator; a second
    # instance bumps the epoch.
    txn = f"sweep-init-{v}"
    _find_txn_coordinator(env, txn)
    first = env.request(make("InitProducerId", v, env, transactional_id=txn))
    assert ok(first.error_code) and first.producer_epoch == 0, first
    assert first.producer_id >= 0 and first.producer_id not in env.producer_ids
    again = env.request(make("InitProducerId", v, env, transactional_id=txn))
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, first.producer_id, 1)
    bad = env.request(
        make(
            "InitProducerId",
            v,
            env,
            transactional_id=txn,
            transaction_timeout=datetime.timedelta(hours=1),
        )
    )
    assert bad.error_code == E.invalid_transaction_timeout, bad
    if v >= 3:  # KIP-360: a producer recovering with its current id and epoch keeps its id
        rec = env.request(
            make(
                "InitProducerId",
                v,
                env,
                transactional_id=txn,
                producer_id=first.producer_id,
                producer_epoch=1,
            )
        )
        assert (rec.error_code, rec.producer_id, rec.producer_epoch) == (0, first.producer_id, 2)
        stale = env.request(
            make(
                "InitProducerId",
                v,
                env,
                transactional_id=txn,
                producer_id=first.producer_id,
                producer_epoch=0,
            )
        )
        assert stale.error_code == (E.producer_fenced if v >= 4 else E.invalid_producer_epoch)


def check_write_txn_markers(env: Env, v: int) -> None:
    # (the markers themselves are exercised by EndTxn above and compat_tests/test_txn_*)
    resp = env.request(
        make(
            "WriteTxnMarkers",
            v,
            env,
            markers=[
                {
                    "producer_id": 123456,
                    "producer_epoch": 0,
                    "transaction_result": False,
                    "coordinator_epoch": 0,
                    "topics": [
                        {"name": SWEEP, "partition_indexes": (7,)},
                        {"name": "sweep-absent", "partition_indexes": (0,)},
                    ],
                }
            ],
        )
    )
    (m,) = resp.markers
    got = {(t.name, p.partition_index): p.error_code for t in m.topics for p in t.partitions}
    assert m.producer_id == 123456
    assert got == {
        (SWEEP, 7): E.unknown_topic_or_partition,
        ("sweep-absent", 0): E.unknown_topic_or_partition,
    }


def check_offset_for_leader_epoch(env: Env, v: int) -> None:
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[
                {
                    "partitions": [
                        {"partition": 0, "leader_epoch": 0},
                        {
                            "partition": 1,
                            "leader_epoch": 0,
                            "current_leader_epoch": env.leader_epoch,
                        },
                    ]
                }
            ],
        )
    )
    (t,) = resp.topics
    assert t.topic == SWEEP
    got = {p.partition: (int(p.error_code), p.leader_epoch, p.end_offset) for p in t.partitions}
    assert env.leader_epoch == 0
    assert got == {0: (0, 0, env.hw[0]), 1: (0, 0, env.hw[1])}
    # A current epoch newer than the leader's is UNKNOWN_LEADER_EPOCH; an epoch newer than any
    # in the log answers UNDEFINED (-1, -1) with no error.
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[
                {"partitions": [{"partition": 0, "current_leader_epoch": env.leader_epoch + 5}]}
            ],
        )
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_leader_epoch
    resp = env.request(
        make(
            "OffsetForLeaderEpoch",
            v,
            env,
            topics=[{"partitions": [{"partition": 0, "leader_epoch": env.leader_epoch + 5}]}],
        )
    )
    p = resp.topics[0].partitions[0]
    assert (p.error_code, p.leader_epoch, p.end_offset) == (E.none, -1, -1), p
    # An unknown partition.
    resp = env.request(
        make("OffsetForLeaderEpoch", v, env, topics=[{"partitions": [{"partition": 9}]}])
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_topic_or_partition


def check_describe_configs(env: Env, v: int) -> None:
    spec: dict[str, Any] = {"include_synonyms": True}
    if v >= 3:
        spec["include_documentation"] = False
    resp = env.request(make("DescribeConfigs", v, env, resources=[{"resource_type": 2}], **spec))
    (r,) = resp.results
    assert ok(r.error_code), r
    assert (r.resource_type, r.resource_name) == (2, SWEEP)
    cfg = {c.name: c for c in r.configs}
    assert {"retention.ms", "cleanup.policy", "segment.bytes"} <= set(cfg)
    ret = cfg["retention.ms"]
    assert (ret.value, ret.config_source, ret.is_sensitive) == (RETENTION_OVERRIDE, 1, False)
    assert (
        ret.synonyms and ret.synonyms[0].source == 1 and ret.synonyms[0].value == RETENTION_OVERRIDE
    )
    assert cfg["cleanup.policy"].value == "delete"
    assert cfg["cleanup.policy"].config_source in (4, 5)
    if v >= 3:
        assert ret.config_type == 5  # LONG
    # Only the keys asked for; a broker resource; an unknown topic.
    resp = env.request(
        make(
            "DescribeConfigs",
            v,
            env,
            resources=[
                {"resource_type": 2, "configuration_keys": ("retention.ms",)},
                {"resource_type": 4, "resource_name": str(env.node_id), "configuration_keys": None},
                {"resource_type": 2, "resource_name": "sweep-absent", "configuration_keys": None},
            ],
            **spec,
        )
    )
    topic_r, broker_r, absent_r = resp.results
    assert ok(topic_r.error_code) and [c.name for c in topic_r.configs] == ["retention.ms"]
    assert ok(broker_r.error_code) and broker_r.configs, broker_r
    assert absent_r.error_code == E.unknown_topic_or_partition
    # Without include_synonyms there are none.
    spec["include_synonyms"] = False
    resp = env.request(make("DescribeConfigs", v, env, resources=[{"resource_type": 2}], **spec))
    assert resp.results[0].configs and all(c.synonyms == () for c in resp.results[0].configs)
    if v >= 3:  # include_documentation: Kafka answers each topic config's documentation
        spec["include_documentation"] = True
        resp = env.request(
            make(
                "DescribeConfigs",
                v,
                env,
                resources=[{"resource_type": 2, "configuration_keys": ("retention.ms",)}],
                **spec,
            )
        )
        (c,) = resp.results[0].configs
        assert c.documentation, c


def check_create_partitions(env: Env, v: int) -> None:
    name = "sweep-cp"
    (m,) = metadata12(env, [name]).topics
    if int(m.error_code) == 3:
        create_topic(env, name)
        (m,) = metadata12(env, [name]).topics
    before = len(m.partitions)
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": name, "count": before + 1, "assignments": None}],
        )
    )
    (r,) = resp.results
    assert r.name == name and ok(r.error_code), r
    (m,) = metadata12(env, [name]).topics
    assert sorted(p.partition_index for p in m.partitions) == list(range(before + 1))
    # The new partition is writable.
    assert produce(env, name, before, seed_records(before, 2)) == 0
    # Not growing: INVALID_PARTITIONS.
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": name, "count": before + 1, "assignments": None}],
        )
    )
    assert resp.results[0].error_code == E.invalid_partitions
    # validate_only changes nothing; an unknown topic.
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=True,
            topics=[{"name": name, "count": before + 5, "assignments": None}],
        )
    )
    assert ok(resp.results[0].error_code), resp
    assert len(metadata12(env, [name]).topics[0].partitions) == before + 1
    resp = env.request(
        make(
            "CreatePartitions",
            v,
            env,
            validate_only=False,
            topics=[{"name": "sweep-absent", "count": 2, "assignments": None}],
        )
    )
    assert resp.results[0].error_code == E.unknown_topic_or_partition


def check_describe_cluster(env: Env, v: int) -> None:
    spec: dict[str, Any] = {"include_cluster_authorized_operations": False}
    if v >= 1:
        spec["endpoint_type"] = 1
    if v >= 2:
        spec["include_fenced_brokers"] = True
    resp = env.request(make("DescribeCluster", v, env, **spec))
    assert ok(resp.error_code), resp
    assert resp.cluster_id == env.cluster_id
    assert resp.controller_id == env.node_id
    host, port = env.broker.bootstrap.rsplit(":", 1)
    assert [(b.broker_id, b.host, b.port) for b in resp.brokers] == [(env.node_id, host, int(port))]
    if v >= 1:
        assert resp.endpoint_type == 1
    if v >= 2:
        assert resp.brokers[0].is_fenced is False
    if v >= 1:  # a broker refuses the controllers' endpoint type
        resp = env.request(make("DescribeCluster", v, env, **{**spec, "endpoint_type": 2}))
        assert resp.error_code == E.unsupported_endpoint_type, resp


def check_elect_leaders(env: Env, v: int) -> None:
    # the embedded broker leads every partition: nothing to elect; unknown partitions are named
    spec: dict[str, Any] = {
        "topic_partitions": [
            {"topic": SWEEP, "partitions": [0]},
            {"topic": "nope", "partitions": [0]},
        ],
        "timeout": datetime.timedelta(seconds=10),
    }
    if v >= 1:
        spec["election_type"] = 0
    resp = env.request(make("ElectLeaders", v, env, **spec))
    if v >= 1:
        assert ok(resp.error_code), resp
    codes = {
        (r.topic, p.partition_id): p.error_code
        for r in resp.replica_election_results
        for p in r.partition_result
    }
    assert codes[(SWEEP, 0)] == E.election_not_needed, resp
    assert codes[("nope", 0)] == E.unknown_topic_or_partition, resp


def _alter_results(resp):
    return [
        (r.resource_type, r.resource_name, r.error_code, r.error_message) for r in resp.responses
    ]


def _retention_of(env: Env, name: str) -> str:
    resp = env.request(
        make(
            "DescribeConfigs",
            1,
            env,
            resources=[
                {"resource_type": 2, "resource_name": name, "configuration_keys": ("retention.ms",)}
            ],
        )
    )
    return resp.results[0].configs[0].value


def check_alter_configs(env: Env, v: int) -> None:
    name = f"sweep-ac-v{v}"
    create_topic(env, name)

    def alter(resources, validate_only=False):
        request = make("AlterConfigs", v, env, resources=resources, validate_only=validate_only)
        return _alter_results(env.request(request))

    def topic(value, key="retention.ms", topic_name=name):
        return {
            "resource_type": 2,
            "resource_name": topic_name,
            "configs": [{"name": key, "value": value}],
        }

    # validate_only changes nothing; a real alter replaces the overrides.
    ((_, _, code, _),) = alter([topic("1234")], validate_only=True)
    assert ok(code) and _retention_of(env, name) == "604800000"
    ((_, rname, code, msg),) = alter([topic("1234")])
    assert ok(code) and rname == name and msg is None and _retention_of(env, name) == "1234"
    ((_, _, code, msg),) = alter([topic("-5")])
    assert code == E.invalid_config and "retention.ms" in msg
    ((_, _, code, _),) = alter([topic("1", topic_name="sweep-absent")])
    assert code == E.unknown_topic_or_partition
    broker_res = {
        "resource_type": 4,
        "resource_name": str(env.node_id),
        "configs": [{"name": "num.partitions", "value": "3"}],
    }
    ((_, _, code, _),) = alter([broker_res], validate_only=True)
    assert code == E.invalid_request


def check_incremental_alter_configs(env: Env, v: int) -> None:
    name = f"sweep-iac-v{v}"
    create_topic(env, name)

    def alter(configs, validate_only=False, topic_name=name):
        res = {"resource_type": 2, "resource_name": topic_name, "configs": configs}
        return _alter_results(
            env.request(
                make(
                    "IncrementalAlterConfigs", v, env, resources=[res], validate_only=validate_only
                )
            )
        )

    ((_, _, code, _),) = alter([{"name": "retention.ms", "config_operation": 0, "value": "99"}])
    assert ok(code) and _retention_of(env, name) == "99"
    ((_, _, code, _),) = alter([{"name": "retention.ms", "config_operation": 1, "value": None}])
    assert ok(code) and _retention_of(env, name) == "604800000"
    ((_, _, code, msg),) = alter(
        [{"name": "segment.bytes", "config_operation": 0, "value": "1"}], validate_only=True
    )
    assert code == E.invalid_config and "segment.bytes" in msg
    ((_, _, code, _),) = alter(
        [{"name": "retention.ms", "config_operation": 0, "value": "1"}], topic_name="sweep-absent"
    )
    assert code == E.unknown_topic_or_partition


# --------------------------------------------------------------------------- consumer groups

GROUP_TIMEOUT = datetime.timedelta(seconds=10)
NO_RETENTION = datetime.timedelta(milliseconds=-1)


def _find_coordinator(env: Env, group: str) -> None:
    """Clients look the coordinator up first; the first lookup creates __consumer_offsets."""
    resp = env.request(make("FindCoordinator", 4, env, key_type=0, coordinator_keys=(group,)))
    assert ok(resp.coordinators[0].error_code), resp


def _stable_group(env: Env, group: str) -> tuple[str, int]:
    """A one-member classic group (JoinGroup v9 + SyncGroup v5): (member id, generation)."""
    _find_coordinator(env, group)
    spec = {
        "group_id": group,
        "session_timeout": GROUP_TIMEOUT,
        "rebalance_timeout": GROUP_TIMEOUT,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"m"}],
        "reason": None,
    }
    resp = env.request(make("JoinGroup", 9, env, **spec))
    assert resp.error_code == E.member_id_required, resp
    resp = env.request(make("JoinGroup", 9, env, **{**spec, "member_id": resp.member_id}))
    assert ok(resp.error_code), resp
    mid, gen = resp.member_id, resp.generation_id
    sync = env.request(
        make(
            "SyncGroup",
            5,
            env,
            group_id=group,
            generation_id=gen,
            member_id=mid,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[{"member_id": mid, "assignment": b"A"}],
        )
    )
    assert ok(sync.error_code) and sync.assignment == b"A", sync
    return mid, gen


def _simple_commit(env: Env, group: str, offset: int) -> None:
    _find_coordinator(env, group)
    resp = env.request(
        make(
            "OffsetCommit",
            9,
            env,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                {
                    "name": SWEEP,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": offset,
                            "committed_leader_epoch": 0,
                            "committed_metadata": "md",
                        }
                    ],
                }
            ],
        )
    )
    assert ok(resp.topics[0].partitions[0].error_code), resp


def _fetch_offset(env: Env, group: str, partition: int = 0) -> int:
    resp = env.request(
        make(
            "OffsetFetch",
            8,
            env,
            require_stable=False,
            groups=[
                {"group_id": group, "topics": [{"name": SWEEP, "partition_indexes": (partition,)}]}
            ],
        )
    )
    (g,) = resp.groups
    assert ok(g.error_code), resp
    return g.topics[0].partitions[0].committed_offset


def check_find_coordinator(env: Env, v: int) -> None:
    host, port = env.broker.bootstrap.rsplit(":", 1)
    if v < 4:
        resp = env.request(make("FindCoordinator", v, env, key="sweep-group", key_type=0))
        assert ok(resp.error_code), resp
        assert (resp.node_id, resp.host, resp.port) == (env.node_id, host, int(port))
        if v >= 1:
            resp = env.request(make("FindCoordinator", v, env, key="tx", key_type=1))
            assert ok(resp.error_code), resp
            assert (resp.node_id, resp.host, resp.port) == (env.node_id, host, int(port))
            resp = env.request(make("FindCoordinator", v, env, key="tx", key_type=3))
            assert resp.error_code == E.invalid_request
        return
    resp = env.request(make("FindCoordinator", v, env, key_type=0, coordinator_keys=("g1", "g2")))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in resp.coordinators] == [
        ("g1", 0, env.node_id, int(port)),
        ("g2", 0, env.node_id, int(port)),
    ]
    resp = env.request(make("FindCoordinator", v, env, key_type=1, coordinator_keys=("tx", "ty")))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in resp.coordinators] == [
        ("tx", 0, env.node_id, int(port)),
        ("ty", 0, env.node_id, int(port)),
    ]


def _find_txn_coordinator(env: Env, txn: str) -> None:
    """The first transactional lookup creates __transaction_state."""
    resp = env.request(make("FindCoordinator", 4, env, key_type=1, coordinator_keys=(txn,)))
    assert ok(resp.coordinators[0].error_code), resp


def _init_txn(env: Env, txn: str) -> tuple[int, int]:
    _find_txn_coordinator(env, txn)
    resp = env.request(make("InitProducerId", 5, env, transactional_id=txn))
    assert ok(resp.error_code), resp
    return resp.producer_id, resp.producer_epoch


def _add_partitions(
    env: Env, txn: str, pid: int, epoch: int, partitions: dict[str, list[int]], version: int = 3
):
    resp = env.request(
        make(
            "AddPartitionsToTxn",
            version,
            env,
            v3_and_below_transactional_id=txn,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[
                {"name": t, "partitions": tuple(ps)} for t, ps in partitions.items()
            ],
        )
    )
    return {
        (t.name, r.partition_index): r.partition_error_code
        for t in resp.results_by_topic_v3_and_below
        for r in t.results_by_partition
    }


def _describe_txn(env: Env, txn: str) -> Any:
    resp = env.request(make("DescribeTransactions", 0, env, transactional_ids=(txn,)))
    (state,) = resp.transaction_states
    return state


def check_add_partitions_to_txn(env: Env, v: int) -> None:
    txn = f"sweep-apt-{v}"
    pid, epoch = _init_txn(env, txn)
    if v < 4:

        def add(partitions, epoch=epoch):
            return _add_partitions(env, txn, pid, epoch, partitions, version=v)

        assert add({SWEEP: [0, 1]}) == {(SWEEP, 0): 0, (SWEEP, 1): 0}
        assert add({SWEEP: [0], "sweep-absent": [0]}) == {
            (SWEEP, 0): E.operation_not_attempted,
            ("sweep-absent", 0): E.unknown_topic_or_partition,
        }
        fenced = E.producer_fenced if v >= 2 else E.invalid_producer_epoch
        assert add({SWEEP: [0]}, epoch=epoch + 1) == {(SWEEP, 0): fenced}
        state = _describe_txn(env, txn)
        assert state.transaction_state == "Ongoing"
        assert [(t.topic, tuple(t.partitions)) for t in state.topics] == [(SWEEP, (0, 1))]
        return
    # v4+ (partition leaders): verification of two transactions in one request
    other = f"sweep-apt-other-{v}"
    opid, oepoch = _init_txn(env, other)
    assert _add_partitions(env, txn, pid, epoch, {SWEEP: [0]}) == {(SWEEP, 0): 0}
    resp = env.request(
        make(
            "AddPartitionsToTxn",
            v,
            env,
            transactions=[
                {
                    "transactional_id": txn,
                    "producer_id": pid,
                    "producer_epoch": epoch,
                    "verify_only": True,
                    "topics": [{"name": SWEEP, "partitions": (0, 1)}],
                },
                {
                    "transactional_id": other,
                    "producer_id": opid,
                    "producer_epoch": oepoch + 3,
                    "verify_only": True,
                    "topics": [{"name": SWEEP, "partitions": (0,)}],
                },
            ],
        )
    )
    assert ok(resp.error_code), resp
    got = {
        (r.transactional_id, t.name, p.partition_index): p.partition_error_code
        for r in resp.results_by_transaction
        for t in r.topic_results
        for p in t.results_by_partition
    }
    assert got == {
        (txn, SWEEP, 0): 0,
        (txn, SWEEP, 1): E.transaction_abortable,
        (other, SWEEP, 0): E.producer_fenced,
    }, got
    # verification adds nothing (listed, not described: kio cannot read an Empty state's -1 start)
    listed = env.request(
        make("ListTransactions", 1, env, state_filters=(), producer_id_filters=(opid,))
    )
    assert [t.transaction_state for t in listed.transaction_states] == ["Empty"]


def check_add_offsets_to_txn(env: Env, v: int) -> None:
    txn, group = f"sweep-aot-{v}", f"sweep-aot-group-{v}"
    pid, epoch = _init_txn(env, txn)
    _find_coordinator(env, group)
    spec = {"transactional_id": txn, "producer_id": pid, "group_id": group}
    resp = env.request(make("AddOffsetsToTxn", v, env, producer_epoch=epoch, **spec))
    assert ok(resp.error_code), resp
    state = _describe_txn(env, txn)
    assert state.transaction_state == "Ongoing"
    assert [t.topic for t in state.topics] == ["__consumer_offsets"]
    resp = env.request(make("AddOffsetsToTxn", v, env, producer_epoch=epoch - 1, **spec))
    assert resp.error_code == (E.producer_fenced if v >= 2 else E.invalid_producer_epoch)
    resp = env.request(
        make("AddOffsetsToTxn", v, env, producer_epoch=epoch, **{**spec, "producer_id": pid + 1000})
    )
    assert resp.error_code == E.invalid_producer_id_mapping


def _wait_txn_state(env: Env, txn: str, want: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        state = _describe_txn(env, txn).transaction_state
        if state == want or time.monotonic() > deadline:
            assert state == want
            return
        time.sleep(0.02)


def check_end_txn(env: Env, v: int) -> None:
    txn = f"sweep-end-{v}"
    pid, epoch = _init_txn(env, txn)
    spec = {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch}
    resp = env.request(make("EndTxn", v, env, committed=True, **spec))
    assert resp.error_code == E.invalid_txn_state, resp  # no transaction yet
    assert _add_partitions(env, txn, pid, epoch, {SWEEP: [1]}) == {(SWEEP, 1): 0}
    rec = [Record(offset=0, timestamp=NOW_MS + 3, key=None, value=f"txn-{v}".encode())]
    batch = encode_batch(
        rec, producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True
    )
    pr = env.request(
        make(
            "Produce",
            9,
            env,
            transactional_id=txn,
            topic_data=[{"partition_data": [{"index": 1, "records": batch}]}],
        )
    )
    p = pr.responses[0].partition_responses[0]
    assert ok(p.error_code) and p.base_offset == env.hw[1], p
    env.hw[1] += 2  # the record and the commit marker
    resp = env.request(
        make("EndTxn", v, env, committed=True, **{**spec, "producer_epoch": epoch + 1})
    )
    assert resp.error_code == (E.producer_fenced if v >= 2 else E.invalid_producer_epoch)
    resp = env.request(make("EndTxn", v, env, committed=True, **spec))
    assert ok(resp.error_code), resp
    _wait_txn_state(env, txn, "CompleteCommit")
    assert ok(env.request(make("EndTxn", v, env, committed=True, **spec)).error_code)  # a retry
    resp = env.request(make("EndTxn", v, env, committed=False, **spec))
    assert resp.error_code == E.invalid_txn_state


def _stable_fetch(env: Env, group: str) -> Any:
    """OffsetFetch v8 of partition 0 of "sweep" with require_stable."""
    resp = env.request(
        make(
            "OffsetFetch",
            8,
            env,
            require_stable=True,
            groups=[{"group_id": group, "topics": [{"name": SWEEP, "partition_indexes": (0,)}]}],
        )
    )
    return resp.groups[0].topics[0].partitions[0]


def check_txn_offset_commit(env: Env, v: int) -> None:
    txn, group = f"sweep-toc-{v}", f"sweep-toc-group-{v}"
    pid, epoch = _init_txn(env, txn)
    _find_coordinator(env, group)
    added = env.request(
        make(
            "AddOffsetsToTxn",
            4,
            env,
            transactional_id=txn,
            producer_id=pid,
            producer_epoch=epoch,
            group_id=group,
        )
    )
    assert ok(added.error_code), added
    spec = {
        "transactional_id": txn,
        "group_id": group,
        "producer_id": pid,
        "producer_epoch": epoch,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": SWEEP,
                "partitions": [
                    {"partition_index": 0, "committed_offset": 4, "committed_metadata": "tm"}
                ],
            },
            {
                "name": "sweep-absent",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}
                ],
            },
        ],
    }

    def commit(**over):
        resp = env.request(make("TxnOffsetCommit", v, env, **{**spec, **over}))
        return {
            (t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions
        }

    assert commit() == {(SWEEP, 0): 0, ("sweep-absent", 0): E.unknown_topic_or_partition}
    # pending: invisible, and unstable for a stable read
    p = _stable_fetch(env, group)
    assert (p.error_code, p.committed_offset) == (E.unstable_offset_commit, -1), p
    if v >= 3:  # KIP-447: a member that is not in the group is refused
        got = commit(generation_id=1, member_id="ghost", topics=spec["topics"][:1])
        assert got == {(SWEEP, 0): E.unknown_member_id}
    fenced = commit(producer_epoch=epoch - 1, topics=spec["topics"][:1])
    assert fenced == {(SWEEP, 0): E.invalid_producer_epoch}
    resp = env.request(
        make(
            "EndTxn",
            4,
            env,
            transactional_id=txn,
            producer_id=pid,
            producer_epoch=epoch,
            committed=True,
        )
    )
    assert ok(resp.error_code), resp
    _wait_txn_state(env, txn, "CompleteCommit")
    p = _stable_fetch(env, group)
    assert (p.error_code, p.committed_offset, p.metadata) == (0, 4, "tm"), p


def check_describe_transactions(env: Env, v: int) -> None:
    txn = f"sweep-describe-{v}"
    pid, epoch = _init_txn(env, txn)
    _add_partitions(env, txn, pid, epoch, {SWEEP: [1, 0]})
    resp = env.request(
        make("DescribeTransactions", v, env, transactional_ids=(txn, "sweep-unknown-txn", ""))
    )
    s, unknown, empty = resp.transaction_states
    assert ok(s.error_code), s
    assert (s.transactional_id, s.transaction_state, s.producer_id, s.producer_epoch) == (
        txn,
        "Ongoing",
        pid,
        epoch,
    )
    assert s.transaction_timeout == datetime.timedelta(seconds=60)
    assert abs(s.transaction_start_time.timestamp() - time.time()) < 60
    assert [(t.topic, tuple(t.partitions)) for t in s.topics] == [(SWEEP, (0, 1))]
    assert unknown.error_code == E.transactional_id_not_found
    assert empty.error_code == E.invalid_request


def check_list_transactions(env: Env, v: int) -> None:
    txn = f"sweep-list-{v}"
    pid, epoch = _init_txn(env, txn)
    _add_partitions(env, txn, pid, epoch, {SWEEP: [0]})
    resp = env.request(
        make(
            "ListTransactions",
            v,
            env,
            state_filters=("Ongoing", "Bogus"),
            producer_id_filters=(pid,),
        )
    )
    assert ok(resp.error_code), resp
    assert [
        (t.transactional_id, t.producer_id, t.transaction_state) for t in resp.transaction_states
    ] == [(txn, pid, "Ongoing")]
    assert tuple(resp.unknown_state_filters) == ("Bogus",)
    resp = env.request(make("ListTransactions", v, env, state_filters=(), producer_id_filters=()))
    listed = {t.transactional_id: t.transaction_state for t in resp.transaction_states}
    assert listed[txn] == "Ongoing"
    if v >= 1:  # Ongoing for more than an hour: none (the filter compares start times)
        resp = env.request(
            make(
                "ListTransactions",
                v,
                env,
                state_filters=("Ongoing",),
                producer_id_filters=(),
                duration_filter=3_600_000,
            )
        )
        assert resp.transaction_states == ()


def check_join_group(env: Env, v: int) -> None:
    group = f"sweep-join-{v}"
    _find_coordinator(env, group)
    spec = {
        "group_id": group,
        "session_timeout": GROUP_TIMEOUT,
        "rebalance_timeout": GROUP_TIMEOUT,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"meta"}],
        "reason": None,
    }
    resp = env.request(make("JoinGroup", v, env, **spec))
    if v >= 4:
        assert resp.error_code == E.member_id_required and resp.member_id, resp
        resp = env.request(make("JoinGroup", v, env, **{**spec, "member_id": resp.member_id}))
    assert ok(resp.error_code), resp
    assert resp.generation_id == 1 and resp.leader == resp.member_id
    assert [(m.member_id, m.metadata) for m in resp.members] == [(resp.member_id, b"meta")]
    assert resp.protocol_name == "range"
    if v >= 7:
        assert resp.protocol_type == "consumer"
    bad = env.request(make("JoinGroup", v, env, **{**spec, "member_id": "ghost"}))
    assert bad.error_code == E.unknown_member_id
    bad = env.request(
        make("JoinGroup", v, env, **{**spec, "session_timeout": datetime.timedelta(0)})
    )
    assert bad.error_code == E.invalid_session_timeout


def check_sync_group(env: Env, v: int) -> None:
    group = f"sweep-sync-{v}"
    mid, gen = _stable_group(env, group)
    spec = {
        "group_id": group,
        "generation_id": gen,
        "member_id": mid,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [],
    }
    resp = env.request(make("SyncGroup", v, env, **spec))
    assert ok(resp.error_code) and resp.assignment == b"A", resp
    if v >= 5:
        assert (resp.protocol_type, resp.protocol_name) == ("consumer", "range")
    resp = env.request(make("SyncGroup", v, env, **{**spec, "generation_id": gen + 1}))
    assert resp.error_code == E.illegal_generation


def check_heartbeat(env: Env, v: int) -> None:
    group = f"sweep-hb-{v}"
    mid, gen = _stable_group(env, group)
    spec = {"group_id": group, "generation_id": gen, "member_id": mid, "group_instance_id": None}
    assert ok(env.request(make("Heartbeat", v, env, **spec)).error_code)
    resp = env.request(make("Heartbeat", v, env, **{**spec, "member_id": "ghost"}))
    assert resp.error_code == E.unknown_member_id


def check_leave_group(env: Env, v: int) -> None:
    group = f"sweep-leave-{v}"
    mid, _ = _stable_group(env, group)
    if v < 3:
        assert ok(env.request(make("LeaveGroup", v, env, group_id=group, member_id=mid)).error_code)
        resp = env.request(make("LeaveGroup", v, env, group_id=group, member_id=mid))
        assert resp.error_code == E.unknown_member_id
        return
    members = [
        {"member_id": mid, "group_instance_id": None, "reason": None},
        {"member_id": "ghost", "group_instance_id": None, "reason": None},
    ]
    resp = env.request(make("LeaveGroup", v, env, group_id=group, members=members))
    assert ok(resp.error_code), resp
    assert [(m.member_id, m.error_code) for m in resp.members] == [
        (mid, 0),
        ("ghost", E.unknown_member_id),
    ]


def check_offset_commit(env: Env, v: int) -> None:
    group = f"sweep-commit-{v}"
    _find_coordinator(env, group)
    parts = [
        {
            "partition_index": 0,
            "committed_offset": 4,
            "committed_leader_epoch": 0,
            "committed_metadata": "md",
        },
        {
            "partition_index": 99,
            "committed_offset": 4,
            "committed_leader_epoch": 0,
            "committed_metadata": "md",
        },
    ]
    resp = env.request(
        make(
            "OffsetCommit",
            v,
            env,
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            retention_time=NO_RETENTION,
            topics=[{"name": SWEEP, "partitions": parts}],
        )
    )
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == [
        (0, 0),
        (99, E.unknown_topic_or_partition),
    ]
    assert _fetch_offset(env, group) == 4
    # a generation for a group that does not exist
    resp = env.request(
        make(
            "OffsetCommit",
            v,
            env,
            group_id=group + "-none",
            generation_id_or_member_epoch=3,
            member_id="m",
            group_instance_id=None,
            retention_time=NO_RETENTION,
            topics=[{"name": SWEEP, "partitions": parts[:1]}],
        )
    )
    expected = E.group_id_not_found if v >= 9 else E.illegal_generation
    assert resp.topics[0].partitions[0].error_code == expected
    if v >= 10:  # topics named by id: an unknown id is UNKNOWN_TOPIC_ID, answered first
        absent = uuid.uuid4()
        resp = env.request(
            make(
                "OffsetCommit",
                v,
                env,
                group_id=group,
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                topics=[
                    {"topic_id": env.topic_id, "partitions": parts[:1]},
                    {"topic_id": absent, "partitions": parts[:1]},
                ],
            )
        )
        got = [(t.topic_id, t.partitions[0].error_code) for t in resp.topics]
        assert got == [(absent, E.unknown_topic_id), (env.topic_id, E.none)], resp


def check_offset_fetch(env: Env, v: int) -> None:
    group = f"sweep-fetch-{v}"
    _simple_commit(env, group, 3)
    topics = [{"name": SWEEP, "partition_indexes": (0, 1)}]
    if v >= 8:
        resp = env.request(
            make(
                "OffsetFetch",
                v,
                env,
                require_stable=True,
                groups=[
                    {"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics},
                    {
                        "group_id": group + "-none",
                        "member_id": None,
                        "member_epoch": -1,
                        "topics": None,
                    },
                ],
            )
        )
        g, none = resp.groups
        assert ok(g.error_code) and ok(none.error_code) and none.topics == ()
        parts = g.topics[0].partitions
        if v >= 10:  # topics named by id; an unknown id is UNKNOWN_TOPIC_ID
            assert g.topics[0].topic_id == env.topic_id, g
            absent = uuid.uuid4()
            resp = env.request(
                make(
                    "OffsetFetch",
                    v,
                    env,
                    require_stable=False,
                    groups=[
                        {
                            "group_id": group,
                            "member_id": None,
                            "member_epoch": -1,
                            "topics": [{"topic_id": absent, "partition_indexes": (0,)}],
                        },
                        {"group_id": group, "member_id": None, "member_epoch": -1, "topics": None},
                    ],
                )
            )
            one, every = resp.groups
            (t,) = one.topics
            assert (t.topic_id, t.partitions[0].error_code) == (absent, E.unknown_topic_id), t
            assert [t.topic_id for t in every.topics] == [env.topic_id], every
    else:
        resp = env.request(
            make("OffsetFetch", v, env, group_id=group, topics=topics, require_stable=False)
        )
        parts = resp.topics[0].partitions
        if v >= 2:
            assert ok(resp.error_code)
    got = [(p.partition_index, p.committed_offset, p.metadata) for p in parts]
    assert got == [(0, 3, "md"), (1, -1, "")], resp
    if v >= 5:
        assert [p.committed_leader_epoch for p in parts] == [0, -1]
    if 2 <= v < 8:  # all topics
        resp = env.request(
            make("OffsetFetch", v, env, group_id=group, topics=None, require_stable=False)
        )
        assert [(t.name, len(t.partitions)) for t in resp.topics] == [(SWEEP, 1)]


def check_describe_groups(env: Env, v: int) -> None:
    group = f"sweep-describe-{v}"
    mid, _ = _stable_group(env, group)
    resp = env.request(
        make(
            "DescribeGroups",
            v,
            env,
            groups=(group, group + "-none"),
            include_authorized_operations=False,
        )
    )
    g, none = resp.groups
    assert ok(g.error_code) and g.group_state == "Stable", g
    assert (g.protocol_type, g.protocol_data) == ("consumer", "range")
    assert [(m.member_id, m.member_assignment) for m in g.members] == [(mid, b"A")]
    if v >= 6:
        assert none.error_code == E.group_id_not_found
    else:
        assert ok(none.error_code) and none.group_state == "Dead"


def check_list_groups(env: Env, v: int) -> None:
    group = f"sweep-list-{v}"
    _stable_group(env, group)
    spec: dict[str, Any] = {"states_filter": (), "types_filter": ()}
    resp = env.request(make("ListGroups", v, env, **spec))
    assert ok(resp.error_code)
    assert (group, "consumer") in {(g.group_id, g.protocol_type) for g in resp.groups}
    if v >= 4:
        resp = env.request(make("ListGroups", v, env, **{**spec, "states_filter": ("empty",)}))
        assert group not in {g.group_id for g in resp.groups}
        assert all(g.group_state == "Empty" for g in resp.groups)
    if v >= 5:
        resp = env.request(make("ListGroups", v, env, **{**spec, "types_filter": ("classic",)}))
        assert group in {g.group_id for g in resp.groups}
        assert all(g.group_type == "classic" for g in resp.groups)


def check_delete_groups(env: Env, v: int) -> None:
    group = f"sweep-delete-{v}"
    _simple_commit(env, group, 1)
    busy = f"sweep-delete-busy-{v}"
    _stable_group(env, busy)
    resp = env.request(make("DeleteGroups", v, env, groups_names=(group, busy)))
    assert [(r.group_id, r.error_code) for r in resp.results] == [
        (group, 0),
        (busy, E.non_empty_group),
    ]
    assert _fetch_offset(env, group) == -1
    resp = env.request(make("DeleteGroups", v, env, groups_names=(group,)))
    assert resp.results[0].error_code == E.group_id_not_found


def check_offset_delete(env: Env, v: int) -> None:
    group = f"sweep-offset-delete-{v}"
    _simple_commit(env, group, 2)
    resp = env.request(
        make(
            "OffsetDelete",
            v,
            env,
            group_id=group,
            topics=[
                {"name": SWEEP, "partitions": [{"partition_index": 0}, {"partition_index": 99}]}
            ],
        )
    )
    assert ok(resp.error_code)
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == [
        (0, 0),
        (99, E.unknown_topic_or_partition),
    ]
    assert _fetch_offset(env, group) == -1
    resp = env.request(
        make(
            "OffsetDelete",
            v,
            env,
            group_id=group + "-none",
            topics=[{"name": SWEEP, "partitions": [{"partition_index": 0}]}],
        )
    )
    assert resp.error_code == E.group_id_not_found


def _consumer_heartbeat(env: Env, v: int, group: str, member_id: str, epoch: int, **kw):
    spec = {
        "group_id": group,
        "member_id": member_id,
        "member_epoch": epoch,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout": GROUP_TIMEOUT if epoch == 0 else datetime.timedelta(milliseconds=-1),
        "subscribed_topic_names": (SWEEP,) if epoch == 0 else None,
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [] if epoch == 0 else None,
    }
    spec.update(kw)
    return env.request(make("ConsumerGroupHeartbeat", v, env, **spec))


def check_consumer_group_heartbeat(env: Env, v: int) -> None:
    group = f"sweep-cgh-{v}"
    _find_coordinator(env, group)
    member = "" if v == 0 else str(uuid.uuid4())
    resp = _consumer_heartbeat(env, v, group, member, 0)
    assert ok(resp.error_code) and resp.member_epoch == 1 and resp.member_id, resp
    assert resp.heartbeat_interval.total_seconds() > 0
    (tp,) = resp.assignment.topic_partitions
    assert tp.topic_id == env.topic_id and sorted(tp.partitions) == sorted(SEED)
    again = _consumer_heartbeat(env, v, group, resp.member_id, 1)
    assert ok(again.error_code) and again.member_epoch == 1 and again.assignment is None
    fenced = _consumer_heartbeat(env, v, group, resp.member_id, 7)
    assert fenced.error_code == E.fenced_member_epoch
    bad = _consumer_heartbeat(env, v, group, str(uuid.uuid4()), 0, server_assignor="nope")
    assert bad.error_code == E.unsupported_assignor
    if v >= 1:
        assert _consumer_heartbeat(env, v, group, "", 0).error_code == E.invalid_request
    left = _consumer_heartbeat(env, v, group, resp.member_id, -1)
    assert ok(left.error_code) and left.member_epoch == -1


def check_consumer_group_describe(env: Env, v: int) -> None:
    group = f"sweep-cgd-{v}"
    _find_coordinator(env, group)
    joined = _consumer_heartbeat(env, 1, group, str(uuid.uuid4()), 0)
    assert ok(joined.error_code), joined
    resp = env.request(
        make(
            "ConsumerGroupDescribe",
            v,
            env,
            group_ids=(group, "sweep-no-such-group"),
            include_authorized_operations=False,
        )
    )
    g, missing = resp.groups
    assert ok(g.error_code) and g.group_state == "Stable" and g.assignor_name == "uniform", g
    assert g.group_epoch == g.assignment_epoch == 1
    (m,) = g.members
    assert m.member_id == joined.member_id and m.member_epoch == 1
    assert m.subscribed_topic_names == (SWEEP,)
    (tp,) = m.assignment.topic_partitions
    assert (tp.topic_id, tp.topic_name, sorted(tp.partitions)) == (
        env.topic_id,
        SWEEP,
        sorted(SEED),
    )
    assert m.target_assignment == m.assignment
    if v >= 1:
        assert m.member_type == 1
    assert missing.error_code == E.group_id_not_found


def check_describe_log_dirs(env: Env, v: int) -> None:
    resp = env.request(make("DescribeLogDirs", v, env, topics=[{"partitions": (0, 1, 9)}]))
    if v >= 3:
        assert ok(resp.error_code), resp
    assert len(resp.results) == 1, resp
    (r,) = resp.results
    assert ok(r.error_code) and r.log_dir.startswith("/"), r
    if v >= 4:
        assert 0 < r.usable_bytes <= r.total_bytes, r
    parts = {p.partition_index: p for t in r.topics if t.name == SWEEP for p in t.partitions}
    assert sorted(parts) == [0, 1], r  # partition 9 does not exist: not reported
    for p in parts.values():
        assert p.partition_size > 0 and p.offset_lag == 0 and p.is_future_key is False, p
    # null topics: every local partition
    resp = env.request(make("DescribeLogDirs", v, env, topics=None))
    names = {(t.name, p.partition_index) for t in resp.results[0].topics for p in t.partitions}
    assert {(SWEEP, 0), (SWEEP, 1)} <= names


def check_alter_partition_reassignments(env: Env, v: int) -> None:
    # the embedded broker holds every replica: a valid request moves nothing; Kafka's errors
    me = env.node_id
    resp = env.request(
        make(
            "AlterPartitionReassignments",
            v,
            env,
            timeout=datetime.timedelta(seconds=10),
            topics=[
                {
                    "name": SWEEP,
                    "partitions": [
                        {"partition_index": 0, "replicas": (me,)},
                        {"partition_index": 1, "replicas": None},
                        {"partition_index": 7, "replicas": (me,)},
                    ],
                },
                {"name": "sweep-absent", "partitions": [{"partition_index": 0, "replicas": (me,)}]},
            ],
        )
    )
    assert ok(resp.error_code) and resp.error_message is None, resp
    codes = {
        (t.name, p.partition_index): p.error_code for t in resp.responses for p in t.partitions
    }
    assert codes == {
        (SWEEP, 0): E.none,
        (SWEEP, 1): E.no_reassignment_in_progress,
        (SWEEP, 7): E.unknown_topic_or_partition,
        ("sweep-absent", 0): E.unknown_topic_or_partition,
    }, resp
    for bad in ((me, me), (me + 1000,), ()):
        resp = env.request(
            make(
                "AlterPartitionReassignments",
                v,
                env,
                topics=[{"name": SWEEP, "partitions": [{"partition_index": 0, "replicas": bad}]}],
            )
        )
        part = resp.responses[0].partitions[0]
        assert part.error_code == E.invalid_replica_assignment and part.error_message, resp


def check_list_partition_reassignments(env: Env, v: int) -> None:
    for topics in (None, [{"name": SWEEP, "partition_indexes": (0, 1)}]):
        resp = env.request(make("ListPartitionReassignments", v, env, topics=topics))
        assert ok(resp.error_code) and resp.error_message is None and resp.topics == (), resp
    resp = env.request(
        make(
            "ListPartitionReassignments",
            v,
            env,
            topics=[{"name": "sweep-absent", "partition_indexes": (0,)}],
        )
    )
    assert ok(resp.error_code) and resp.topics == (), resp


def _quota_entity(v: int) -> list[dict[str, Any]]:
    return [{"entity_type": "user", "entity_name": f"sweep-user-{v}"}]


def check_alter_client_quotas(env: Env, v: int) -> None:
    ops = [
        {"key": "producer_byte_rate", "value": 1024.0, "remove": False},
        {"key": "request_percentage", "value": 12.5, "remove": False},
    ]
    resp = env.request(
        make(
            "AlterClientQuotas",
            v,
            env,
            validate_only=False,
            entries=[
                {"entity": _quota_entity(v), "ops": ops},
                {
                    "entity": _quota_entity(v),
                    "ops": [{"key": "bogus", "value": 1.0, "remove": False}],
                },
                {
                    "entity": [{"entity_type": "ip", "entity_name": "not-an-ip"}],
                    "ops": [{"key": "connection_creation_rate", "value": 1.0, "remove": False}],
                },
            ],
        )
    )
    assert [e.error_code for e in resp.entries] == [0, E.invalid_request, E.invalid_request], resp
    assert [(x.entity_type, x.entity_name) for x in resp.entries[0].entity] == [
        ("user", f"sweep-user-{v}")
    ]
    assert _described_quotas(env, 1, f"sweep-user-{v}") == {
        "producer_byte_rate": 1024.0,
        "request_percentage": 12.5,
    }


def _described_quotas(env: Env, v: int, user: str) -> dict[str, float] | None:
    resp = env.request(
        make(
            "DescribeClientQuotas",
            v,
            env,
            strict=True,
            components=[{"entity_type": "user", "match_type": 0, "match": user}],
        )
    )
    assert ok(resp.error_code), resp
    if not resp.entries:
        return None
    (entry,) = resp.entries
    assert [(x.entity_type, x.entity_name) for x in entry.entity] == [("user", user)]
    return {x.key: x.value for x in entry.values}


def check_describe_client_quotas(env: Env, v: int) -> None:
    user = f"sweep-quota-{v}"
    resp = env.request(
        make(
            "AlterClientQuotas",
            1,
            env,
            validate_only=False,
            entries=[
                {
                    "entity": [{"entity_type": "user", "entity_name": user}],
                    "ops": [{"key": "consumer_byte_rate", "value": 2048.0, "remove": False}],
                }
            ],
        )
    )
    assert ok(resp.entries[0].error_code), resp
    assert _described_quotas(env, v, user) == {"consumer_byte_rate": 2048.0}
    assert _described_quotas(env, v, user + "-none") is None
    resp = env.request(
        make(
            "DescribeClientQuotas",
            v,
            env,
            strict=False,
            components=[{"entity_type": "group", "match_type": 2, "match": None}],
        )
    )
    assert resp.error_code == E.unsupported_version and resp.entries is None, resp


def check_describe_producers(env: Env, v: int) -> None:
    topic = f"sweep-producers-{v}"
    create_topic(env, topic)
    init = env.request(make("InitProducerId", 4, env))
    assert ok(init.error_code), init
    recs = [Record(offset=i, timestamp=NOW_MS + i, key=None, value=b"p") for i in range(3)]
    batch = encode_batch(
        recs, producer_id=init.producer_id, producer_epoch=init.producer_epoch, base_sequence=0
    )
    pr = env.request(
        make(
            "Produce",
            9,
            env,
            topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
        )
    )
    assert ok(pr.responses[0].partition_responses[0].error_code), pr
    resp = env.request(
        make("DescribeProducers", v, env, topics=[{"name": topic, "partition_indexes": (0, 5)}])
    )
    (t,) = resp.topics
    p0, p5 = t.partitions
    assert ok(p0.error_code), p0
    assert [
        (s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp)
        for s in p0.active_producers
    ] == [(init.producer_id, init.producer_epoch, 2, NOW_MS + 2)]
    assert all(
        (s.coordinator_epoch, s.current_txn_start_offset) == (-1, -1) for s in p0.active_producers
    )
    assert p5.error_code == E.unknown_topic_or_partition, p5
    resp = env.request(
        make(
            "DescribeProducers",
            v,
            env,
            topics=[{"name": "sweep-absent", "partition_indexes": (0,)}],
        )
    )
    assert resp.topics[0].partitions[0].error_code == E.unknown_topic_or_partition


def check_describe_topic_partitions(env: Env, v: int) -> None:
    resp = env.request(
        make(
            "DescribeTopicPartitions", v, env, topics=[{"name": SWEEP}], response_partition_limit=1
        )
    )
    (t,) = resp.topics
    assert ok(t.error_code) and t.name == SWEEP and t.topic_id == env.topic_id, t
    (p,) = t.partitions
    assert (p.partition_index, p.leader_id, p.leader_epoch) == (0, env.node_id, env.leader_epoch)
    assert (p.replica_nodes, p.isr_nodes, p.offline_replicas) == ((env.node_id,),) * 2 + ((),)
    assert (p.eligible_leader_replicas, p.last_known_elr) == ((), ())
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == (SWEEP, 1)
    resp = env.request(
        make(
            "DescribeTopicPartitions",
            v,
            env,
            topics=[{"name": SWEEP}, {"name": "sweep-absent"}],
            cursor={"topic_name": SWEEP, "partition_index": 1},
        )
    )
    assert [
        (t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in resp.topics
    ] == [
        (SWEEP, 0, [1]),
        ("sweep-absent", E.unknown_topic_or_partition, []),
    ]
    assert resp.next_cursor is None


def check_sasl_handshake(env: Env, v: int) -> None:
    """On a PLAINTEXT listener there is no SASL to start: ILLEGAL_SASL_STATE, as Kafka."""
    resp = env.request(make("SaslHandshake", v, env, mechanism="PLAIN"))
    assert resp.error_code == E.illegal_sasl_state and tuple(resp.mechanisms) == (), resp


def check_sasl_authenticate(env: Env, v: int) -> None:
    resp = env.request(make("SaslAuthenticate", v, env, auth_bytes=b"\0u\0p"))
    assert resp.error_code == E.illegal_sasl_state, resp
    assert resp.error_message == "SaslAuthenticate request received after successful authentication"


def _alter_scram(env: Env, user: str, iterations: int) -> Any:
    return env.request(
        make(
            "AlterUserScramCredentials",
            0,
            env,
            deletions=[],
            upsertions=[
                {"name": user, "mechanism": 1, "iterations": iterations, "salt": b"salt",
                 "salted_password": bytes(32)}
            ],
        )
    )


def check_alter_user_scram_credentials(env: Env, v: int) -> None:
    resp = _alter_scram(env, "sweep-scram", 4096)
    assert [(r.user, r.error_code) for r in resp.results] == [("sweep-scram", 0)], resp
    resp = _alter_scram(env, "sweep-weak", 10)
    assert [(r.user, r.error_code, r.error_message) for r in resp.results] == [
        ("sweep-weak", E.unacceptable_credential, "Too few iterations")
    ], resp


def check_describe_user_scram_credentials(env: Env, v: int) -> None:
    assert ok(_alter_scram(env, "sweep-described", 8192).results[0].error_code)
    resp = env.request(
        make("DescribeUserScramCredentials", v, env,
             users=[{"name": "sweep-described"}, {"name": "sweep-nobody"}])
    )
    assert ok(resp.error_code), resp
    found, missing = resp.results
    assert [(c.mechanism, c.iterations) for c in found.credential_infos] == [(1, 8192)]
    assert missing.error_code == E.resource_not_found, missing


_ACL = {"resource_type": 2, "resource_name": SWEEP, "principal": "User:alice", "host": "*",
        "operation": 3, "permission_type": 3}
_ACL_FILTER = {"resource_type_filter": 2, "resource_name_filter": SWEEP, "pattern_type_filter": 3,
               "principal_filter": None, "host_filter": None, "operation": 1,
               "permission_type": 1}


def check_describe_acls(env: Env, v: int) -> None:
    """Without an authorizer (authorizer.class.name unset) the ACL APIs answer SECURITY_DISABLED,
    as Kafka; the ACL semantics are in compat_tests/security/test_authorization.py."""
    resp = env.request(make("DescribeAcls", v, env, **_ACL_FILTER))
    assert (resp.error_code, resp.resources) == (E.security_disabled, ()), resp
    assert resp.error_message == "No Authorizer is configured on the broker"


def check_create_acls(env: Env, v: int) -> None:
    resp = env.request(
        make("CreateAcls", v, env, creations=[{**_ACL, "resource_pattern_type": 3}] * 2)
    )
    assert [r.error_code for r in resp.results] == [E.security_disabled] * 2, resp


def check_delete_acls(env: Env, v: int) -> None:
    resp = env.request(make("DeleteAcls", v, env, filters=[_ACL_FILTER]))
    assert [(r.error_code, r.matching_acls) for r in resp.filter_results] == [
        (E.security_disabled, ())
    ], resp


def check_list_config_resources(env: Env, v: int) -> None:
    if v == 0:  # ListClientMetricsResources: kafkapy has no client metrics resources
        resp = env.request(make("ListConfigResources", v, env))
        assert ok(resp.error_code) and resp.config_resources == (), resp
        return
    resp = env.request(make("ListConfigResources", v, env, resource_types=()))
    assert ok(resp.error_code), resp
    listed = {(r.resource_type, r.resource_name) for r in resp.config_resources}
    assert {(2, SWEEP), (4, str(env.node_id)), (8, str(env.node_id))} <= listed, listed
    resp = env.request(make("ListConfigResources", v, env, resource_types=(7,)))
    assert resp.error_code == E.unsupported_version, resp


CHECKS = {
    "Produce": check_produce,
    "Fetch": check_fetch,
    "ListOffsets": check_list_offsets,
    "Metadata": check_metadata,
    "ApiVersions": check_api_versions,
    "CreateTopics": check_create_topics,
    "DeleteTopics": check_delete_topics,
    "DeleteRecords": check_delete_records,
    "InitProducerId": check_init_producer_id,
    "AddPartitionsToTxn": check_add_partitions_to_txn,
    "AddOffsetsToTxn": check_add_offsets_to_txn,
    "EndTxn": check_end_txn,
    "TxnOffsetCommit": check_txn_offset_commit,
    "WriteTxnMarkers": check_write_txn_markers,
    "DescribeTransactions": check_describe_transactions,
    "ListTransactions": check_list_transactions,
    "OffsetForLeaderEpoch": check_offset_for_leader_epoch,
    "DescribeConfigs": check_describe_configs,
    "ListConfigResources": check_list_config_resources,
    "CreatePartitions": check_create_partitions,
    "DescribeCluster": check_describe_cluster,
    "ElectLeaders": check_elect_leaders,
    "AlterConfigs": check_alter_configs,
    "IncrementalAlterConfigs": check_incremental_alter_configs,
    "FindCoordinator": check_find_coordinator,
    "JoinGroup": check_join_group,
    "SyncGroup": check_sync_group,
    "Heartbeat": check_heartbeat,
    "LeaveGroup": check_leave_group,
    "OffsetCommit": check_offset_commit,
    "OffsetFetch": check_offset_fetch,
    "DescribeGroups": check_describe_groups,
    "ListGroups": check_list_groups,
    "DeleteGroups": check_delete_groups,
    "OffsetDelete": check_offset_delete,
    "ConsumerGroupHeartbeat": check_consumer_group_heartbeat,
    "ConsumerGroupDescribe": check_consumer_group_describe,
    "DescribeLogDirs": check_describe_log_dirs,
    "AlterPartitionReassignments": check_alter_partition_reassignments,
    "ListPartitionReassignments": check_list_partition_reassignments,
    "DescribeClientQuotas": check_describe_client_quotas,
    "AlterClientQuotas": check_alter_client_quotas,
    "DescribeProducers": check_describe_producers,
    "DescribeTopicPartitions": check_describe_topic_partitions,
    "SaslHandshake": check_sasl_handshake,
    "SaslAuthenticate": check_sasl_authenticate,
    "AlterUserScramCredentials": check_alter_user_scram_credentials,
    "DescribeUserScramCredentials": check_describe_user_scram_credentials,
    "DescribeAcls": check_describe_acls,
    "CreateAcls": check_create_acls,
    "DeleteAcls": check_delete_acls,
}


def test_every_served_api_has_a_check():
    assert set(CHECKS) == set(served_apis())


@pytest.mark.parametrize(("api", "version"), CASES, ids=[f"{a}-v{v}" for a, v in CASES])
def test_version(env, api, version):
    try:
        CHECKS[api](env, version)
    finally:
        new = env.new_log()
        bad = [line for line in new.splitlines() if UNEXPECTED in line]
        assert not bad, f"broker logged an unexpected error for {api} v{version}:\n{new[-4000:]}"


def test_broker_log_has_no_unexpected_errors(env):
    text = env.broker.log_text()
    assert UNEXPECTED not in text, text[-4000:]
