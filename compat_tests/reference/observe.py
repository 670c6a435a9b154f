"""What the differential sessions share: turning kio responses into plain observations, and the
small client steps several sessions take (raw requests, topics that exist before a session reads
them, record batches of chosen timestamps).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import time
import uuid
from collections.abc import Iterable
from typing import Any

from kio.schema.errors import ErrorCode

from compat_tests.rawclient import RawClient
from compat_tests.reference.differential import Target
from kafkapy.protocol.record_batch import Record, encode_batch

# fields that differ between any two brokers, or between two runs of one broker
VOLATILE = frozenset({"throttle_time", "throttle_time_ms", "cluster_id", "topic_id"})


def entity_obs(value: Any, drop: Iterable[str] = ()) -> Any:
    """A kio entity as nested dicts and lists; error codes by name, durations in ms, ids that
    differ per broker (topic ids, cluster ids, throttle times) left out."""
    skip = VOLATILE | set(drop)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: entity_obs(getattr(value, f.name), drop)
                for f in dataclasses.fields(value) if f.name not in skip}
    if isinstance(value, (tuple, list)):
        return [entity_obs(v, drop) for v in value]
    if isinstance(value, ErrorCode):
        return value.name
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, uuid.UUID):
        return "<uuid>"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


def raw(target: Target, timeout: float = 15.0) -> RawClient:
    return RawClient(target.bootstrap, timeout=timeout, client_id="differential")


def create_topic(target: Target, name: str, partitions: int = 1,
                 configs: dict[str, str] | None = None) -> None:
    """Create a topic through CreateTopics and wait until Metadata shows its leaders."""
    from kio.schema.create_topics.v7.request import (
        CreatableTopic,
        CreatableTopicConfig,
        CreateTopicsRequest,
    )

    with raw(target) as client:
        resp = client.request(CreateTopicsRequest(
            topics=(CreatableTopic(
                name=name, num_partitions=partitions, replication_factor=1, assignments=(),
                configs=tuple(CreatableTopicConfig(name=k, value=v)
                              for k, v in (configs or {}).items())),),
            validate_only=False))
        assert resp.topics[0].error_code == ErrorCode.none, resp
    wait_for_leaders(target, name, partitions)


def wait_for_leaders(target: Target, name: str, partitions: int, timeout: float = 30.0) -> None:
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    deadline = time.monotonic() + timeout
    with raw(target) as client:
        while True:
            meta = client.request(MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=name),),
                allow_auto_topic_creation=False, include_topic_authorized_operations=False))
            topic = meta.topics[0]
            if (topic.error_code == ErrorCode.none and len(topic.partitions) == partitions
                    and all(p.leader_id >= 0 for p in topic.partitions)):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} has no leaders on {target.kind}: {topic}")
            time.sleep(0.1)


def produce_batch(target: Target, topic: str, records: list[tuple[int, bytes]],
                  partition: int = 0, codec: int = 0) -> Any:
    """Produce one batch of (timestamp, value) records with acks=-1; the Produce response."""
    from compat_tests.rawclient import produce_request

    batch = encode_batch([Record(0, ts, None, value, []) for ts, value in records], codec=codec)
    with raw(target) as client:
        return client.request(produce_request(topic, batch, acks=-1, partition=partition))


RETRIABLE_PRODUCE = (ErrorCode.not_leader_or_follower, ErrorCode.leader_not_available,
                     ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas)


def produce_ok(target: Target, topic: str, records: list[tuple[int, bytes]],
               partition: int = 0, timeout: float = 20.0) -> Any:
    """Produce a batch the way a client does: retried while the partition's leader is not
    ready yet (a new topic's leader can be in Metadata before it takes writes); it must land."""
    deadline = time.monotonic() + timeout
    while True:
        resp = produce_batch(target, topic, records, partition=partition)
        error = resp.responses[0].partition_responses[0].error_code
        if error == ErrorCode.none:
            return resp
        if error not in RETRIABLE_PRODUCE or time.monotonic() > deadline:
            raise AssertionError(f"produce to {topic}-{partition} on {target.kind}: {resp}")
        time.sleep(0.1)

