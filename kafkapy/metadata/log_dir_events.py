"""Log directory failure notifications: /log_dir_event_notification/log_dir_event_N (Kafka's
ZooKeeper-mode propagateLogDirEvent and the controller's LogDirEventNotificationHandler).

A broker whose log directory failed (while others are left) posts one; the controller reads and
deletes them all, then moves leadership of the partitions named away from that broker and takes
it out of their ISRs. Kafka's notification names only the broker (its controller learns the
offline replicas from LeaderAndIsr responses); kafkapy's also lists the partitions (see
protocol_specs/znodes.json).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.errors import NoNodeError
from kafkapy.metadata.store import MetadataStore
from kafkapy.metadata.znodes import LogDirEvent

__all__ = ["LogDirEvent", "post_log_dir_event", "take_log_dir_events"]


def post_log_dir_event(
    store: MetadataStore, broker_id: int, partitions: Iterable[tuple[str, int]]
) -> str:
    """Post a notification; returns its path."""
    event = LogDirEvent(broker_id, tuple(sorted(partitions)))
    return store.create(
        zn.LOG_DIR_EVENT_NOTIFICATION.path(),
        zn.LOG_DIR_EVENT_NOTIFICATION.encode(event),
        sequential=True,
        makepath=True,
    )


def take_log_dir_events(store: MetadataStore) -> list[LogDirEvent]:
    """Every pending notification, oldest first; they are deleted (the controller's part)."""
    parent = zn.LOG_DIR_EVENT_NOTIFICATIONS.path()
    try:
        names = sorted(store.children(parent))
    except NoNodeError:
        return []
    events = []
    for name in names:
        path = f"{parent}/{name}"
        got = store.get_or_none(path)
        if got is not None:
            events.append(zn.LOG_DIR_EVENT_NOTIFICATION.decode(got[0]))
        try:
            store.delete(path)
        except NoNodeError:
            pass
    return events
