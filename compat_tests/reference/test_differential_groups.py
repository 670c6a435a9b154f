"""Differential sessions of consumer groups and transactions seen through their admin APIs:
a classic group formed by kafka-python's consumer (DescribeGroups, committed offsets through
kafka-python's admin client, OffsetDelete while it is Empty), a group of the consumer protocol
(KIP-848) formed by confluent-kafka's consumer and described by its AdminClient, and an open then
committed transaction through DescribeTransactions, ListTransactions and DescribeProducers, plus
DescribeCluster. Each runs against Apache Kafka 4.4 and kafkapy; differences not in
known_differences.py fail the test.
"""

from __future__ import annotations

import time
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw


def _produce(target: Target, topic: str, count: int, partitions: int = 1) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": target.bootstrap})
    for i in range(count):
        producer.produce(topic, value=b"m%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0
    producer.close()


def _describe_group(target: Target, group: str) -> dict[str, Any]:
    from kio.schema.describe_groups.v5.request import DescribeGroupsRequest

    with raw(target) as client:
        resp = client.request(DescribeGroupsRequest(groups=(group,),
                                                    include_authorized_operations=False))
    g = resp.groups[0]
    return {"error_code": g.error_code.name, "state": g.group_state,
            "protocol_type": g.protocol_type, "protocol": g.protocol_data,
            "members": sorted(m.client_id for m in g.members)}


def kafka_python_group(target: Target) -> dict[str, Any]:
    from kafka import KafkaAdminClient, KafkaConsumer

    topic, group = "diff-kp-group-topic", "diff-kp-group"
    create_topic(target, topic, partitions=2)
    _produce(target, topic, 8, partitions=2)
    out: dict[str, Any] = {}
    consumer = KafkaConsumer(topic, bootstrap_servers=target.bootstrap, group_id=group,
                             client_id="diff-kp-member", auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=20_000)
    try:
        got: list[bytes] = []
        for msg in consumer:
            got.append(msg.value)
            if len(got) == 8:
                break
        out["consumed"] = sorted(got)
        consumer.commit()
        out["assignment"] = sorted((tp.topic, tp.partition) for tp in consumer.assignment())
        out["stable"] = _describe_group(target, group)
    finally:
        consumer.close()
    out["after_close"] = _describe_group(target, group)
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap, client_id="diff-kp-admin")
    try:
        offsets = admin.list_group_offsets({group: None})[group]
        out["committed"] = sorted((tp.partition, meta.offset) for tp, meta in offsets.items())
        described = dict(admin.describe_groups([group])[group])
        members = described.pop("members", [])
        # a bit set the client turns into a list: its order is the client's
        ops = {str(o): True for o in described.pop("authorized_operations", None) or []}
        out["described"] = {**described, "members": len(members), "authorized_operations": ops}
    finally:
        admin.close()
    from kio.schema.offset_delete.v0.request import (
        OffsetDeleteRequest,
        OffsetDeleteRequestPartition,
        OffsetDeleteRequestTopic,
    )

    with raw(target) as client:
        resp = client.request(OffsetDeleteRequest(group_id=group, topics=(
            OffsetDeleteRequestTopic(name=topic, partitions=(
                OffsetDeleteRequestPartition(partition_index=0),
                OffsetDeleteRequestPartition(partition_index=5))),)))
        result = entity_obs(resp)
        for t in result["topics"]:  # the order of partitions in the answer means nothing
            t["partitions"].sort(key=lambda p: p["partition_index"])
        out["offset_delete"] = result
    return out


def test_kafka_python_group(differential: Differential) -> None:
    outcome = differential.check("kafka_python_group", kafka_python_group)
    assert outcome.observations > 20


