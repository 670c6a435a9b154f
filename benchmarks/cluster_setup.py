"""The cluster benchmark's cluster (cluster.py, and run.py's cluster section): ZooKeeper and
three kafkapy.testing.cluster.Cluster brokers with the benchmark's settings, topics created
once their ISR is full, and the wait until followers caught up."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kafkapy.testing.cluster import Cluster
from kafkapy.testing.cluster import wait_for as testing_wait_for
from kafkapy.testing.zookeeper import ZooKeeperServer

MiB = 1024 * 1024
MB = 1e6
SIZE = 1024
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
RESULTS = Path(__file__).resolve().parent / "results"
CHROOT = "/kafkapy"


def progress(msg: str) -> None:
    print(f"[cluster {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def wait_for(cond, timeout: float = 60.0, what: str = "condition"):
    """kafkapy.testing.cluster's wait, at the benchmark's pace (60 s, every 50 ms)."""
    return testing_wait_for(cond, timeout, what, interval=0.05)


def bench_overrides(session_ms: int) -> dict[str, str]:
    """What the benchmark's brokers set beyond kafkapy.testing.cluster's test settings: the
    session timeout, RF=3 topics with min.insync.replicas=2 by default, 2 MiB messages."""
    return {
        "zookeeper.session.timeout.ms": str(session_ms),
        "default.replication.factor": "3",
        "min.insync.replicas": "2",
        "message.max.bytes": str(2 * MiB),
    }


def start_cluster(base: Path, session_ms: int, pin: bool) -> tuple[ZooKeeperServer, Cluster]:
    """ZooKeeper and three brokers (kafkapy.testing.cluster.Cluster), once a controller is up."""
    progress("starting ZooKeeper")
    zk = ZooKeeperServer(base / "zookeeper").start()
    c = Cluster(base, zk.connect_string, extra_overrides=bench_overrides(session_ms),
                cpu=BROKER_CPU if pin else None)
    try:
        c.start()
        wait_for(lambda: c.zk.exists(f"{CHROOT}/controller"), what="a controller")
    except BaseException:
        stop_cluster(zk, c)
        raise
    progress(f"3 brokers up: {c.bootstrap}")
    return zk, c


def stop_cluster(zk: ZooKeeperServer, c: Cluster) -> None:
    try:
        c.stop()
    finally:
        zk.stop()


def create_topic(c: Cluster, name: str, rf: int) -> None:
    """One partition, min.insync.replicas 2 (1 for RF=1); returns once its ISR is full."""
    c.create_topic(name, partitions=1, rf=rf, **{"min.insync.replicas": str(min(2, rf))})


def delete_topic(c: Cluster, name: str) -> None:
    try:
        c.delete_topic(name)
    except Exception as e:  # keep going: the topic only costs disk
        progress(f"delete {name}: {e}")


def wait_replicated(c: Cluster, topic: str, rf: int, timeout: float = 120.0) -> float:
    """perf_counter() once ``rf`` brokers hold as many bytes of ``topic``-0's log as the most
    any broker holds and they stopped growing (the followers caught up)."""
    def sizes() -> list[int]:
        return sorted((sum(f.stat().st_size for f in b.data_dir.rglob(f"{topic}-0/*.log"))
                       for b in c.brokers.values()), reverse=True)

    deadline = time.monotonic() + timeout
    last, caught_up = None, None
    while time.monotonic() < deadline:
        now = sizes()
        if now[0] > 0 and len(set(now[:rf])) == 1:
            if now == last and caught_up is not None:
                return caught_up  # and still so one poll later
            if now != last:
                caught_up = time.perf_counter()
        else:
            caught_up = None
        last = now
        time.sleep(0.01)
    raise RuntimeError(f"{topic}: replicas not caught up after {timeout:g} s: {sizes()}")
