"""Crash-loop soak, the workload and the checks: idempotent producers and a committing consumer
group, then proof that nothing acknowledged was lost, duplicated or moved and that the group's
committed offsets stayed intact. The crash loops themselves are in kafkapy/testing/crash_loop.py
(benchmarks/soak.py, compat_tests/test_crash_soak.py).

Workload (`Workload`): producer threads (confluent-kafka, acks=all, enable.idempotence, a long
message.timeout.ms so records ride out an outage) write unique values ``p<N>-<seq>`` at a steady
rate; every delivery report is kept (value -> partition, offset). Consumer threads in one group
(manual commits, synchronous, every ``commit_every`` records) keep, per partition, the highest
offset a commit was acknowledged for.

Checks: the group's committed offsets, fetched by a separate client, must not be below the
highest acknowledged commit (never backwards) and must lie within the partition's log (they
point at records that exist): `check_committed`. With the producers flushed, the whole topic is
read back: an acknowledged value missing is lost, one found at another offset than acknowledged
is misplaced, a value stored twice is duplicated: `verify_records`.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as TP

TOPIC = "soak"
GROUP = "soak-group"
PARTITIONS = 3


@dataclass
class SoakResult:
    scenario: str
    cycles: int = 0
    acked: int = 0
    not_acked: int = 0  # deliveries that failed (the producer gave up): not counted as lost
    lost: int = 0
    misplaced: int = 0
    duplicated: int = 0
    commits: int = 0  # commits the group got acknowledged
    offsets_checked: int = 0
    offset_violations: list[str] = field(default_factory=list)
    client_errors: list[str] = field(default_factory=list)  # fatal producer/consumer errors
    recovery_s: list[float] = field(default_factory=list)
    peak_rss_kib: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.misplaced
            or self.duplicated
            or self.offset_violations
            or self.client_errors
        )

    def recovery(self) -> tuple[float, float]:
        """(p50, max) recovery time in seconds."""
        if not self.recovery_s:
            return 0.0, 0.0
        return statistics.median(self.recovery_s), max(self.recovery_s)


class Workload:
    """Idempotent acks=all producers and a committing consumer group, each in a thread."""

    def __init__(
        self,
        bootstrap: str,
        *,
        producers: int = 2,
        consumers: int = 2,
        rate: int = 300,
        commit_every: int = 50,
    ) -> None:
        self.bootstrap = bootstrap
        self.rate = rate  # records per second per producer
        self.commit_every = commit_every
        self.lock = threading.Lock()
        self.acked: dict[bytes, tuple[int, int]] = {}
        self.not_acked: list[tuple[bytes, str]] = []
        self.committed: dict[int, int] = {}  # partition -> highest acknowledged commit
        self.commits = 0
        self.errors: list[str] = []
        self._stop_producing = threading.Event()
        self._stop_consuming = threading.Event()
        self._producers = [
            threading.Thread(target=self._produce, args=(i,), daemon=True) for i in range(producers)
        ]
        self._consumers = [
            threading.Thread(target=self._consume, args=(i,), daemon=True) for i in range(consumers)
        ]
        self._flushed: list[int] = []

    def start(self) -> Workload:
        for t in self._producers + self._consumers:
            t.start()
        return self

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def stop(self, flush_timeout: float = 120.0) -> None:
        """Stop producing (flushing what is in flight), then let the consumers catch up to the
        end and commit, and stop them."""
        self._flush_timeout = flush_timeout
        self._stop_producing.set()
        for t in self._producers:
            t.join(flush_timeout + 30)
        self._stop_consuming.set()
        for t in self._consumers:
            t.join(60)

    # -- threads ----------------------------------------------------------------------------
    def _error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)

    def _produce(self, n: int) -> None:
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 180000,
                "reconnect.backoff.ms": 50,
                "reconnect.backoff.max.ms": 500,
                "error_cb": lambda err: err.fatal() and self._error(f"producer {n}: {err}"),
            }
        )

        def on_delivery(err, msg) -> None:
            with self.lock:
                if err is None:
                    self.acked[msg.value()] = (msg.partition(), msg.offset())
                else:
                    self.not_acked.append((msg.value(), str(err)))

        seq, started = 0, time.monotonic()
        while not self._stop_producing.is_set():
            due = int((time.monotonic() - started) * self.rate)
            while seq < due:
                value = f"p{n}-{seq:09d}".encode()
                try:
                    producer.produce(TOPIC, key=value, value=value, on_delivery=on_delivery)
                    seq += 1
                except BufferError:
                    break
            producer.poll(0.02)
        left = producer.flush(getattr(self, "_flush_timeout", 120.0))
        if left:
            self._error(f"producer {n}: {left} records still in flight after the flush timeout")

    def _consume(self, n: int) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": GROUP,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000,
                "reconnect.backoff.max.ms": 500,
                "enable.partition.eof": True,
            }
        )
        consumer.subscribe([TOPIC])
        since_commit, at_eof, give_up = 0, set(), None
        try:
            while True:
                msg = consumer.poll(0.2)
                if msg is not None and msg.error() is not None:
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        at_eof.add(msg.partition())
                    elif msg.error().fatal():
                        self._error(f"consumer {n}: {msg.error()}")
                        return
                elif msg is not None:
                    since_commit += 1
                    at_eof.discard(msg.partition())
                # once stopped: consume to the end of the assigned partitions, commit, leave
                done = False
                if self._stop_consuming.is_set():
                    give_up = give_up or time.monotonic() + 60
                    assigned = {tp.partition for tp in consumer.assignment()}
                    done = bool(assigned) and assigned <= at_eof
                    if time.monotonic() > give_up:
                        self._error(f"consumer {n}: did not reach the end within 60 s")
                        done = True
                if since_commit >= self.commit_every or (done and since_commit):
                    self._commit(consumer)
                    since_commit = 0
                if done:
                    return
        finally:
            consumer.close()

    def _commit(self, consumer: Consumer) -> None:
        try:
            parts = consumer.commit(asynchronous=False) or []
        except KafkaException:
            return  # not acknowledged (rebalance, coordinator moving): nothing to hold it to
        with self.lock:
            self.commits += 1
            for tp in parts:
                if tp.error is None and tp.offset >= 0:
                    self.committed[tp.partition] = max(
                        self.committed.get(tp.partition, -1), tp.offset
                    )


# -- checks -------------------------------------------------------------------------------------


def committed_problems(
    committed: dict[int, int], floor: dict[int, int], watermarks: dict[int, tuple[int, int]]
) -> list[str]:
    """What is wrong with the group's ``committed`` offsets (partition -> offset, negative for
    none): below the highest acknowledged commit ``floor`` (gone backwards), or outside the
    partition's [log start, high watermark] (``watermarks``: pointing at no record)."""
    problems = []
    for p in sorted(set(committed) | set(floor)):
        c = committed.get(p, -1001)
        if p in floor and floor[p] > c:
            problems.append(f"partition {p}: committed offset {c} went back below {floor[p]}")
        elif c >= 0 and p in watermarks and not watermarks[p][0] <= c <= watermarks[p][1]:
            low, high = watermarks[p]
            problems.append(f"partition {p}: committed offset {c} outside [{low}, {high}]")
    return problems


