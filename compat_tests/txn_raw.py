"""Raw-protocol helpers for tests that craft their own requests (kio entities over RawClient):
create topics, get producer ids, produce batches; for transaction tests that need no transaction
coordinator, write transactional batches with Produce and end them with WriteTxnMarkers, as a
coordinator would."""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from kio.index import load_payload_module
from kio.static.constants import EntityType

from compat_tests.rawclient import RawClient
from kafkapy.protocol.record_batch import Record, encode_batch


def req(key: int, version: int) -> Any:
    return load_payload_module(key, version, EntityType.request)


def create_topic(c: RawClient, name: str, partitions: int = 1, configs=None) -> uuid.UUID:
    """CreateTopics v7 (replication factor 1); the new topic's id."""
    Q = req(19, 7)
    resp = c.request(
        Q.CreateTopicsRequest(
            topics=(
                Q.CreatableTopic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=1,
                    assignments=(),
                    configs=tuple(
                        Q.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()
                    ),
                ),
            ),
            timeout=datetime.timedelta(seconds=10),
            validate_only=False,
        )
    )
    assert resp.topics[0].error_code == 0, resp
    return resp.topics[0].topic_id


def init_producer_id(c: RawClient) -> tuple[int, int]:
    """InitProducerId v4 without a transactional id: (producer id, epoch)."""
    Q = req(22, 4)
    resp = c.request(
        Q.InitProducerIdRequest(
            transactional_id=None,
            transaction_timeout=datetime.timedelta(seconds=60),
            producer_id=-1,
            producer_epoch=-1,
        )
    )
    assert resp.error_code == 0, resp
    return resp.producer_id, resp.producer_epoch


def producer_id(c: RawClient) -> int:
    return init_producer_id(c)[0]


def batch(values: list[bytes], **kw) -> bytes:
    now = int(time.time() * 1000)
    return encode_batch(
        [Record(i, now, None, v, []) for i, v in enumerate(values)],
        **kw,
    )


def txn_batch(pid: int, seq: int, values: list[bytes], epoch: int = 0) -> bytes:
    return batch(
        values, producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True
    )


def produce(c: RawClient, topic: str, data: bytes, txn_id: str | None = None, partition=0):
    """One partition's Produce v9 answer."""
    Q = req(0, 9)
    resp = c.request(
        Q.ProduceRequest(
            transactional_id=txn_id,
            acks=-1,
            timeout=datetime.timedelta(seconds=10),
            topic_data=(
                Q.TopicProduceData(
                    name=topic,
                    partition_data=(Q.PartitionProduceData(index=partition, records=data),),
                ),
            ),
        )
    )
    return resp.responses[0].partition_responses[0]


def write_markers(
    c: RawClient,
    pid: int,
    committed: bool,
    partitions: dict[str, list[int]],
    epoch: int = 0,
    coordinator_epoch: int = 0,
) -> dict[tuple[str, int], int]:
    """WriteTxnMarkers v1 for one producer; {(topic, partition): error code}."""
    Q = req(27, 1)
    resp = c.request(
        Q.WriteTxnMarkersRequest(
            markers=(
                Q.WritableTxnMarker(
                    producer_id=pid,
                    producer_epoch=epoch,
                    transaction_result=committed,
                    topics=tuple(
                        Q.WritableTxnMarkerTopic(name=t, partition_indexes=tuple(ps))
                        for t, ps in partitions.items()
                    ),
                    coordinator_epoch=coordinator_epoch,
                ),
            )
        )
    )
    return {
        (t.name, p.partition_index): int(p.error_code)
        for m in resp.markers
        for t in m.topics
        for p in t.partitions
    }


def list_latest(c: RawClient, topic: str, isolation_level: int, partition: int = 0) -> int:
    Q = req(2, 7)
    resp = c.request(
        Q.ListOffsetsRequest(
            replica_id=-1,
            isolation_level=isolation_level,
            topics=(
                Q.ListOffsetsTopic(
                    name=topic,
                    partitions=(
                        Q.ListOffsetsPartition(
                            partition_index=partition, current_leader_epoch=-1, timestamp=-1
                        ),
                    ),
                ),
            ),
        )
    )
    p = resp.topics[0].partitions[0]
    assert p.error_code == 0, p
    return p.offset


def fetch_partition(c: RawClient, topic: str, offset: int, isolation_level: int, partition=0):
    """One partition's Fetch v11 answer (records raw)."""
    Q = req(1, 11)
    resp = c.request(
        Q.FetchRequest(
            replica_id=-1,
            max_wait=datetime.timedelta(milliseconds=0),
            min_bytes=1,
            max_bytes=10 << 20,
            isolation_level=isolation_level,
            session_id=0,
            session_epoch=-1,
            topics=(
                Q.FetchTopic(
                    topic=topic,
                    partitions=(
                        Q.FetchPartition(
                            partition=partition,
                            current_leader_epoch=-1,
                            fetch_offset=offset,
                            log_start_offset=-1,
                            partition_max_bytes=1 << 20,
                        ),
                    ),
                ),
            ),
            forgotten_topics_data=(),
            rack_id="",
        )
    )
    return resp.responses[0].partitions[0]
