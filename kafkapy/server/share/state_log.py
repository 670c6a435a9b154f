"""The share coordinator's log: share-partition state kept durable in ``__share_group_state``
(Kafka's ShareCoordinatorShard with WriteShareGroupState/ReadShareGroupState, here called in
process by the share-partition leader).

One record per share-partition and change, keyed by (group, topic id, partition), its value the
whole state: the state epoch, the start offset and the in-flight runs (first offset, last
offset, state, delivery count). The topic is compacted, so the latest record of each key is what
survives; a deleted group leaves tombstones. The record is appended before the answer that
depends on it (an acknowledgement is durable once answered). At start (first use) every
partition of the topic this broker leads is read back.

The topic is created on first need with ``share.coordinator.state.topic.num.partitions``,
``.replication.factor``, ``.segment.bytes`` and ``.min.isr``. The key and value encodings are
kafkapy's own (Kafka writes ShareSnapshot/ShareUpdate records; the topic is internal, no client
reads it).
"""

from __future__ import annotations

import json
import logging
import struct
import uuid
from typing import TYPE_CHECKING, Any

from kafkapy.coordinator.group.partitioning import java_string_hash
from kafkapy.coordinator.share.ids import kafka_uuid_string
from kafkapy.metadata.names import SHARE_STATE_TOPIC

from ..coordinator.internal_log import InternalTopicLog, create_internal_topic, read_log_records

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.share")

KEY_VERSION = 0
StateKey = tuple[str, uuid.UUID, int]


def encode_key(key: StateKey) -> bytes:
    group, topic_id, partition = key
    g = group.encode()
    head = struct.pack(">hh", KEY_VERSION, len(g))
    return head + g + topic_id.bytes + struct.pack(">i", partition)


def decode_key(data: bytes) -> StateKey | None:
    try:
        version, n = struct.unpack_from(">hh", data, 0)
        if version != KEY_VERSION:
            return None
        group = data[4 : 4 + n].decode()
        topic_id = uuid.UUID(bytes=bytes(data[4 + n : 20 + n]))
        (partition,) = struct.unpack_from(">i", data, 20 + n)
        return group, topic_id, partition
    except (struct.error, UnicodeDecodeError, ValueError):
        return None


def encode_value(
    state_epoch: int, start_offset: int, runs: list[tuple[int, int, int, int]]
) -> bytes:
    return json.dumps({"state_epoch": state_epoch, "start_offset": start_offset, "runs": runs},
                      separators=(",", ":")).encode()


def decode_value(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ShareStateLog:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._log = InternalTopicLog(broker, SHARE_STATE_TOPIC)
        raw = broker.config.raw
        self.num_partitions = int(raw.get("share.coordinator.state.topic.num.partitions", 50))
        self.replication_factor = int(
            raw.get("share.coordinator.state.topic.replication.factor", 3)
        )
        self.segment_bytes = int(raw.get("share.coordinator.state.topic.segment.bytes", 104857600))
        self.min_isr = int(raw.get("share.coordinator.state.topic.min.isr", 2))

    def partition_for(self, key: StateKey) -> int:
        """Kafka's share coordinator partition: hash of "group:topicId:partition"."""
        group, topic_id, partition = key
        info = self.broker.topics.get(SHARE_STATE_TOPIC)
        count = len(info.partitions) if info is not None else self.num_partitions
        text = f"{group}:{kafka_uuid_string(topic_id)}:{partition}"
        return (java_string_hash(text) & 0x7FFFFFFF) % count

    def ensure_topic(self) -> bool:
        if self.broker.topics.get(SHARE_STATE_TOPIC) is not None:
            return True
        live = 1
        if not self.broker.config.uses_zookeeper:
            live = max(len(self.broker.cluster.list_brokers()), 1)
        info = create_internal_topic(
            self.broker,
            SHARE_STATE_TOPIC,
            self.num_partitions,
            self.replication_factor,
            {
                "cleanup.policy": "compact",
                "segment.bytes": str(self.segment_bytes),
                "min.insync.replicas": str(min(self.min_isr, max(live, 1))),
                "compression.type": "producer",
            },
            "share.coordinator.state.topic.replication.factor",
        )
        return info is not None

    def read_all(self) -> dict[StateKey, dict[str, Any]]:
        """The latest state of every share-partition kept on the partitions this broker leads
        (blocking: run in a worker thread)."""
        info = self.broker.topics.get(SHARE_STATE_TOPIC)
        out: dict[StateKey, dict[str, Any]] = {}
        if info is None:
            return out
        for p in sorted(info.partitions):
            plog = self.broker.topics.log(SHARE_STATE_TOPIC, p)
            if plog is None:
                continue
            for rec in read_log_records(plog):
                key = decode_key(rec[0])
                if key is None:
                    continue
                if rec[1] is None:
                    out.pop(key, None)
                    continue
                value = decode_value(rec[1])
                if value is not None:
                    out[key] = value
        return out

    def write(self, key: StateKey, value: bytes | None, now_ms: int) -> bool:
        """Append one state (or tombstone); False when it could not be written."""
        if not self.ensure_topic():
            return False
        try:
            self._log.append(self.partition_for(key), [(encode_key(key), value)], now_ms)
        except Exception as e:  # storage or leadership failure: the state stays in memory
            log.warning("cannot write share state %s: %r", key, e)
            return False
        return True
