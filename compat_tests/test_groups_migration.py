"""Online migration of a consumer group between the classic protocol and the consumer protocol
(KIP-848, group.consumer.migration.policy=bidirectional, Kafka 4.0's default) with librdkafka
(confluent-kafka) against a real kafkapy broker: a rolling upgrade and its way back.

Two consumers of the classic protocol (librdkafka's default group.protocol=classic, eager range
assignor) share a 6-partition topic. One is replaced by a consumer with group.protocol=consumer:
its first ConsumerGroupHeartbeat converts the group, the classic member keeps its partitions until
its heartbeat tells it to rejoin, and the server-side assignor splits the partitions. Then the
consumer-protocol member leaves: the group is classic again and, after a classic rebalance, the
remaining member owns every partition. Every consumer commits each record after processing it
(at least once), records keep coming at each step (and the broker restarts while the group is
migrated), and at the end every record produced was consumed and every partition's committed
offset is its end. A second test does the same with kafka-python's classic members.
"""

from __future__ import annotations

import time

from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupType,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from .test_groups_confluent import create_topic, produce

TOPIC = "events"
PARTITIONS = 6
FAST = {
    "offsets.topic.num.partitions": "5",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "1000",
}


def new_consumer(bootstrap, name, **extra):
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": "cg",
        "client.id": name,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 1000,
    }
    if extra.get("group.protocol") != "consumer":  # classic-only settings
        conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 300})
    conf.update(extra)
    return Consumer(conf)


