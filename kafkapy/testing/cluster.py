"""A kafkapy cluster on a real ZooKeeper, for tests and benchmarks (the pytest plugin's
``kafka_cluster`` and the compat tests' ``cluster``).

`Cluster` starts N (3 by default) `BrokerProcess` brokers, ids 0..N-1, against a ZooKeeper connect
string (chroot /kafkapy), with short session and replica-lag timeouts so failures are noticed
quickly, and reads the cluster's state from ZooKeeper directly (partition state znodes,
/controller, registrations). Faults: ``kill``/``restart``/``pause``/``resume`` a broker,
``drop_connections``, ``fail_log_dir`` (kafkapy/testing/handle.py), and ``move_leadership`` of a
partition to another replica (a reassignment that puts it first, then a preferred election, as
Kafka's tools do).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from kafkapy.testing import BrokerProcess, free_port

SESSION_MS = 6000
BROKERS = (0, 1, 2)


def broker_overrides(connect: str, broker_id: int) -> dict[str, str]:
    """Config of one cluster broker: fast failure detection, small __consumer_offsets and
    __transaction_state."""
    return {
        "zookeeper.connect": connect,
        "broker.id": str(broker_id),
        "zookeeper.session.timeout.ms": str(SESSION_MS),
        "replica.lag.time.max.ms": "3000",
        "replica.fetch.wait.max.ms": "200",
        "offsets.topic.num.partitions": "3",
        "offsets.topic.replication.factor": "3",
        "transaction.state.log.num.partitions": "3",
        "group.initial.rebalance.delay.ms": "0",
        "replica.high.watermark.checkpoint.interval.ms": "500",
    }


def wait_for(
    cond: Callable[[], Any], timeout: float = 30.0, what: str = "condition", interval: float = 0.1
) -> Any:
    """Poll `cond` every `interval` seconds (exceptions count as not yet) until it is truthy;
    return its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got = cond()
        except Exception:
            got = None
        if got:
            return got
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


