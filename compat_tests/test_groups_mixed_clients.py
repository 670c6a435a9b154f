"""Three confluent-kafka (librdkafka) and two kafka-python consumers in one classic group over a
10-partition topic while a producer keeps producing; members join and leave along the way.

Every consumer processes a batch, then commits it synchronously (at least once). One shared,
ordered event log records, per consumer: partitions assigned, records consumed, commits that
succeeded. At the end:

- every record the producer had acknowledged was consumed at least once (no loss);
- every duplicate is accounted for: when consumer X consumes (partition p, offset o) that was
  already consumed, o is at or after the last successful commit on p made before X was given p
  (the previous owner's last commit), so duplicates only come from the window between a member's
  last commit and its losing the partition;
- after every rebalance, once all members settled, each partition had exactly one owner.
"""

from __future__ import annotations

import itertools
import threading
import time

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka import TopicPartition as CTopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from .test_groups_confluent import create_topic

TOPIC = "mixed"
PARTITIONS = 10
FAST = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "10",
}


class EventLog:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seq = itertools.count()
        self.events: list[tuple[int, str, str, int, int]] = []  # seq, kind, who, partition, offset

    def add(self, kind: str, who: str, partition: int, offset: int = -1) -> None:
        with self.lock:
            self.events.append((next(self.seq), kind, who, partition, offset))


class Member(threading.Thread):
    def __init__(self, name: str, log: EventLog) -> None:
        super().__init__(daemon=True, name=name)
        self.log = log
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.owned: set[int] = set()

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)
        assert not self.is_alive(), f"{self.name} did not stop"


class ConfluentMember(Member):
    def __init__(self, name, log, bootstrap, group):
        super().__init__(name, log)
        self.c = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 300,
                "partition.assignment.strategy": "range",
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )

    def _assigned(self, consumer, partitions):
        self.owned = {tp.partition for tp in partitions}
        for tp in partitions:
            self.log.add("assign", self.name, tp.partition)

    def _revoked(self, consumer, partitions):
        self.owned = set()

    def run(self):
        try:
            self.c.subscribe([TOPIC], on_assign=self._assigned, on_revoke=self._revoked)
            while not self.stopping.is_set():
                msgs = self.c.consume(num_messages=200, timeout=0.1)
                done: dict[int, int] = {}
                for m in msgs:
                    if m.error() is None:
                        self.log.add("consume", self.name, m.partition(), m.offset())
                        done[m.partition()] = m.offset() + 1
                if done:
                    offsets = [CTopicPartition(TOPIC, p, o) for p, o in done.items()]
                    try:
                        result = self.c.commit(offsets=offsets, asynchronous=False)
                    except KafkaException:
                        continue  # rebalance in progress / generation moved on: not committed
                    for tp in result:
                        if tp.error is None:
                            self.log.add("commit", self.name, tp.partition, tp.offset)
        except BaseException as e:
            self.error = e
        finally:
            self.c.close()


class KafkaPythonMember(Member):
    def __init__(self, name, log, bootstrap, group):
        super().__init__(name, log)
        self.c = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=300,
            max_poll_interval_ms=20000,
            request_timeout_ms=15000,
            partition_assignment_strategy=[RangePartitionAssignor],
        )
        member = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked):
                member.owned = set()

            def on_partitions_assigned(self, assigned):
                member.owned = {tp.partition for tp in assigned}
                for tp in assigned:
                    member.log.add("assign", member.name, tp.partition)

        self.listener = Listener()

    def run(self):
        try:
            self.c.subscribe([TOPIC], listener=self.listener)
            # known partitions before the first join: a kafka-python 3.0.12 leader that assigns
            # before it has the topic's metadata can lose its rejoin (test_groups_kafka_python)
            self.c.partitions_for_topic(TOPIC)
            while not self.stopping.is_set():
                batches = self.c.poll(timeout_ms=100, max_records=200)
                done: dict[int, int] = {}
                for tp, recs in batches.items():
                    for r in recs:
                        self.log.add("consume", self.name, tp.partition, r.offset)
                        done[tp.partition] = r.offset + 1
                if done:
                    offsets = {
                        KTopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1)
                        for p, o in done.items()
                    }
                    try:
                        self.c.commit(offsets)
                    except KafkaError:
                        continue
                    for p, o in done.items():
                        self.log.add("commit", self.name, p, o)
        except BaseException as e:
            self.error = e
        finally:
            self.c.close()