class Group:
    """The test's consumers, polled in turn from this thread; each record is committed after it
    is consumed (a commit refused during a rebalance is retried by consuming the record again)."""

    def __init__(self) -> None:
        self.consumers: dict[str, Consumer] = {}
        self.consumed: set[tuple[int, int]] = set()

    def add(self, name: str, consumer: Consumer) -> None:
        consumer.subscribe([TOPIC])
        self.consumers[name] = consumer

    def close(self, name: str) -> None:
        self.consumers.pop(name).close()

    def poll_once(self) -> None:
        for c in self.consumers.values():
            m = c.poll(0.05)
            if m is None or m.error() is not None:
                continue
            self.consumed.add((m.partition(), m.offset()))
            try:
                c.commit(message=m, asynchronous=False)
            except KafkaException:
                pass

    def owned(self) -> dict[str, list[int]]:
        return {n: sorted(tp.partition for tp in c.assignment()) for n, c in self.consumers.items()}

    def settle(self, total_records: int, timeout: float = 60.0) -> dict[str, list[int]]:
        """Poll until every partition is owned by exactly one member, every member owns some,
        and ``total_records`` distinct records were consumed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.poll_once()
            owned = self.owned()
            flat = [p for ps in owned.values() for p in ps]
            if (
                sorted(flat) == list(range(PARTITIONS))
                and all(owned.values())
                and len(self.consumed) >= total_records
            ):
                return owned
        raise AssertionError(f"group did not settle: owned {self.owned()}, {len(self.consumed)}")

    def close_all(self) -> None:
        for name in list(self.consumers):
            self.close(name)


def group_type(admin: AdminClient) -> ConsumerGroupType | None:
    for t in (ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER):
        if [g.group_id for g in admin.list_consumer_groups(types={t}).result(10).valid] == ["cg"]:
            return t
    return None


def wait_for(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_rolling_upgrade_to_the_consumer_protocol_and_back(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, TOPIC, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": bs})
    group = Group()
    produced = 0
    try:
        # 1. two members of the classic protocol
        produce(bs, TOPIC, 60, PARTITIONS)
        produced += 60
        group.add("classic-a", new_consumer(bs, "classic-a"))
        group.add("classic-b", new_consumer(bs, "classic-b"))
        assert sorted(map(len, group.settle(produced).values())) == [3, 3]
        assert group_type(admin) == ConsumerGroupType.CLASSIC

        # 2. classic-b is replaced by a member of the consumer protocol: the group converts
        group.close("classic-b")
        produce(bs, TOPIC, 60, PARTITIONS)
        produced += 60
        group.add("modern", new_consumer(bs, "modern", **{"group.protocol": "consumer"}))
        owned = group.settle(produced)
        assert sorted(map(len, owned.values())) == [3, 3]
        assert group_type(admin) == ConsumerGroupType.CONSUMER
        desc = admin.describe_consumer_groups(["cg"])["cg"].result(10)
        assert desc.type == ConsumerGroupType.CONSUMER
        assert sorted(m.client_id for m in desc.members) == ["classic-a", "modern"]
        by_client = {
            m.client_id: sorted(tp.partition for tp in m.assignment.topic_partitions)
            for m in desc.members
        }
        assert by_client == {"classic-a": owned["classic-a"], "modern": owned["modern"]}
        # records keep flowing to both members, also after a broker restart (the converted group
        # is reloaded from its consumer-group records, classic member included)
        broker.restart()
        # librdkafka 2.16's admin client may keep a decommissioned broker handle after the
        # restart ("Handle is terminating", its group requests never sent): use a new one
        admin = AdminClient({"bootstrap.servers": bs})
        produce(bs, TOPIC, 60, PARTITIONS)
        produced += 60
        assert group.settle(produced) == owned
        assert group_type(admin) == ConsumerGroupType.CONSUMER

        # 3. the consumer-protocol member leaves: the group is classic again
        group.close("modern")
        produce(bs, TOPIC, 60, PARTITIONS)
        produced += 60
        assert group.settle(produced) == {"classic-a": list(range(PARTITIONS))}
        assert group_type(admin) == ConsumerGroupType.CLASSIC
        wait_for(
            lambda: (
                admin.describe_consumer_groups(["cg"])["cg"].result(10).state
                == ConsumerGroupState.STABLE
            ),
            "a Stable classic group",
        )

        # no record was lost, and every partition's committed offset is its end
        per_partition = produced // PARTITIONS
        assert group.consumed == {(p, o) for p in range(PARTITIONS) for o in range(per_partition)}
        committed = group.consumers["classic-a"].committed(
            [TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=20
        )
        assert [tp.offset for tp in committed] == [per_partition] * PARTITIONS
    finally:
        group.close_all()


def test_kafka_python_classic_members_in_an_upgraded_group(broker_factory):
    """kafka-python (classic only, subscriptions without owned partitions) as the classic side:
    both of its members are in the group when it converts, one leaves with LeaveGroup while the
    group is a consumer group, and the other one is alone again once the group is classic."""
    from .test_groups_kafka_python import PollingConsumer

    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, TOPIC, PARTITIONS)
    produce(bs, TOPIC, 60, PARTITIONS)
    classic = [PollingConsumer(bs, "cg", TOPIC) for _ in range(2)]
    modern = new_consumer(bs, "modern", **{"group.protocol": "consumer"})
    modern_records: set[tuple[int, int]] = set()
    admin = AdminClient({"bootstrap.servers": bs})

    def partitions(c):
        if c is modern:
            return [tp.partition for tp in modern.assignment()]
        return [tp.partition for tp in c.assigned]

    def settled(members):
        assert all(c.error is None for c in classic), [c.error for c in classic]
        if modern in members:
            m = modern.poll(0.05)
            if m is not None and m.error() is None:
                modern_records.add((m.partition(), m.offset()))
        parts = [p for c in members for p in partitions(c)]
        return sorted(parts) == list(range(PARTITIONS)) and all(map(partitions, members))

    try:
        for c in classic:
            c.start()
        wait_for(lambda: settled(classic), "two classic members")
        modern.subscribe([TOPIC])
        wait_for(lambda: settled([*classic, modern]), "the upgraded group", timeout=60)
        assert group_type(admin) == ConsumerGroupType.CONSUMER
        leaver = classic.pop()
        leaver.stop()
        wait_for(lambda: settled([*classic, modern]), "the classic member's leave", timeout=60)
        produce(bs, TOPIC, 60, PARTITIONS)
        modern.close()
        wait_for(lambda: settled(classic), "the downgrade", timeout=60)
        assert group_type(admin) == ConsumerGroupType.CLASSIC
        consumed = modern_records | {
            (r.partition, r.offset) for c in [*classic, leaver] for r in c.records
        }
        wait_for(
            lambda: len(consumed | {(r.partition, r.offset) for r in classic[0].records}) == 120,
            "every record",
        )
        assert all(c.error is None for c in [*classic, leaver])
    finally:
        for c in classic:
            c.stop()
        try:
            modern.close()
        except RuntimeError:  # already closed
            pass
