"""The ZooKeeperStore's sessions and watches (mixed into ZooKeeperStore): session-lost and
reconnected callbacks, ZooKeeper 3.6+ persistent watches added and removed on the server, watch
events delivered in ZooKeeper's order on the store's dispatcher thread, and after a reconnection
the watches re-added and the events missed meanwhile synthesized from the znodes' zxids."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kazoo.client import KazooState
from kazoo.protocol.serialization import Watch

from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.kazoo_adapter import (
    EVENT_TYPES,
    PERSISTENT_WATCH,
    WATCHER_TYPE_ANY,
    AddWatch,
    RemoveWatches,
)
from kafkapy.metadata.store import EventType, WatchCallback, WatchEvent, validate_path

if TYPE_CHECKING:
    from kafkapy.metadata.zookeeper import ZooKeeperStore

log = logging.getLogger("kafkapy.metadata.zookeeper")

SessionCallback = Callable[[], None]
ReconnectCallback = Callable[[bool], None]


class ZooKeeperWatches:
    """Session events and persistent watches of a :class:`ZooKeeperStore`."""

    # --- session and connection events ---------------------------------------------------------

    def on_session_lost(self: ZooKeeperStore, callback: SessionCallback) -> None:
        """Call ``callback()`` (on the store's thread) when ZooKeeper expired this store's session:
        its ephemeral znodes are gone. A new session follows (see :meth:`on_reconnected`)."""
        with self._lock:
            self._lost_callbacks.append(callback)

    def on_reconnected(self: ZooKeeperStore, callback: ReconnectCallback) -> None:
        """Call ``callback(new_session)`` (on the store's thread) after the connection came back
        and watches were re-established. ``new_session`` is True after an expiry: ephemerals must
        be created again (a broker re-registers)."""
        with self._lock:
            self._reconnect_callbacks.append(callback)

    def _on_state(self: ZooKeeperStore, state: str) -> None:
        # kazoo's connection thread: never block here
        if state == KazooState.CONNECTED:
            self._last_heard = time.monotonic()
            self._events.put(("connected", self._client._session_id))
        elif state == KazooState.SUSPENDED:
            if self._disconnect_zxid is None:
                self._disconnect_zxid = self._client.last_zxid
            self._events.put(("suspended", None))
        elif state == KazooState.LOST:
            if self._disconnect_zxid is None:
                self._disconnect_zxid = self._client.last_zxid
            if not self._closing:
                self._events.put(("lost", None))

    def _install_event_hook(self: ZooKeeperStore) -> None:
        """Route server watch events for persistently watched paths to our dispatcher, and note
        when the server last sent anything (replies and pings: ``unreachable_for``)."""
        conn = self._client._connection
        original = conn._read_watch_event
        original_read = conn._read_socket
        self._last_heard = time.monotonic()

        def read_socket(read_timeout: float) -> Any:
            got = original_read(read_timeout)
            self._last_heard = time.monotonic()
            return got

        conn._read_socket = read_socket

        def read_watch_event(buffer: bytes, offset: int) -> Any:
            try:
                watch, _ = Watch.deserialize(buffer, offset)
                kind = EVENT_TYPES.get(watch.type)
                if kind is not None:
                    path = self._client.unchroot(watch.path) or "/"
                    if path in self._watched:
                        self._events.put(("event", WatchEvent(kind, path)))
            except Exception:  # pragma: no cover - never break kazoo's reader
                log.exception("cannot decode ZooKeeper watch event")
            return original(buffer, offset)

        conn._read_watch_event = read_watch_event

    def _dispatch_loop(self: ZooKeeperStore) -> None:
        while True:
            kind, arg = self._events.get()
            if kind == "stop":
                return
            try:
                if kind == "event":
                    self._deliver(arg)
                elif kind == "flush":
                    arg.set()
                elif kind == "lost":
                    log.warning("ZooKeeper session expired (%s)", self._connect)
                    self._call_all(self._lost_callbacks)
                elif kind == "connected":
                    self._reconnected(arg)
            except Exception:
                log.exception("ZooKeeper event handling failed (%s)", kind)

    def _deliver(self: ZooKeeperStore, event: WatchEvent) -> None:
        with self._lock:
            if event.path in self._watched:
                if event.type is EventType.CREATED:
                    self._watched[event.path] = True
                elif event.type is EventType.DELETED:
                    self._watched[event.path] = False
            targets = [cb for (p, cb) in self._watches.values() if p == event.path]
        for callback in targets:
            try:
                callback(event)
            except Exception:
                log.exception("metadata watch callback for %s failed", event.path)

    def _call_all(self: ZooKeeperStore, callbacks: list[Any], *args: Any) -> None:
        with self._lock:
            todo = list(callbacks)
        for cb in todo:
            try:
                cb(*args)
            except Exception:
                log.exception("ZooKeeper session callback failed")

    def _reconnected(self: ZooKeeperStore, session: int | None) -> None:
        if self._closing:
            return
        if not self._ever_connected:
            self._ever_connected = True
            self._connected_session = session
            self._disconnect_zxid = None
            return
        new_session = session != self._connected_session
        self._connected_session = session
        since = self._disconnect_zxid or 0
        self._disconnect_zxid = None
        log.info(
            "reconnected to ZooKeeper (%s), %s session 0x%x",
            self._connect, "new" if new_session else "same", session or 0,
        )
        try:
            self._rewatch(since)
        except StoreError:
            log.warning("re-establishing ZooKeeper watches failed; retrying at next reconnect")
            return
        self._call_all(self._reconnect_callbacks, new_session)

    def _rewatch(self: ZooKeeperStore, since_zxid: int) -> None:
        """Re-add every server-side watch and synthesize the events missed while disconnected."""
        with self._watch_reg_lock:
            paths = list(self._watched)
            for path in paths:
                self._run(
                    lambda p=path: self._send(AddWatch(self._zpath(p), PERSISTENT_WATCH)), path
                )
                stat = self._run(lambda p=path: self._wait(self._client.exists_async(p)), path)
                with self._lock:
                    if path not in self._watched:
                        continue
                    existed = self._watched[path]
                missed: list[EventType] = []
                if stat is None:
                    if existed:
                        missed.append(EventType.DELETED)
                elif not existed:
                    missed.append(EventType.CREATED)
                elif stat.czxid > since_zxid:
                    missed += [EventType.DELETED, EventType.CREATED]
                else:
                    if stat.mzxid > since_zxid:
                        missed.append(EventType.CHANGED)
                    if stat.pzxid > since_zxid:
                        missed.append(EventType.CHILD)
                for kind in missed:
                    self._deliver(WatchEvent(kind, path))

    def flush_watches(self: ZooKeeperStore, timeout: float = 10.0) -> bool:
        """Wait until the watch events received so far were delivered (for tests and tools).
        Returns False on timeout. Called from a watch callback, it returns at once."""
        if threading.current_thread() is getattr(self, "_dispatcher", None):
            return True
        done = threading.Event()
        self._events.put(("flush", done))
        return done.wait(timeout)

    # --- watches -------------------------------------------------------------------------------

    def add_watch(self: ZooKeeperStore, path: str, callback: WatchCallback) -> int:
        validate_path(path)
        self._check_open()
        with self._watch_reg_lock:
            with self._lock:
                known = path in self._watched
            if not known:
                self._run(lambda: self._send(AddWatch(self._zpath(path), PERSISTENT_WATCH)), path)
                stat = self._run(lambda: self._wait(self._client.exists_async(path)), path)
            with self._lock:
                if not known:
                    self._watched[path] = stat is not None
                handle = next(self._watch_ids)
                self._watches[handle] = (path, callback)
                return handle

    def remove_watch(self: ZooKeeperStore, handle: int) -> None:
        with self._watch_reg_lock:
            with self._lock:
                entry = self._watches.pop(handle, None)
                if entry is None:
                    return
                path = entry[0]
                if any(p == path for p, _ in self._watches.values()):
                    return
                self._watched.pop(path, None)
            if self._closed or self._closing or not self._client.connected:
                return  # the server forgets a connection's watches with the connection
            try:
                self._send(RemoveWatches(self._zpath(path), WATCHER_TYPE_ANY), timeout=5.0)
            except Exception as e:  # best effort: events for unwatched paths are ignored anyway
                log.debug("removeWatches %s failed: %r", path, e)