class ProducerThread(threading.Thread):
    def __init__(self, bootstrap):
        super().__init__(daemon=True)
        self.p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.acked: set[tuple[int, int]] = set()
        self.stopping = threading.Event()

    def _ack(self, err, msg):
        if err is None:
            self.acked.add((msg.partition(), msg.offset()))

    def run(self):
        i = 0
        while not self.stopping.is_set():
            self.p.produce(
                TOPIC, value=str(i).encode(), partition=i % PARTITIONS, on_delivery=self._ack
            )
            i += 1
            if i % 50 == 0:
                self.p.poll(0)
                time.sleep(0.02)
        self.p.flush(30)


def settle(members, timeout=40.0):
    """Wait until the live members own every partition exactly once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owned = [p for m in members for p in m.owned]
        if sorted(owned) == list(range(PARTITIONS)) and all(m.owned for m in members):
            return
        time.sleep(0.1)
    raise AssertionError(f"no settled assignment: {[(m.name, sorted(m.owned)) for m in members]}")


def check_accounting(log: EventLog, acked: set[tuple[int, int]]) -> int:
    consumed: set[tuple[int, int]] = set()
    last_commit: dict[int, int] = {}  # partition -> last successful commit so far
    start_of: dict[tuple[str, int], int] = {}  # (who, partition) -> commit when it was assigned
    duplicates = 0
    for _, kind, who, p, o in sorted(log.events):
        if kind == "commit":
            last_commit[p] = max(last_commit.get(p, 0), o)
        elif kind == "assign":
            start_of[(who, p)] = last_commit.get(p, 0)
        elif kind == "consume":
            if (p, o) in consumed:
                duplicates += 1
                floor = start_of.get((who, p), 0)
                assert o >= floor, (
                    f"{who} consumed {p}:{o} again, before the last commit {floor} made before "
                    "it was given the partition"
                )
            consumed.add((p, o))
    missing = acked - consumed
    assert not missing, (
        f"{len(missing)} acknowledged records never consumed: {sorted(missing)[:10]}"
    )
    return duplicates


def test_three_librdkafka_two_kafka_python_consumers_with_a_producer(broker_factory):
    broker = broker_factory(FAST)
    bs = broker.bootstrap
    create_topic(bs, TOPIC, PARTITIONS)
    log = EventLog()
    producer = ProducerThread(bs)
    members: list[Member] = []
    everyone: list[Member] = []

    def start(member: Member) -> None:
        members.append(member)
        everyone.append(member)
        member.start()

    def leave(name: str) -> None:
        m = next(m for m in members if m.name == name)
        members.remove(m)
        m.stop()

    try:
        producer.start()
        start(ConfluentMember("c1", log, bs, "mixed"))
        start(KafkaPythonMember("k1", log, bs, "mixed"))
        settle(members)
        for m in (
            ConfluentMember("c2", log, bs, "mixed"),
            ConfluentMember("c3", log, bs, "mixed"),
            KafkaPythonMember("k2", log, bs, "mixed"),
        ):
            start(m)
        settle(members)
        assert len(members) == 5
        time.sleep(2)
        leave("c1")
        settle(members)
        leave("k1")
        settle(members)
        start(ConfluentMember("c1b", log, bs, "mixed"))
        settle(members)
        time.sleep(2)
        producer.stopping.set()
        producer.join(40)
        assert producer.acked, "the producer got no acknowledgement"
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            consumed = {(p, o) for _, k, _, p, o in list(log.events) if k == "consume"}
            if producer.acked <= consumed:
                break
            time.sleep(0.2)
        for m in list(members):
            leave(m.name)
        for m in everyone:
            assert m.error is None, f"{m.name}: {m.error!r}"
        duplicates = check_accounting(log, producer.acked)
        total = len(producer.acked)
        assert duplicates < total  # sanity: duplicates are the exception
        print(f"records={total} duplicates={duplicates}")
    finally:
        producer.stopping.set()
        for m in members:
            m.stopping.set()
        for m in members:
            m.join(30)
