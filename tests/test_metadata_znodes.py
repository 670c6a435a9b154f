"""Znode documents: Kafka's field names, round trips, agreement with protocol_specs/znodes.json."""

from __future__ import annotations

import json
import string
import uuid
from pathlib import Path

import pytest

from kafkapy.metadata import acls
from kafkapy.metadata import delegation_tokens as dt
from kafkapy.metadata import znodes as zn
from kafkapy.metadata.models import (
    BrokerInfo,
    ControllerInfo,
    Endpoint,
    PartitionState,
    ProducerIdBlock,
    TopicAssignment,
)
from kafkapy.metadata.uuids import (
    ZERO_UUID,
    base64_to_uuid,
    random_cluster_id,
    random_uuid,
    uuid_to_base64,
)

SPEC = json.loads(
    (Path(__file__).parent.parent / "protocol_specs" / "znodes.json").read_text()
)["znodes"]
ALL = {**zn.ALL, **acls.ALL, **dt.ALL}  # ACL and token znode kinds: their own modules


def test_spec_lists_every_znode_kind() -> None:
    assert set(SPEC) == set(ALL)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_spec_path_and_mode_match_code(name: str) -> None:
    spec, node = SPEC[name], ALL[name]
    assert node.TEMPLATE == spec["path"]
    assert node.MODE == spec["mode"]
    args = [f"x{i}" for i, (_, f, _, _) in enumerate(string.Formatter().parse(spec["path"])) if f]
    assert node.path(*args) == spec["path"].format(
        **{f: a for (_, f, _, _), a in zip(
            [p for p in string.Formatter().parse(spec["path"]) if p[1]], args, strict=True)}
    )


@pytest.mark.parametrize("name", sorted(n for n in SPEC if SPEC[n]["format"] == "json"))
def test_spec_example_round_trips(name: str) -> None:
    spec, node = SPEC[name], ALL[name]
    raw = json.dumps(spec["example"]).encode()
    again = json.loads(node.encode(node.decode(raw)))  # type: ignore[call-arg]
    assert again == spec["example"]
    assert set(spec["example"]) <= set(spec["fields"])


def test_integer_and_empty_formats() -> None:
    assert zn.CONTROLLER_EPOCH.encode(7) == b"7"
    assert zn.CONTROLLER_EPOCH.decode(b"7") == 7
    for name, spec in SPEC.items():
        if spec["format"] == "empty":
            assert ALL[name].encode() == b""
        if spec["format"] == "text":
            node = ALL[name]
            assert node.encode(node.decode(spec["example"].encode())).decode() == spec["example"]


def test_broker_registration_document() -> None:
    info = BrokerInfo(
        id=3,
        endpoints=(Endpoint("PLAINTEXT", "127.0.0.1", 9092),),
        timestamp=1700000000123,
    )
    data = zn.BROKER_ID.encode(info)
    assert data == (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,'
        b'"host":"127.0.0.1","version":5,"timestamp":"1700000000123"}'
    )
    assert zn.BROKER_ID.decode(data, 3) == info
    assert zn.BROKER_ID.path(3) == "/brokers/ids/3"


def test_broker_without_plaintext_and_ipv6_and_rack() -> None:
    info = BrokerInfo(
        id=1,
        endpoints=(Endpoint("INTERNAL", "::1", 9093, "SSL"),),
        rack="r1",
        timestamp=5,
    )
    doc = json.loads(zn.BROKER_ID.encode(info))
    assert doc["host"] is None and doc["port"] == -1 and doc["rack"] == "r1"
    assert doc["endpoints"] == ["INTERNAL://[::1]:9093"]
    assert doc["listener_security_protocol_map"] == {"INTERNAL": "SSL"}
    assert zn.BROKER_ID.decode(zn.BROKER_ID.encode(info), 1) == info


def test_old_broker_versions_decode() -> None:
    v1 = b'{"jmx_port":-1,"timestamp":"12","host":"h","version":1,"port":9092}'
    info = zn.BROKER_ID.decode(v1, 0)
    assert info.endpoints == (Endpoint("PLAINTEXT", "h", 9092),) and info.timestamp == 12
    v2 = b'{"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h:1"],"host":"h","version":2,"port":1}'
    assert zn.BROKER_ID.decode(v2).endpoints[0].port == 1


def test_topic_document() -> None:
    tid = uuid.UUID(int=2)
    a = TopicAssignment({1: [2, 1], 0: [1, 2]}, tid)
    data = zn.TOPIC.encode(a)
    assert data == (
        b'{"partitions":{"0":[1,2],"1":[2,1]},"topic_id":"AAAAAAAAAAAAAAAAAAAAAg",'
        b'"adding_replicas":{},"removing_replicas":{},"version":3}'
    )
    assert zn.TOPIC.decode(data) == TopicAssignment({0: [1, 2], 1: [2, 1]}, tid)
    legacy = zn.TOPIC.decode(b'{"version":1,"partitions":{"0":[1]}}')
    assert legacy.topic_id is None and legacy.partitions == {0: [1]}