def check_committed(bootstrap: str, floor: dict[int, int], settle_s: float = 20.0) -> list[str]:
    """``committed_problems`` of the group as a separate client reads it now (``floor`` taken
    before the call). An offset past the high watermark gets ``settle_s`` to become valid (a new
    leader's high watermark catches up); an offset gone backwards is reported at once."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False}
    )
    try:
        deadline = time.monotonic() + settle_s
        tps = [TP(TOPIC, p) for p in range(PARTITIONS)]
        while True:
            committed = {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=30)}
            marks = {tp.partition: consumer.get_watermark_offsets(tp, timeout=30) for tp in tps}
            problems = committed_problems(committed, floor, marks)
            backwards = [m for m in problems if "went back" in m]
            if not problems or backwards or time.monotonic() > deadline:
                return problems
            time.sleep(0.5)
    finally:
        consumer.close()


def read_topic(bootstrap: str) -> dict[int, list[tuple[int, bytes]]]:
    """The soak topic read to its high watermarks: partition -> [(offset, value)]."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "soak-verify", "enable.auto.commit": False}
    )
    try:
        tps = [TP(TOPIC, p) for p in range(PARTITIONS)]
        highs = {tp.partition: consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in tps}
        consumer.assign([TP(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(PARTITIONS)}
        pos = {p: 0 for p in range(PARTITIONS)}
        deadline = time.monotonic() + 120
        while any(pos[p] < highs[p] for p in pos):
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not read the soak topic to {highs}: at {pos}")
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is None:
                    out[msg.partition()].append((msg.offset(), msg.value()))
                    pos[msg.partition()] = msg.offset() + 1
        return out
    finally:
        consumer.close()


def tally(
    result: SoakResult,
    acked: dict[bytes, tuple[int, int]],
    records: dict[int, list[tuple[int, bytes]]],
) -> None:
    """Count lost, misplaced and duplicated records: ``acked`` (value -> partition, offset as
    acknowledged) against the ``records`` read back."""
    at: dict[tuple[int, int], bytes] = {}
    seen: dict[bytes, int] = {}
    for p, recs in records.items():
        for offset, value in recs:
            at[(p, offset)] = value
            seen[value] = seen.get(value, 0) + 1
    result.acked = len(acked)
    for value, where in acked.items():
        if value not in seen:
            result.lost += 1
            if len(result.examples) < 10:
                result.examples.append(f"lost {value!r} acknowledged at {where}")
        elif at.get(where) != value:
            result.misplaced += 1
            if len(result.examples) < 10:
                result.examples.append(
                    f"{value!r} acknowledged at {where}, there: {at.get(where)!r}"
                )
    dups = {v: n for v, n in seen.items() if n > 1}
    result.duplicated = sum(n - 1 for n in dups.values())
    result.examples += [f"{v!r} stored {n} times" for v, n in list(dups.items())[:5]]


def verify_records(result: SoakResult, work: Workload, bootstrap: str) -> None:
    records = read_topic(bootstrap)
    with work.lock:
        acked = dict(work.acked)
        result.not_acked = len(work.not_acked)
        result.commits = work.commits
        result.client_errors += work.errors
    tally(result, acked, records)
