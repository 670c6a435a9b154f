"""The hand-written Metadata response writer agrees with kio for every version, and the broker's
cache of encoded topic entries follows every change of a topic's metadata."""

from __future__ import annotations

import datetime
import io
import random
import uuid

import pytest
from kio.index import load_payload_module
from kio.serial import entity_reader, entity_writer
from kio.static.constants import EntityType

from kafkapy.metadata.models import PartitionState, TopicInfo
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.metadata_response import (
    NOT_REQUESTED,
    BrokerMetadata,
    PartitionMetadata,
    encode_metadata_response,
    encode_topic_head,
    encode_topic_tail,
)
from kafkapy.server.metadata_cache import TopicBlockCache, partition_metadata
from kafkapy.server.responses import build

VERSIONS = range(0, 14)


def _kio_bytes(entity) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def _sample(rng: random.Random):
    brokers = [
        BrokerMetadata(i, f"host-{i}.example", 9092 + i, None if i % 2 else f"rack{i}")
        for i in range(rng.randint(0, 4))
    ]
    topics = []
    for t in range(rng.randint(0, 4)):
        parts = [
            PartitionMetadata(
                rng.choice((0, 5)),
                p,
                rng.randint(-1, 3),
                rng.randint(-1, 1000),
                [rng.randint(0, 5) for _ in range(rng.randint(0, 3))],
                [rng.randint(0, 5) for _ in range(rng.randint(0, 3))],
                [rng.randint(0, 5) for _ in range(rng.randint(0, 2))],
            )
            for p in range(rng.randint(0, 5))
        ]
        topics.append(
            (rng.choice((0, 3, 17)), f"topic-{t}-é", uuid.uuid4(), rng.random() < 0.3, parts,
             rng.choice((NOT_REQUESTED, 0, 1 << 3 | 1 << 8)))
        )
    return brokers, topics


@pytest.mark.parametrize("version", VERSIONS)
def test_matches_kio(version):
    R = load_payload_module(3, version, EntityType.response)
    rng = random.Random(version)
    for _ in range(30):
        brokers, topics = _sample(rng)
        cluster_id = rng.choice((None, "cluster-x"))
        controller = rng.randint(-1, 3)
        cluster_ops = rng.choice((NOT_REQUESTED, 0, 1 << 4))
        ours = encode_metadata_response(
            version,
            brokers,
            cluster_id,
            controller,
            [
                encode_topic_head(version, e, n, tid, internal, parts)
                + encode_topic_tail(version, ops)
                for e, n, tid, internal, parts, ops in topics
            ],
            cluster_authorized_operations=cluster_ops,
            error_code=7 if version >= 13 else 0,
            throttle_ms=3,
        )
        entity = build(
            R.MetadataResponse,
            throttle_time=datetime.timedelta(milliseconds=3),
            brokers=tuple(
                build(R.MetadataResponseBroker, node_id=b.node_id, host=b.host, port=b.port,
                      rack=b.rack)
                for b in brokers
            ),
            cluster_id=cluster_id,
            controller_id=controller,
            topics=tuple(
                build(
                    R.MetadataResponseTopic,
                    error_code=ErrorCode(e),
                    name=n,
                    topic_id=tid,
                    is_internal=internal,
                    partitions=tuple(
                        build(
                            R.MetadataResponsePartition,
                            error_code=ErrorCode(p.error_code),
                            partition_index=p.partition,
                            leader_id=p.leader,
                            leader_epoch=p.leader_epoch,
                            replica_nodes=tuple(p.replicas),
                            isr_nodes=tuple(p.isr),
                            offline_replicas=tuple(p.offline),
                        )
                        for p in parts
                    ),
                    topic_authorized_operations=ops,
                )
                for e, n, tid, internal, parts, ops in topics
            ),
            cluster_authorized_operations=cluster_ops,
            error_code=ErrorCode(7),
        )
        assert ours == _kio_bytes(entity)
        decoded, size = entity_reader(R.MetadataResponse)(ours, 0)
        assert size == len(ours)


def test_null_name_and_zero_id_of_an_unknown_topic_id():
    R = load_payload_module(3, 12, EntityType.response)
    ours = encode_topic_head(12, 100, None, None, False, ()) + encode_topic_tail(12)
    body = encode_metadata_response(12, [], None, -1, [ours])
    decoded, _ = entity_reader(R.MetadataResponse)(body, 0)
    (t,) = decoded.topics
    assert t.name is None and t.topic_id is None and t.error_code == 100
    assert t.topic_authorized_operations == NOT_REQUESTED


def _info(leader=1, epoch=0, isr=(1, 2), replicas=(1, 2), name="t"):
    return TopicInfo(
        name=name,
        topic_id=uuid.UUID(int=42),
        partitions={0: list(replicas), 1: list(replicas)},
        states={p: PartitionState(leader, epoch, list(isr), 0) for p in (0, 1)},
        configs={},
    )


def _partitions(block: bytes, version: int = 12):
    R = load_payload_module(3, version, EntityType.response)
    body = encode_metadata_response(version, [], "c", 1, [block + encode_topic_tail(version)])
    decoded, _ = entity_reader(R.MetadataResponse)(body, 0)
    return decoded.topics[0].partitions


def test_cache_reuses_until_the_view_or_the_live_brokers_change():
    current: dict[str, TopicInfo] = {}
    cache = TopicBlockCache(current)
    info = current["t"] = _info()
    live = frozenset({1, 2})
    first = cache.head(12, info, live)
    assert cache.head(12, info, frozenset({1, 2})) is first  # same view, same brokers: reused
    # a new leader, epoch or ISR is a new view: re-encoded
    for changed in (_info(leader=2), _info(epoch=5), _info(isr=(1,))):
        current["t"] = changed
        (p0, _p1) = _partitions(cache.head(12, changed, live))
        assert (p0.leader_id, p0.leader_epoch, p0.isr_nodes) == (
            changed.states[0].leader,
            changed.states[0].leader_epoch,
            tuple(changed.states[0].isr),
        )
    # a broker going away makes its replicas offline
    (p0, _p1) = _partitions(cache.head(12, current["t"], frozenset({1})))
    assert p0.offline_replicas == (2,)
    # versions are encoded separately
    assert cache.head(5, current["t"], live) != cache.head(12, current["t"], live)


def test_cache_drops_entries_of_views_that_are_gone():
    current: dict[str, TopicInfo] = {}
    cache = TopicBlockCache(current, slack=8)
    live = frozenset({1, 2})
    for i in range(40):  # topics created and deleted: only current views stay cached
        info = current[f"t{i}"] = _info(name=f"t{i}")
        cache.head(12, info, live)
        del current[f"t{i}"]
    assert len(cache) <= 9


def test_partition_metadata_without_a_state_has_no_leader():
    info = TopicInfo("t", uuid.UUID(int=1), {0: [1]}, {}, {})
    (p,) = partition_metadata(info, frozenset({1}))
    assert (p.error_code, p.leader, p.leader_epoch, list(p.isr)) == (5, -1, -1, [])