class Cluster:
    wait_for = staticmethod(wait_for)

    def __init__(
        self,
        base: Path,
        zk_connect: str,
        *,
        size: int = len(BROKERS),
        extra_overrides: dict[str, str] | None = None,
        storage: str = "disk",
        overrides: Callable[[int, int], dict[str, str]] | None = None,
        client_config: dict[str, Any] | None = None,
        cpu: int | None = None,
    ) -> None:
        """``size`` brokers, ids 0..size-1; ``extra_overrides``: settings for every broker;
        ``overrides(broker_id, port)``: more settings per broker (listeners on ``port``,
        security); ``client_config``: what the test's admin clients need to connect (security);
        ``cpu``: the core every broker is pinned to (benchmarks)."""
        self.connect = f"{zk_connect}/kafkapy"
        self.ids = tuple(range(size))
        self.brokers = {}
        for i in self.ids:
            port = free_port()
            extra = overrides(i, port) if overrides is not None else {}
            self.brokers[i] = BrokerProcess(
                base / f"broker{i}",
                {**broker_overrides(self.connect, i), **(extra_overrides or {}), **extra},
                port=port,
                storage=storage,
                cpu=cpu,
            )
        self.client_config = dict(client_config or {})
        self.zk = KazooClient(hosts=zk_connect, timeout=10.0)
        self.topics: dict[str, int] = {}  # topics created through create_topic -> partitions

    def start(self) -> Cluster:
        self.zk.start(timeout=20)
        for b in self.brokers.values():
            b.start()
        wait_for(
            lambda: self.registered() == set(self.ids), what=f"{len(self.ids)} brokers registered"
        )
        return self

    def stop(self) -> None:
        for b in self.brokers.values():
            if b.proc is not None and b.proc.poll() is None:
                os.kill(b.proc.pid, signal.SIGCONT)  # in case a test left it stopped
            b.close()
        self.zk.stop()
        self.zk.close()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.proc is not None)

    def admin(self) -> AdminClient:
        return AdminClient({**self.client_config, "bootstrap.servers": self.bootstrap})

    def registered(self) -> set[int]:
        return {int(i) for i in self.zk.get_children("/kafkapy/brokers/ids")}

    def state(self, topic: str, p: int) -> dict:
        return json.loads(self.zk.get(f"/kafkapy/brokers/topics/{topic}/partitions/{p}/state")[0])

    def controller(self) -> tuple[int | None, int]:
        """(controller broker id or None, controller epoch) from ZooKeeper."""
        try:
            cid = json.loads(self.zk.get("/kafkapy/controller")[0])["brokerid"]
        except Exception:
            cid = None
        return cid, int(self.zk.get("/kafkapy/controller_epoch")[0])

    def create_topic(self, name: str, partitions: int = 3, rf: int = 3, **configs: str) -> None:
        admin = self.admin()  # keep the handle alive until the futures resolve
        fs = admin.create_topics(
            [NewTopic(name, partitions, rf, config={"min.insync.replicas": "2", **configs})]
        )
        for f in fs.values():
            f.result(15)
        self.topics[name] = partitions
        wait_for(
            lambda: all(len(self.state(name, p)["isr"]) == rf for p in range(partitions)),
            what=f"full ISR for {name}",
        )

    def delete_topic(self, name: str, timeout: float = 30.0) -> None:
        admin = self.admin()  # keep the handle alive until the futures resolve
        for f in admin.delete_topics([name]).values():
            f.result(timeout)
        self.topics.pop(name, None)

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the running brokers used so far."""
        return sum(b.usage().cpu_seconds() for b in self.brokers.values() if b.running)

    def log_bytes(self, broker_id: int, topic: str, p: int) -> bytes:
        d = self.brokers[broker_id].log_dirs[0] / f"{topic}-{p}"
        return b"".join(f.read_bytes() for f in sorted(d.glob("*.log")))

    def full_isr(self, topic: str, partitions: int) -> bool:
        return all(
            sorted(self.state(topic, p)["isr"]) == list(self.ids) for p in range(partitions)
        )

    def converged(self, topic: str, partitions: int) -> bool:
        """Full ISR and byte-identical logs on every broker."""
        if not self.full_isr(topic, partitions):
            return False
        return all(
            len({self.log_bytes(b, topic, p) for b in self.ids}) == 1 for p in range(partitions)
        )

    def whole(self) -> bool:
        """Every broker registered and every created topic fully replicated."""
        return self.registered() == set(self.ids) and all(
            self.full_isr(t, n) for t, n in self.topics.items()
        )

    # --- faults -----------------------------------------------------------------------------------

    def leader(self, topic: str, p: int) -> int:
        return int(self.state(topic, p)["leader"])

    def kill(self, broker_id: int) -> None:
        """kill -9 one broker (its ZooKeeper session lives until it expires)."""
        self.brokers[broker_id].kill()

    def restart(self, broker_id: int) -> None:
        """Start a stopped or killed broker again (or stop and start a running one)."""
        self.brokers[broker_id].restart()

    def pause(self, broker_id: int) -> None:
        """SIGSTOP one broker: after zookeeper.session.timeout.ms its session expires and the
        controller moves its leaderships; ``resume`` lets it rejoin."""
        self.brokers[broker_id].pause()

    def resume(self, broker_id: int) -> None:
        self.brokers[broker_id].resume()

    def drop_connections(self, broker_id: int | None = None) -> int:
        """Close every client connection of one broker (all brokers by default)."""
        ids = self.ids if broker_id is None else (broker_id,)
        return sum(self.brokers[i].drop_connections() for i in ids if self.brokers[i].running)

    def fail_log_dir(self, topic: str, p: int, broker_id: int | None = None) -> Path:
        """Make the log dir of ``topic``-``p`` fail on one broker (its leader by default)."""
        target = self.leader(topic, p) if broker_id is None else broker_id
        return self.brokers[target].fail_log_dir(topic, p)

    def move_leadership(self, topic: str, p: int, to: int, timeout: float = 30.0) -> None:
        """Make broker ``to`` (a replica in the ISR) the leader of ``topic``-``p``: reassign the
        same replicas with ``to`` first, elect the preferred leader, wait until ZooKeeper says
        so."""
        from kafkapy.cli.reassign_partitions import Cluster as Tool

        replicas = list(self.state(topic, p)["isr"])
        if to not in replicas:
            raise ValueError(f"broker {to} is not in the ISR {replicas} of {topic}-{p}")
        if self.leader(topic, p) == to:
            return
        tool = Tool(self.bootstrap)
        current = tool.current([(topic, p)])[(topic, p)]
        order = [to, *[r for r in current if r != to]]
        errors = {tp: e for tp, e in tool.alter({(topic, p): order}).items() if e[0]}
        if errors:
            raise RuntimeError(f"reassigning {topic}-{p} to {order}: {errors}")
        wait_for(
            lambda: self._preferred_elected(topic, p, to),
            timeout,
            what=f"broker {to} leading {topic}-{p}",
        )

    def _preferred_elected(self, topic: str, p: int, to: int) -> bool:
        if self.leader(topic, p) == to:
            return True
        admin = self.admin()
        from confluent_kafka import ElectionType, TopicPartition

        admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, p)]).result(10)
        return self.leader(topic, p) == to