def test_partition_state_document() -> None:
    s = PartitionState(leader=1, leader_epoch=0, isr=[1], controller_epoch=1, zk_version=4)
    data = zn.TOPIC_PARTITION_STATE.encode(s)
    assert data == b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}'
    assert zn.TOPIC_PARTITION_STATE.decode(data, zk_version=4) == s
    rec = PartitionState(1, 2, [1], 1, leader_recovery_state=1)
    assert b'"leader_recovery_state":1' in zn.TOPIC_PARTITION_STATE.encode(rec)
    assert zn.TOPIC_PARTITION_STATE.path("t", 3) == "/brokers/topics/t/partitions/3/state"


def test_config_documents() -> None:
    assert zn.TOPIC_CONFIG.encode({"a": "1"}) == b'{"version":1,"config":{"a":"1"}}'
    assert zn.TOPIC_CONFIG.decode(b'{"version":1,"config":{"a":"1"}}') == {"a": "1"}
    assert zn.TOPIC_CONFIG.path("t") == "/config/topics/t"
    assert zn.BROKER_CONFIG.path(1) == "/config/brokers/1"
    change = zn.CONFIG_CHANGE_NOTIFICATION
    assert change.encode("topics/t") == b'{"version":2,"entity_path":"topics/t"}'
    assert change.decode(b'{"version":1,"entity_type":"topics","entity_name":"t"}') == "topics/t"
    assert change.path() == "/config/changes/config_change_"


def test_config_change_notification_names_and_documents() -> None:
    change = zn.CONFIG_CHANGE_NOTIFICATION
    assert change.MODE == zn.SEQUENTIAL
    assert change.sequence("config_change_0000000042") == 42
    assert change.sequence("config_change_0000000000") == 0
    for other in ("config_change_", "config_change_12ab", "isr_change_0000000001", "x"):
        assert change.sequence(other) is None
    assert zn.ISR_CHANGE_NOTIFICATION.sequence("isr_change_0000000003") == 3
    assert zn.TOPIC.sequence("orders") is None  # not a sequential kind
    assert change.encode("brokers/<default>") == (
        b'{"version":2,"entity_path":"brokers/<default>"}'
    )
    assert change.decode(b'{"version":2,"entity_path":"users/u/clients/c"}') == "users/u/clients/c"
    assert change.split("users/u/clients/c") == ("users", "u/clients/c")
    assert change.split("brokers/<default>") == ("brokers", "<default>")
    for bad in (
        b'{"version":3,"entity_path":"topics/t"}',
        b'{"entity_path":"topics/t"}',
        b'{"version":2,"entity_path":"topics"}',
        b'{"version":2,"entity_path":"/t"}',
        b'[1]',
    ):
        with pytest.raises(ValueError):
            change.decode(bad)


def test_cluster_controller_and_misc_documents() -> None:
    assert zn.CLUSTER_ID.encode("abc") == b'{"version":"1","id":"abc"}'
    assert zn.CLUSTER_ID.decode(b'{"version":"1","id":"abc"}') == "abc"
    c = ControllerInfo(broker_id=1, timestamp=99)
    assert zn.CONTROLLER.encode(c) == (
        b'{"version":2,"brokerid":1,"timestamp":"99","kraftControllerEpoch":-1}'
    )
    assert zn.CONTROLLER.decode(zn.CONTROLLER.encode(c)) == c
    assert zn.CONTROLLER.decode(b'{"version":1,"brokerid":4,"timestamp":"1"}').broker_id == 4
    block = ProducerIdBlock(1, 1000, 1999)
    assert json.loads(zn.PRODUCER_ID_BLOCK.encode(block))["block_start"] == "1000"
    assert zn.PRODUCER_ID_BLOCK.decode(zn.PRODUCER_ID_BLOCK.encode(block)) == block
    assert zn.PRODUCER_ID_BLOCK.decode(b"") is None
    assert zn.ISR_CHANGE_NOTIFICATION.decode(zn.ISR_CHANGE_NOTIFICATION.encode([("t", 0)])) == [
        ("t", 0)
    ]
    assert zn.DELETE_TOPIC.path("t") == "/admin/delete_topics/t"
    assert "/brokers/ids" in zn.PERSISTENT_PATHS and "/config/topics" in zn.PERSISTENT_PATHS


def test_path_argument_count_checked() -> None:
    with pytest.raises(TypeError):
        zn.TOPIC.path()


def test_uuid_base64() -> None:
    u = uuid.UUID("c7b954f4-fddf-4645-a3fb-c3349d0d9a06")
    s = uuid_to_base64(u)
    assert len(s) == 22 and "=" not in s
    assert base64_to_uuid(s) == u
    assert uuid_to_base64(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    for bad in ("", "abc", "A" * 30, "!!!!!!!!!!!!!!!!!!!!!!"):
        with pytest.raises(ValueError):
            base64_to_uuid(bad)


def test_random_ids() -> None:
    ids = {random_uuid() for _ in range(200)}
    assert len(ids) == 200 and ZERO_UUID not in ids and uuid.UUID(int=1) not in ids
    assert all(not uuid_to_base64(u).startswith("-") for u in ids)
    cid = random_cluster_id()
    assert len(cid) == 22 and all(c.isalnum() or c in "-_" for c in cid)
