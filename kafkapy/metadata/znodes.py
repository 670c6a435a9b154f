"""Kafka's ZooKeeper tree: one object per znode kind with ``path(...)``, ``encode``, ``decode``.

The documents are byte-compatible with what a ZooKeeper-mode Kafka broker writes (compact JSON,
same field names and value types, e.g. timestamps as strings), so a kafkapy broker and a Kafka
broker could share a ZooKeeper ensemble and tools like zookeeper-shell show familiar data.
``protocol_specs/znodes.json`` describes the same tree declaratively; tests keep them in sync.

Each object has ``TEMPLATE`` (the path with ``{placeholders}``) and ``MODE`` ("persistent",
"ephemeral" or "persistent_sequential"; for sequential nodes ``path`` gives the prefix to which the
store appends the 10-digit counter).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kafkapy.metadata.models import (
    BrokerInfo,
    ControllerInfo,
    Endpoint,
    PartitionState,
    ProducerIdBlock,
    TopicAssignment,
)
from kafkapy.metadata.uuids import base64_to_uuid, uuid_to_base64

PERSISTENT = "persistent"
EPHEMERAL = "ephemeral"
SEQUENTIAL = "persistent_sequential"


def dump_json(obj: Any) -> bytes:
    """Compact JSON as Kafka's Json.encodeAsBytes writes it."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def load_json(data: bytes) -> dict[str, Any]:
    """Parse a JSON object document; ValueError for anything else."""
    obj = json.loads(data.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


class ZNode:
    """Base of the znode kinds: a path template; container nodes have empty data."""

    TEMPLATE: ClassVar[str] = ""
    MODE: ClassVar[str] = PERSISTENT

    def path(self, *args: object) -> str:
        names = [f for _, f, _, _ in string.Formatter().parse(self.TEMPLATE) if f]
        if len(args) != len(names):
            raise TypeError(f"{type(self).__name__}.path takes {names}, got {args!r}")
        return self.TEMPLATE.format(**{n: str(a) for n, a in zip(names, args, strict=True)})

    def encode(self) -> bytes:
        return b""

    def decode(self, data: bytes) -> None:
        return None

    def sequence(self, child: str) -> int | None:
        """For a sequential kind: the counter in the name of a child of its parent
        (``config_change_0000000007`` -> 7), None for a name that is not one of these nodes."""
        prefix = self.TEMPLATE.rsplit("/", 1)[1]
        digits = child[len(prefix):]
        if self.MODE != SEQUENTIAL or not child.startswith(prefix) or not digits.isdigit():
            return None
        return int(digits)


def _int_keys(m: Mapping[str, list[int]] | None) -> dict[int, list[int]]:
    return {int(k): [int(r) for r in v] for k, v in (m or {}).items()}


def _str_keys(m: Mapping[int, list[int]]) -> dict[str, list[int]]:
    return {str(k): list(v) for k, v in sorted(m.items())}


# --- brokers -------------------------------------------------------------------------------------

_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


def parse_endpoint(s: str, protocol_map: Mapping[str, str] | None = None) -> Endpoint:
    """Parse ``NAME://host:port`` (host may be a bracketed IPv6 literal)."""
    m = _ENDPOINT_RE.match(s)
    if not m:
        raise ValueError(f"unable to parse endpoint {s!r}")
    name, host, port = m.group(1), m.group(2), int(m.group(3))
    protocol = (protocol_map or {}).get(name, name)
    return Endpoint(name, host, port, protocol)


class BrokerIdsZNode(ZNode):
    TEMPLATE = "/brokers/ids"


class BrokerIdZNode(ZNode):
    """/brokers/ids/N: a live broker's registration (version 5 document)."""

    TEMPLATE = "/brokers/ids/{broker_id}"
    MODE = EPHEMERAL

    def encode(self, info: BrokerInfo) -> bytes:  # type: ignore[override]
        doc: dict[str, Any] = {
            "features": info.features,
            "listener_security_protocol_map": {
                e.listener_name: e.security_protocol for e in info.endpoints
            },
            "endpoints": [e.connection_string for e in info.endpoints],
            "jmx_port": info.jmx_port,
            "port": info.port,
            "host": info.host,
            "version": info.version,
            "timestamp": str(info.timestamp),
        }
        if info.rack is not None:
            doc["rack"] = info.rack
        return dump_json(doc)

    def decode(self, data: bytes, broker_id: int = -1) -> BrokerInfo:  # type: ignore[override]
        doc = load_json(data)
        version = int(doc.get("version", 1))
        pmap = doc.get("listener_security_protocol_map") or {}
        if version >= 2 and doc.get("endpoints") is not None:
            endpoints = tuple(parse_endpoint(s, pmap) for s in doc["endpoints"])
        else:
            endpoints = (Endpoint("PLAINTEXT", doc["host"], int(doc["port"])),)
        return BrokerInfo(
            id=broker_id,
            endpoints=endpoints,
            rack=doc.get("rack"),
            jmx_port=int(doc.get("jmx_port", -1)),
            timestamp=int(doc.get("timestamp", 0)),
            version=version,
            features=dict(doc.get("features") or {}),
        )


class BrokerSequenceIdZNode(ZNode):
    """/brokers/seqid: its data version numbers generated broker ids."""

    TEMPLATE = "/brokers/seqid"


# --- topics --------------------------------------------------------------------------------------


class TopicsZNode(ZNode):
    TEMPLATE = "/brokers/topics"


class TopicZNode(ZNode):
    """/brokers/topics/T: replica assignment and topic id (version 3 document)."""

    TEMPLATE = "/brokers/topics/{topic}"

    def encode(self, assignment: TopicAssignment) -> bytes:  # type: ignore[override]
        doc: dict[str, Any] = {"partitions": _str_keys(assignment.partitions)}
        if assignment.topic_id is not None:
            doc["topic_id"] = uuid_to_base64(assignment.topic_id)
        doc["adding_replicas"] = _str_keys(assignment.adding_replicas)
        doc["removing_replicas"] = _str_keys(assignment.removing_replicas)
        doc["version"] = 3
        return dump_json(doc)

    def decode(self, data: bytes) -> TopicAssignment:  # type: ignore[override]
        doc = load_json(data)
        tid = doc.get("topic_id")
        return TopicAssignment(
            partitions=_int_keys(doc.get("partitions")),
            topic_id=base64_to_uuid(tid) if tid else None,
            adding_replicas=_int_keys(doc.get("adding_replicas")),
            removing_replicas=_int_keys(doc.get("removing_replicas")),
        )


class TopicPartitionsZNode(ZNode):
    TEMPLATE = "/brokers/topics/{topic}/partitions"


class TopicPartitionZNode(ZNode):
    TEMPLATE = "/brokers/topics/{topic}/partitions/{partition}"


class TopicPartitionStateZNode(ZNode):
    """/brokers/topics/T/partitions/P/state: leader, leader epoch, ISR."""

    TEMPLATE = "/brokers/topics/{topic}/partitions/{partition}/state"

    def encode(self, state: PartitionState) -> bytes:  # type: ignore[override]
        doc: dict[str, Any] = {
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": 1,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
        if state.leader_recovery_state != 0:
            doc["leader_recovery_state"] = state.leader_recovery_state
        return dump_json(doc)

    def decode(self, data: bytes, zk_version: int = 0) -> PartitionState:  # type: ignore[override]
        doc = load_json(data)
        return PartitionState(
            leader=int(doc["leader"]),
            leader_epoch=int(doc["leader_epoch"]),
            isr=[int(b) for b in doc["isr"]],
            controller_epoch=int(doc["controller_epoch"]),
            zk_version=zk_version,
            leader_recovery_state=int(doc.get("leader_recovery_state", 0)),
        )


# --- configs -------------------------------------------------------------------------------------


class ConfigEntityTypeZNode(ZNode):
    """/config/<type> for type in topics, brokers, clients, users, ips."""

    TEMPLATE = "/config/{entity_type}"


class ConfigEntityZNode(ZNode):
    """/config/<type>/<name>: dynamic config overrides ({"version":1,"config":{...}})."""

    TEMPLATE = "/config/{entity_type}/{entity_name}"

    def encode(self, configs: Mapping[str, str]) -> bytes:  # type: ignore[override]
        return dump_json({"version": 1, "config": dict(configs)})

    def decode(self, data: bytes) -> dict[str, str]:  # type: ignore[override]
        if not data:
            return {}
        return {k: str(v) for k, v in (load_json(data).get("config") or {}).items()}


class TopicConfigZNode(ConfigEntityZNode):
    TEMPLATE = "/config/topics/{topic}"


class BrokerConfigZNode(ConfigEntityZNode):
    """/config/brokers/N, or /config/brokers/<default> for cluster-wide defaults."""

    TEMPLATE = "/config/brokers/{broker_id}"
    DEFAULT_ENTITY = "<default>"


class ConfigChangesZNode(ZNode):
    TEMPLATE = "/config/changes"


class ConfigChangeNotificationZNode(ZNode):
    """/config/changes/config_change_NNNNNNNNNN: "the entity at entity_path changed"."""

    TEMPLATE = "/config/changes/config_change_"
    MODE = SEQUENTIAL

    def encode(self, entity_path: str) -> bytes:  # type: ignore[override]
        return dump_json({"version": 2, "entity_path": entity_path})

    def decode(self, data: bytes) -> str:  # type: ignore[override]
        """The entity path; ValueError for an unknown version or an entity path without a type."""
        doc = load_json(data)
        version = doc.get("version")
        if version == 1:  # {"version":1,"entity_type":..,"entity_name":..}
            path = f"{doc['entity_type']}/{doc['entity_name']}"
        elif version == 2:
            path = str(doc["entity_path"])
        else:
            raise ValueError(f"config change notification version {version!r} is not 1 or 2")
        self.split(path)
        return path

    @staticmethod
    def split(entity_path: str) -> tuple[str, str]:
        """(entity type, entity name) of an entity path: ``users/u/clients/c`` gives
        ("users", "u/clients/c"), the name as it appears in the config znode's path."""
        kind, sep, name = entity_path.partition("/")
        if not sep or not kind or not name:
            raise ValueError(f"config change entity path {entity_path!r} has no entity type")
        return kind, name


# --- admin ---------------------------------------------------------------------------------------


class DeleteTopicsZNode(ZNode):
    TEMPLATE = "/admin/delete_topics"


class DeleteTopicZNode(ZNode):
    """/admin/delete_topics/T: a pending topic deletion (empty data)."""

    TEMPLATE = "/admin/delete_topics/{topic}"


# --- cluster and controller ----------------------------------------------------------------------


class ClusterIdZNode(ZNode):
    """/cluster/id: {"version":"1","id":"<22-char base64 uuid>"} (version is a string)."""

    TEMPLATE = "/cluster/id"

    def encode(self, cluster_id: str) -> bytes:  # type: ignore[override]
        return dump_json({"version": "1", "id": cluster_id})

    def decode(self, data: bytes) -> str:  # type: ignore[override]
        return str(load_json(data)["id"])


class ControllerZNode(ZNode):
    """/controller: the active controller's registration (ephemeral, version 2 document)."""

    TEMPLATE = "/controller"
    MODE = EPHEMERAL

    def encode(self, info: ControllerInfo) -> bytes:  # type: ignore[override]
        return dump_json({
            "version": info.version,
            "brokerid": info.broker_id,
            "timestamp": str(info.timestamp),
            "kraftControllerEpoch": info.kraft_controller_epoch,
        })

    def decode(self, data: bytes) -> ControllerInfo:  # type: ignore[override]
        doc = load_json(data)
        return ControllerInfo(
            broker_id=int(doc["brokerid"]),
            timestamp=int(doc.get("timestamp", 0)),
            kraft_controller_epoch=int(doc.get("kraftControllerEpoch", -1)),
            version=int(doc.get("version", 1)),
        )


class ControllerEpochZNode(ZNode):
    """/controller_epoch: the controller epoch as a plain decimal integer."""

    TEMPLATE = "/controller_epoch"
    INITIAL_EPOCH = 0

    def encode(self, epoch: int) -> bytes:  # type: ignore[override]
        return str(int(epoch)).encode("ascii")

    def decode(self, data: bytes) -> int:  # type: ignore[override]
        return int(data.decode("ascii").strip())


# --- notifications and misc ----------------------------------------------------------------------


class IsrChangeNotificationsZNode(ZNode):
    TEMPLATE = "/isr_change_notification"


class IsrChangeNotificationZNode(ZNode):
    """/isr_change_notification/isr_change_NNNNNNNNNN: partitions whose ISR changed."""

    TEMPLATE = "/isr_change_notification/isr_change_"
    MODE = SEQUENTIAL

    def encode(self, partitions: Iterable[tuple[str, int]]) -> bytes:  # type: ignore[override]
        return dump_json({
            "version": 1,
            "partitions": [{"topic": t, "partition": p} for t, p in partitions],
        })

    def decode(self, data: bytes) -> list[tuple[str, int]]:  # type: ignore[override]
        return [(str(e["topic"]), int(e["partition"])) for e in load_json(data)["partitions"]]


class LogDirEventNotificationsZNode(ZNode):
    TEMPLATE = "/log_dir_event_notification"


@dataclass(frozen=True, slots=True)
class LogDirEvent:
    broker: int
    #: the partitions taken offline (kafkapy: its controller has no LeaderAndIsr responses to
    #: learn them from; Kafka's reads only "broker"). None when the writer did not say.
    partitions: tuple[tuple[str, int], ...] | None = None


class LogDirEventNotificationZNode(ZNode):
    """/log_dir_event_notification/log_dir_event_NNNNNNNNNN: a broker's log dir failed."""

    TEMPLATE = "/log_dir_event_notification/log_dir_event_"
    MODE = SEQUENTIAL
    LOG_DIR_FAILURE = 1

    def encode(self, event: LogDirEvent) -> bytes:  # type: ignore[override]
        doc: dict[str, Any] = {"version": 1, "broker": event.broker, "event": self.LOG_DIR_FAILURE}
        if event.partitions is not None:
            doc["partitions"] = [{"topic": t, "partition": p} for t, p in event.partitions]
        return dump_json(doc)

    def decode(self, data: bytes) -> LogDirEvent:  # type: ignore[override]
        doc = load_json(data)
        parts = doc.get("partitions")
        return LogDirEvent(
            int(doc["broker"]),
            None if parts is None else tuple((str(e["topic"]), int(e["partition"])) for e in parts),
        )


class ProducerIdBlockZNode(ZNode):
    """/latest_producer_id_block: the last producer id block handed out (bounds as strings)."""

    TEMPLATE = "/latest_producer_id_block"

    def encode(self, block: ProducerIdBlock) -> bytes:  # type: ignore[override]
        return dump_json({
            "version": 1,
            "broker": block.broker,
            "block_start": str(block.block_start),
            "block_end": str(block.block_end),
        })

    def decode(self, data: bytes) -> ProducerIdBlock | None:  # type: ignore[override]
        if not data:
            return None
        doc = load_json(data)
        return ProducerIdBlock(int(doc["broker"]), int(doc["block_start"]), int(doc["block_end"]))


class ConsumersZNode(ZNode):
    """/consumers: kept for the old ZooKeeper-based consumers' tools; always empty here."""

    TEMPLATE = "/consumers"


# --- singletons ----------------------------------------------------------------------------------

BROKER_IDS = BrokerIdsZNode()
BROKER_ID = BrokerIdZNode()
BROKER_SEQUENCE_ID = BrokerSequenceIdZNode()
TOPICS = TopicsZNode()
TOPIC = TopicZNode()
TOPIC_PARTITIONS = TopicPartitionsZNode()
TOPIC_PARTITION = TopicPartitionZNode()
TOPIC_PARTITION_STATE = TopicPartitionStateZNode()
CONFIG_ENTITY_TYPE = ConfigEntityTypeZNode()
CONFIG_ENTITY = ConfigEntityZNode()
TOPIC_CONFIG = TopicConfigZNode()
BROKER_CONFIG = BrokerConfigZNode()
CONFIG_CHANGES = ConfigChangesZNode()
CONFIG_CHANGE_NOTIFICATION = ConfigChangeNotificationZNode()
DELETE_TOPICS = DeleteTopicsZNode()
DELETE_TOPIC = DeleteTopicZNode()
CLUSTER_ID = ClusterIdZNode()
CONTROLLER = ControllerZNode()
CONTROLLER_EPOCH = ControllerEpochZNode()
ISR_CHANGE_NOTIFICATIONS = IsrChangeNotificationsZNode()
ISR_CHANGE_NOTIFICATION = IsrChangeNotificationZNode()
LOG_DIR_EVENT_NOTIFICATIONS = LogDirEventNotificationsZNode()
LOG_DIR_EVENT_NOTIFICATION = LogDirEventNotificationZNode()
PRODUCER_ID_BLOCK = ProducerIdBlockZNode()
CONSUMERS = ConsumersZNode()

#: every znode kind, by the name protocol_specs/znodes.json uses
ALL: dict[str, ZNode] = {
    type(z).__name__: z
    for z in (
        BROKER_IDS, BROKER_ID, BROKER_SEQUENCE_ID, TOPICS, TOPIC, TOPIC_PARTITIONS,
        TOPIC_PARTITION, TOPIC_PARTITION_STATE, CONFIG_ENTITY_TYPE, CONFIG_ENTITY, TOPIC_CONFIG,
        BROKER_CONFIG, CONFIG_CHANGES, CONFIG_CHANGE_NOTIFICATION, DELETE_TOPICS, DELETE_TOPIC,
        CLUSTER_ID, CONTROLLER, CONTROLLER_EPOCH, ISR_CHANGE_NOTIFICATIONS,
        ISR_CHANGE_NOTIFICATION, LOG_DIR_EVENT_NOTIFICATIONS, LOG_DIR_EVENT_NOTIFICATION,
        PRODUCER_ID_BLOCK, CONSUMERS,
    )
}

CONFIG_ENTITY_TYPES = ("topics", "clients", "users", "brokers", "ips")

#: the persistent paths a Kafka broker makes sure exist at startup. Kafka also creates an empty
#: /latest_producer_id_block; kafkapy leaves it to the producer id allocator to create it with data.
PERSISTENT_PATHS: tuple[str, ...] = (
    CONSUMERS.path(),
    BROKER_IDS.path(),
    TOPICS.path(),
    CONFIG_CHANGES.path(),
    DELETE_TOPICS.path(),
    BROKER_SEQUENCE_ID.path(),
    ISR_CHANGE_NOTIFICATIONS.path(),
    LOG_DIR_EVENT_NOTIFICATIONS.path(),
    *(CONFIG_ENTITY_TYPE.path(t) for t in CONFIG_ENTITY_TYPES),
)
