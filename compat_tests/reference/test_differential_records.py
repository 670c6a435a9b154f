"""Differential session of record validation: the crafted v2 batches of
compat_tests/crafted_batches.py (valid CRC; records well-formed or broken in one way each) sent
with raw Produce v9 to Apache Kafka 4.4 and to kafkapy, each to a topic of its own. Observed: the
partition response (error code, error message, KIP-467 record_errors, log start offset) and, for
a batch that was stored, what ListOffsets finds by max timestamp (-3) and by a time between the
records, and the maxTimestamp of the stored batch (so the recomputed maxTimestamp is compared).
"""

from __future__ import annotations

import time
from typing import Any

from kio.schema.errors import ErrorCode

from compat_tests.crafted_batches import TOPIC_CONFIGS, crafted_cases
from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw

RETRIABLE = (ErrorCode.not_leader_or_follower, ErrorCode.leader_not_available,
             ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas)


def produce_crafted(target: Target, topic: str, batch: bytes, timeout: float = 20.0) -> Any:
    """Produce one crafted batch (acks=-1), retried while the new topic's leader is not ready."""
    from compat_tests.rawclient import produce_request

    deadline = time.monotonic() + timeout
    while True:
        with raw(target) as client:
            resp = client.request(produce_request(topic, batch, acks=-1))
        part = resp.responses[0].partition_responses[0]
        if part.error_code not in RETRIABLE or time.monotonic() > deadline:
            return part
        time.sleep(0.1)


def list_offset(client: Any, topic: str, ts: int, now: int) -> tuple[int, int]:
    """ListOffsets at ``ts``: (offset, timestamp relative to ``now``, or -1 for none)."""
    from kio.schema.list_offsets.v9.request import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    resp = client.request(ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(
        ListOffsetsTopic(name=topic, partitions=(ListOffsetsPartition(
            partition_index=0, current_leader_epoch=-1, timestamp=ts),)),)))
    p = resp.topics[0].partitions[0]
    return p.offset, -1 if p.timestamp < 0 else p.timestamp - now


def stored_max_timestamp(target: Target, topic: str) -> int | None:
    """The maxTimestamp of the first stored batch (read with a raw Fetch)."""
    import datetime

    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic

    with raw(target) as client:
        resp = client.request(FetchRequest(
            replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
            max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
            topics=(FetchTopic(topic=topic, partitions=(FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                log_start_offset=-1, partition_max_bytes=1 << 20),)),),
            forgotten_topics_data=(), rack_id=""))
    records = resp.responses[0].partitions[0].records
    if not records or len(records) < 43:
        return None
    return int.from_bytes(records[35:43], "big", signed=True)


def crafted_records(target: Target) -> dict[str, Any]:
    now = int(time.time() * 1000)
    out: dict[str, Any] = {}
    for name, (kind, batch) in crafted_cases(now).items():
        topic = f"diff-crafted-{name.replace('_', '-')}"
        create_topic(target, topic, configs=TOPIC_CONFIGS[kind])
        part = produce_crafted(target, topic, batch)
        obs = entity_obs(part, drop={"log_append_time"})
        if part.error_code == ErrorCode.none:
            with raw(target) as client:
                obs["list_max_timestamp"] = list_offset(client, topic, -3, now)
                obs["list_by_time_now_plus_1"] = list_offset(client, topic, now + 1, now)
            max_ts = stored_max_timestamp(target, topic)
            obs["stored_max_timestamp_minus_now"] = None if max_ts is None else max_ts - now
        out[name] = obs
    return out


def test_crafted_records(differential: Differential) -> None:
    outcome = differential.check("crafted_records", crafted_records)
    assert outcome.observations > 100
