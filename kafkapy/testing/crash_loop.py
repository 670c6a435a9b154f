"""Crash loops for the soak (kafkapy/testing/soak.py has the workload and the checks): kill -9
and restart brokers under the workload, check the group's committed offsets after every
restart, and read everything back at the end.

Scenarios: `soak_single` (one broker, embedded metadata, the README's first command) and
`soak_cluster` (three brokers on a real ZooKeeper, kafkapy.testing.cluster, replication factor
3, min.insync.replicas=2; the brokers killed in turn). Recovery time per restart is measured from
the kill to: (single) a new acks=all record acknowledged on every partition of a probe topic;
(cluster) every broker registered again and the restarted one back in the ISR of every
partition of the soak topic. Peak RSS is the largest VmHWM of the broker processes.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.testing import BrokerProcess
from kafkapy.testing.soak import (
    PARTITIONS,
    TOPIC,
    SoakResult,
    Workload,
    check_committed,
    verify_records,
)

PROBE_TOPIC = "soak-probe"
TOPIC_CONFIGS = {"segment.bytes": str(256 * 1024)}  # frequent rolls: more states to crash in
Progress = Callable[[str], None]


class RssMonitor:
    """The largest peak RSS (VmHWM) of the given processes, sampled every half second."""

    def __init__(self, pids: Callable[[], list[int]]) -> None:
        self.pids = pids
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.peak_kib = max(self.peak_kib, int(line.split()[1]))
            except OSError:
                pass

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.sample()

    def __enter__(self) -> RssMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _crash_loop(
    result: SoakResult,
    work: Workload,
    rss: RssMonitor,
    brokers: list[BrokerProcess],
    recovered: Callable[[], None],
    *,
    cycles: int,
    load_s: float,
    seed: int,
    progress: Progress,
) -> None:
    rng = random.Random(seed)
    for cycle in range(cycles):
        victim = brokers[cycle % len(brokers)]
        before = work.acked_count()
        time.sleep(rng.uniform(0.3, 1.0) * load_s)  # kill at varied points of the load
        rss.sample()
        floor = dict(work.committed)
        victim.kill()
        killed = time.monotonic()
        victim.start(timeout=120)
        recovered()
        result.recovery_s.append(time.monotonic() - killed)
        result.cycles += 1
        problems = check_committed(work.bootstrap, floor)
        result.offsets_checked += PARTITIONS
        result.offset_violations += [f"cycle {cycle + 1}: {p}" for p in problems]
        progress(
            f"{result.scenario} cycle {cycle + 1}/{cycles}: killed {victim.bootstrap}, recovered "
            f"in {result.recovery_s[-1]:.2f} s, acked {work.acked_count():,} "
            f"(+{work.acked_count() - before:,}), committed offsets "
            f"{'intact' if not problems else 'BROKEN'}"
        )


def _finish(
    result: SoakResult, work: Workload, rss: RssMonitor, bootstrap: str, progress: Progress
):
    progress(f"{result.scenario}: stopping the load and reading everything back")
    work.stop()
    rss.sample()
    floor = dict(work.committed)
    problems = check_committed(bootstrap, floor)
    result.offsets_checked += PARTITIONS
    result.offset_violations += [f"end: {p}" for p in problems]
    verify_records(result, work, bootstrap)
    result.peak_rss_kib = rss.peak_kib


def _create(bootstrap: str, name: str, rf: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fs = admin.create_topics([NewTopic(name, PARTITIONS, rf, config=configs)])
    for f in fs.values():
        f.result(30)


def soak_single(
    base: Path, *, cycles: int, load_s: float, seed: int = 1, rate: int = 300,
    progress: Progress = print,
) -> SoakResult:  # fmt: skip
    """Kill -9 and restart one broker (embedded metadata) ``cycles`` times under the workload."""
    result = SoakResult("single broker")
    broker = BrokerProcess(
        base / "single",
        {"offsets.topic.num.partitions": "3", "group.initial.rebalance.delay.ms": "0"},
    )
    broker.start()
    try:
        _create(broker.bootstrap, TOPIC, 1, **TOPIC_CONFIGS)
        _create(broker.bootstrap, PROBE_TOPIC, 1)
        probe = Producer(
            {"bootstrap.servers": broker.bootstrap, "acks": "all", "reconnect.backoff.max.ms": 200}
        )

        def recovered() -> None:
            deadline = time.monotonic() + 120
            failed: list = []
            while time.monotonic() < deadline:
                failed.clear()
                for p in range(PARTITIONS):
                    probe.produce(PROBE_TOPIC, b"probe", partition=p,
                                  on_delivery=lambda e, m: e and failed.append(e))  # fmt: skip
                if probe.flush(10) == 0 and not failed:
                    return
            raise RuntimeError("the restarted broker did not take writes within 120 s")

        work = Workload(broker.bootstrap, rate=rate).start()
        with RssMonitor(lambda: [broker.pid] if broker.pid else []) as rss:
            _crash_loop(result, work, rss, [broker], recovered, cycles=cycles, load_s=load_s,
                        seed=seed, progress=progress)  # fmt: skip
            _finish(result, work, rss, broker.bootstrap, progress)
    finally:
        broker.stop()
    return result


def soak_cluster(
    base: Path, *, cycles: int, load_s: float, seed: int = 2, rate: int = 300,
    progress: Progress = print,
) -> SoakResult:  # fmt: skip
    """Kill -9 and restart each broker of a 3-broker RF=3 cluster in turn, ``cycles`` times."""
    from kafkapy.testing.cluster import Cluster
    from kafkapy.testing.zookeeper import ZooKeeperServer

    result = SoakResult("3-broker cluster, RF=3")
    zk = ZooKeeperServer(base / "zookeeper")
    zk.start()
    cluster = Cluster(base / "cluster", zk.connect_string)
    try:
        cluster.start()
        bootstrap = ",".join(b.bootstrap for b in cluster.brokers.values())
        cluster.create_topic(TOPIC, PARTITIONS, 3, **TOPIC_CONFIGS)

        def recovered() -> None:
            cluster.wait_for(cluster.whole, timeout=180, what="the cluster whole again")

        work = Workload(bootstrap, rate=rate).start()
        brokers = list(cluster.brokers.values())
        with RssMonitor(lambda: [b.pid for b in brokers if b.pid]) as rss:
            _crash_loop(result, work, rss, brokers, recovered, cycles=cycles, load_s=load_s,
                        seed=seed, progress=progress)  # fmt: skip
            cluster.wait_for(
                lambda: cluster.converged(TOPIC, PARTITIONS), timeout=120, what="converged logs"
            )
            _finish(result, work, rss, bootstrap, progress)
    finally:
        cluster.stop()
        zk.stop()
    return result
