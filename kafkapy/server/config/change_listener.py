"""A broker task that applies change notifications as they arrive (Kafka's
ZkNodeChangeNotificationListener, trio side).

A :class:`ChangeListener` keeps a persistent watch on each of its feeds' notification paths
(kafkapy.metadata.change_notifications). The watch callback (ZooKeeper's dispatcher thread, or
the writing thread with the embedded store) only wakes the task; the task polls every feed in a
worker thread (store reads) and applies each item on the trio thread, the only one that touches
the broker's in-memory state. The first poll, at startup, takes every notification still present;
a new ZooKeeper session polls again. A failed poll (ZooKeeper unreachable) is retried after
``RETRY_S``; an item whose application fails is logged and skipped.

Subclasses give the feeds and :meth:`ChangeListener.apply` (server/config/config_listener.py for
/config/changes, server/security/acl_listener.py for the two ACL change paths).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import trio

from kafkapy.metadata.change_notifications import ChangeNotificationFeed
from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.store import MetadataStore, WatchEvent

log = logging.getLogger("kafkapy.change_listener")

RETRY_S = 0.5  # after a failed poll (ZooKeeper unreachable)


class ChangeListener(ABC):
    """Watches the feeds' notification paths and applies what they name (see the module doc)."""

    def __init__(self, store: MetadataStore, feeds: Sequence[ChangeNotificationFeed]) -> None:
        self.store = store
        self.feeds = list(feeds)
        self._watches: list[int] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self._wake = trio.Event()
        self.applied = 0  # items taken (subclasses count them; for tests and logs)

    # -- to override -----------------------------------------------------------------------
    @abstractmethod
    def apply(self, item: Any) -> bool:
        """Apply one changed item; returns whether it was taken (and counts it in applied)."""

    def describe(self, item: Any) -> str:
        return str(item)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the notification paths (blocking store calls; before serving)."""
        for feed in self.feeds:
            self.store.ensure_path(feed.root)
            self._watches.append(self.store.add_watch(feed.root, self._on_event))
        on_reconnected = getattr(self.store, "on_reconnected", None)  # ZooKeeper only
        if on_reconnected is not None:
            on_reconnected(self._on_reconnected)

    def stop(self) -> None:
        for handle in self._watches:
            self.store.remove_watch(handle)
        self._watches = []
        self._token = None

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Poll on every wake-up, starting with one that takes every notification present."""
        self._token = trio.lowlevel.current_trio_token()
        self._wake.set()
        task_status.started()
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            try:
                items = await trio.to_thread.run_sync(self._poll)
            except (StoreError, OSError) as e:
                log.warning("reading change notifications failed, retrying: %s", e)
                await trio.sleep(RETRY_S)
                self._wake.set()
                continue
            for item in items:
                try:
                    self.apply(item)
                except Exception:
                    log.exception("applying change %s failed", self.describe(item))

    def _poll(self) -> list[Any]:
        return [item for feed in self.feeds for item in feed.poll()]

    # -- wake-ups (any thread) --------------------------------------------------------------
    def _on_event(self, event: WatchEvent) -> None:
        self._poke()

    def _on_reconnected(self, new_session: bool) -> None:
        self._poke()

    def _poke(self) -> None:
        token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self._wake_up)
            except trio.RunFinishedError:
                pass

    def _wake_up(self) -> None:
        self._wake.set()
