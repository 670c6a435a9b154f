"""Requests several checks share: the seed records, CreateTopics, Produce, Metadata v12,
ListOffsets and Fetch of one partition."""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches

from .builder import make
from .env import NOW_MS, SEED_TS_STEP, SWEEP, Env, ok


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
