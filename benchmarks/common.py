"""Helpers shared by the benchmark scripts: progress lines, core pinning, figure formatting, and
topics created as a client creates them. Brokers, clusters and their CPU and memory figures come
from kafkapy.testing (BrokerProcess, Cluster, ``usage()``).

The scripts run as `python benchmarks/<name>.py`, so this module is imported as `common`.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
import weakref
from typing import Any


def parse_sections(only: str | None, known: tuple[str, ...]) -> tuple[str, ...]:
    """The sections named by --only (comma-separated), all of ``known`` without it."""
    chosen = tuple(only.split(",")) if only else known
    unknown = set(chosen) - set(known)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; known: {', '.join(known)}")
    return chosen


def progress(msg: str, tag: str = "bench") -> None:
    """One timestamped progress line on stderr."""
    print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pin(cpu: int) -> None:
    """Pin the calling thread (pid 0 = this thread on Linux) to one core."""
    os.sched_setaffinity(0, {cpu})


def fmt(v: float) -> str:
    """A figure with as many digits as its size deserves."""
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.3f}"


def fmt_values(vals: list[float]) -> str:
    """Median with (min–max) of repeated runs; the value alone for one run; – for none."""
    if not vals:
        return "–"
    med = fmt(statistics.median(vals))
    return med if len(vals) == 1 else f"{med} ({fmt(min(vals))}–{fmt(max(vals))})"


# ---- topics, as a client creates them ------------------------------------------------------
# confluent-kafka's AdminClient (not kafkapy.testing.topics' wire connection): a benchmark that
# times CreateTopics times what a client sees. One admin per broker, released when the broker's
# block ends (release_admin), so that no admin keeps polling a stopped broker's port, which a
# later broker may get, from the client core.

_admins: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def release_admin(broker: Any) -> None:
    """Drop the broker's AdminClient (librdkafka destroys it with its last reference)."""
    _admins.pop(broker, None)


def admin_of(broker: Any) -> Any:
    """The AdminClient of a kafkapy.testing broker (made on first use, quiet)."""
    admin = _admins.get(broker)
    if admin is None:
        from confluent_kafka.admin import AdminClient

        admin = _admins[broker] = AdminClient(
            {"bootstrap.servers": broker.bootstrap, "log_level": 0}
        )
    return admin


def create_topic(broker: Any, name: str, partitions: int = 1, config: dict | None = None) -> None:
    """CreateTopics with replication factor 1, waiting for the broker's answer."""
    from confluent_kafka.admin import NewTopic

    fut = admin_of(broker).create_topics([NewTopic(name, partitions, 1, config=config or {})])
    fut[name].result(60)


def delete_topic(broker: Any, name: str) -> None:
    """DeleteTopics; a failure is ignored (the topic only costs disk)."""
    with contextlib.suppress(Exception):
        admin_of(broker).delete_topics([name])[name].result(60)


def alter_topic(broker: Any, name: str, config: dict[str, str]) -> None:
    """IncrementalAlterConfigs SET of a topic's configs."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    entries = [
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in config.items()
    ]
    res = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=entries)
    for fut in admin_of(broker).incremental_alter_configs([res]).values():
        fut.result(60)
