"""ACLs apply on every broker of a three-broker ZooKeeper cluster (issue 15).

The brokers talk to each other and to clients on SASL_PLAINTEXT with PLAIN; the brokers'
own user is a super user (replica fetches need CLUSTER_ACTION). An ACL created through one broker
reaches the others through /kafka-acl-changes notifications; one removed through another broker
stops applying everywhere. The ACLs sit in Kafka's ZooKeeper layout, where Kafka's tools would
find them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kazoo.client import KazooClient

from compat_tests.rawclient import RawClient
from compat_tests.security.helpers import plain_jaas
from kafkapy.protocol.errors import ErrorCode
from kafkapy.testing import BrokerProcess, free_port
from kafkapy.testing.cluster import BROKERS, broker_overrides
from kafkapy.testing.zookeeper import ZooKeeperServer

USERS = {"broker": "broker-secret", "admin": "admin-secret", "alice": "alice-secret"}
JAAS = plain_jaas(USERS, me=("broker", USERS["broker"]))  # users, and the brokers' own login


@pytest.fixture(scope="module")
def secured_cluster(tmp_path_factory) -> Iterator[tuple[list[BrokerProcess], str]]:
    base = tmp_path_factory.mktemp("authz-cluster")
    zk = ZooKeeperServer(base / "zookeeper")
    zk.start()
    brokers = []
    try:
        for i in BROKERS:
            port = free_port()
            overrides = {
                **broker_overrides(f"{zk.connect_string}/kafkapy", i),
                "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
                "security.inter.broker.protocol": "SASL_PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
                "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                "super.users": "User:broker;User:admin",
            }
            brokers.append(BrokerProcess(base / f"broker{i}", overrides, port=port).start())
        yield brokers, zk.connect_string
    finally:
        for b in brokers:
            b.stop()
        zk.stop()


def admin_via(broker: BrokerProcess) -> KafkaAdminClient:
    return KafkaAdminClient(
        bootstrap_servers=broker.bootstrap, security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN", sasl_plain_username="admin", sasl_plain_password="admin-secret",
    )


def describe_error(broker: BrokerProcess, topic: str) -> int:
    """The error alice gets asking this broker for the topic's metadata."""
    from kio.schema.metadata.v12 import request as m

    with RawClient(broker.bootstrap).sasl_plain("alice", USERS["alice"]) as c:
        resp = c.request(m.MetadataRequest(
            topics=(m.MetadataRequestTopic(name=topic, topic_id=None),),
            allow_auto_topic_creation=False, include_topic_authorized_operations=False))
        return resp.topics[0].error_code


def until_every_broker(brokers, topic: str, code: int, timeout: float = 15.0) -> float:
    start = time.monotonic()
    while True:
        got = [describe_error(b, topic) for b in brokers]
        if all(g == code for g in got):
            return time.monotonic() - start
        assert time.monotonic() - start < timeout, f"brokers answer {got}, expected {code}"
        time.sleep(0.1)


def test_acl_changes_reach_every_broker(secured_cluster) -> None:
    brokers, zk_connect = secured_cluster
    admin0 = admin_via(brokers[0])
    try:
        # the cluster itself works under SASL with the brokers' super user: replicated topic
        admin0.create_topics([NewTopic("shared", 3, 3)])
    finally:
        admin0.close()
    until_every_broker(brokers, "shared", ErrorCode.topic_authorization_failed)
    read = ACL(principal="User:alice", host="*", operation=ACLOperation.READ,
               permission_type=ACLPermissionType.ALLOW,
               resource_pattern=ResourcePattern(ResourceType.TOPIC, "sha",
                                                ACLResourcePatternType.PREFIXED))
    admin0 = admin_via(brokers[0])
    try:
        assert admin0.create_acls([read])["failed"] == []
    finally:
        admin0.close()
    until_every_broker(brokers, "shared", ErrorCode.none)
    # Kafka's layout, as Kafka's tools would read it
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=10)
    try:
        # replica fetches (CLUSTER_ACTION, granted to the brokers' super user) keep full ISRs
        def isr(p: int) -> list[int]:
            state = zk.get(f"/kafkapy/brokers/topics/shared/partitions/{p}/state")[0]
            return sorted(json.loads(state)["isr"])

        deadline = time.monotonic() + 15
        while not all(isr(p) == list(BROKERS) for p in range(3)):
            assert time.monotonic() < deadline, [isr(p) for p in range(3)]
            time.sleep(0.1)
        doc = json.loads(zk.get("/kafkapy/kafka-acl-extended/prefixed/Topic/sha")[0])
        assert doc == {"version": 1, "acls": [{"principal": "User:alice",
                                               "permissionType": "Allow", "operation": "Read",
                                               "host": "*"}]}
        assert zk.get_children("/kafkapy/kafka-acl-extended-changes")
    finally:
        zk.stop()
        zk.close()
    # removed through another broker: denied everywhere again
    admin2 = admin_via(brokers[2])
    try:
        [(_, deleted, error)] = admin2.delete_acls([ACLFilter(
            principal="User:alice", host=None, operation=ACLOperation.ANY,
            permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, "sha",
                                                   ACLResourcePatternType.PREFIXED))])
        assert len(deleted) == 1 and error.errno == 0
    finally:
        admin2.close()
    until_every_broker(brokers, "shared", ErrorCode.topic_authorization_failed)
