"""Registering the broker at /brokers/ids/N, waiting out the registration of a killed predecessor.

A broker killed with SIGKILL leaves its ephemeral registration behind until ZooKeeper expires its
session (zookeeper.session.timeout.ms after its last heartbeat). Kafka refuses to start in that
window ("broker.id N is already registered"). kafkapy waits instead: when the znode belongs to
another session, it logs that once, watches the znode, reports progress, and registers as soon as
the znode is deleted. If the other session outlives the session timeout plus a margin (ZooKeeper
expires sessions on tick boundaries, so a little later than the timeout), it is a live broker
holding the id, and the start fails with one line naming it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from kafkapy.metadata.errors import BrokerAlreadyRegisteredError
from kafkapy.metadata.store import EventType, WatchEvent

log = logging.getLogger("kafkapy.broker")

PROGRESS_INTERVAL_S = 5.0


def expiry_wait_s(session_timeout_ms: int) -> float:
    """How long a predecessor's session may take to expire: the timeout plus a margin (at least
    3 s, covering ZooKeeper's tick rounding, or a quarter of the timeout)."""
    return (session_timeout_ms + max(3000, session_timeout_ms // 4)) / 1000.0


def register_broker(broker: Any) -> None:
    """Register ``broker`` (a server.broker.Broker), waiting for a stale registration to expire;
    BrokerAlreadyRegisteredError when a live session keeps the id."""
    cluster, config = broker.cluster, broker.config

    def attempt() -> None:
        broker.register()  # every advertised listener's endpoint

    try:
        attempt()
        return
    except BrokerAlreadyRegisteredError as e:
        owner = e.owner
    timeout_ms = config.zookeeper_session_timeout_ms
    wait_s = expiry_wait_s(timeout_ms)
    log.warning(
        "broker.id %d is registered by another ZooKeeper session 0x%x (a killed broker whose "
        "session has not expired yet, or a live one): waiting up to %.0f s for it to expire",
        broker.broker_id,
        owner,
        wait_s,
    )
    changed = threading.Event()

    def on_event(event: WatchEvent) -> None:
        if event.type is EventType.DELETED:
            changed.set()

    started = time.monotonic()
    deadline = started + wait_s
    handle = broker.store.add_watch(cluster.broker_registration_path(broker.broker_id), on_event)
    try:
        while True:
            changed.clear()
            try:
                attempt()
                log.info(
                    "registered broker.id %d after the old registration expired waited_s=%.1f",
                    broker.broker_id,
                    time.monotonic() - started,
                )
                return
            except BrokerAlreadyRegisteredError as e:
                owner = e.owner
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrokerAlreadyRegisteredError(
                    f"broker.id {broker.broker_id} is already registered by a live broker: "
                    f"its ZooKeeper session 0x{owner:x} did not expire within {wait_s:.0f} s "
                    f"(zookeeper.session.timeout.ms={timeout_ms} plus a margin)",
                    owner=owner,
                )
            if not changed.wait(min(left, PROGRESS_INTERVAL_S)) and left > PROGRESS_INTERVAL_S:
                log.info(
                    "still waiting for the old registration of broker.id %d to expire "
                    "remaining_s=%.0f",
                    broker.broker_id,
                    left - PROGRESS_INTERVAL_S,
                )
    finally:
        broker.store.remove_watch(handle)