def consumer_protocol_group(target: Target) -> dict[str, Any]:
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient

    topic, group = "diff-kip848-topic", "diff-kip848-group"
    create_topic(target, topic, partitions=3)
    _produce(target, topic, 9, partitions=3)
    out: dict[str, Any] = {}
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": group,
                         "group.protocol": "consumer", "client.id": "diff-kip848-member",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    try:
        consumer.subscribe([topic])
        got: list[bytes] = []
        deadline = time.monotonic() + 40
        while len(got) < 9 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value())
        out["consumed"] = sorted(got)
        consumer.commit(asynchronous=False)
        desc = admin.describe_consumer_groups([group])[group].result(timeout=30)
        out["described"] = {
            "simple": desc.is_simple_consumer_group, "state": str(desc.state),
            "type": str(desc.type), "assignor": desc.partition_assignor,
            "members": [{"client_id": m.client_id, "assignment": sorted(
                tp.partition for tp in m.assignment.topic_partitions)} for m in desc.members]}
    finally:
        consumer.close()
    desc = admin.describe_consumer_groups([group])[group].result(timeout=30)
    out["after_close"] = {"state": str(desc.state), "type": str(desc.type),
                          "members": len(desc.members)}
    out["classic_view"] = _describe_group(target, group)
    return out


def test_consumer_protocol_group(differential: Differential) -> None:
    outcome = differential.check("consumer_protocol_group", consumer_protocol_group)
    assert outcome.observations > 12


def _txn_state(target: Target, txn_id: str, topic: str) -> dict[str, Any]:
    from kio.schema.describe_producers.v0.request import DescribeProducersRequest, TopicRequest
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from kio.schema.list_transactions.v1.request import ListTransactionsRequest
    from kio.serial.errors import OutOfBoundValue

    volatile = {"producer_id", "transaction_start_time", "last_timestamp"}
    with raw(target) as client:
        try:
            described: Any = entity_obs(client.request(DescribeTransactionsRequest(
                transactional_ids=(txn_id,))).transaction_states[0], drop=volatile)
        except OutOfBoundValue:  # kio refuses the -1 start time of a transaction not begun
            described = "<a negative start time>"
            client.close()
            client = raw(target)
        listed = client.request(ListTransactionsRequest(
            state_filters=(), producer_id_filters=(), duration_filter=-1))
        producers = client.request(DescribeProducersRequest(topics=(
            TopicRequest(name=topic, partition_indexes=(0, 4)),)))
        client.close()
    return {
        "describe": described,
        "list": sorted((t.transactional_id, t.transaction_state)
                       for t in listed.transaction_states
                       if t.transactional_id.startswith("diff-txn-admin")),
        "producers": entity_obs(producers.topics[0], drop=volatile),
    }


def transaction_admin(target: Target) -> dict[str, Any]:
    from confluent_kafka import Producer

    topic, txn_id = "diff-txn-admin-topic", "diff-txn-admin"
    create_topic(target, topic)
    producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": txn_id,
                         "transaction.timeout.ms": 60_000})
    producer.init_transactions(30)
    out: dict[str, Any] = {"empty": _txn_state(target, txn_id, topic)}
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, value=b"t%d" % i)
    producer.flush(30)
    out["open"] = _txn_state(target, txn_id, topic)
    producer.commit_transaction(30)
    deadline = time.monotonic() + 15  # the coordinator completes the commit after answering
    while time.monotonic() < deadline:
        state = _txn_state(target, txn_id, topic)
        if isinstance(state["describe"], dict) and (
                state["describe"]["transaction_state"] == "CompleteCommit"):
            break
        time.sleep(0.1)
    out["committed"] = state
    out["unknown_id"] = _txn_state(target, "diff-txn-admin-never", topic)["describe"]
    producer.close()
    return out


def test_transaction_admin(differential: Differential) -> None:
    outcome = differential.check("transaction_admin", transaction_admin)
    assert outcome.observations > 40


def describe_cluster(target: Target) -> dict[str, Any]:
    from kio.schema.describe_cluster.v1.request import DescribeClusterRequest

    with raw(target) as client:
        resp = client.request(DescribeClusterRequest(include_cluster_authorized_operations=True,
                                                     endpoint_type=1))
    return entity_obs(resp)


def test_describe_cluster(differential: Differential) -> None:
    outcome = differential.check("describe_cluster", describe_cluster)
    assert outcome.observations >= 8
