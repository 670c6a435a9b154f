"""Sequential change notifications, read as Kafka's ZkNodeChangeNotificationListener reads them.

Kafka announces a change to shared state by creating a sequential znode under a notification
path (/config/changes/config_change_N for configs, /kafka-acl-changes/acl_changes_N and
/kafka-acl-extended-changes/acl_changes_N for ACLs). A notification only names *what* changed;
a broker reads the thing afresh, so one that misses a notification loses nothing as long as it
reads everything again when it starts.

:class:`ChangeNotificationFeed` is the store side (no threads, no watches: the caller decides
when to :meth:`~ChangeNotificationFeed.poll`, typically on a child watch of the path and after a
new ZooKeeper session). Each poll:

* lists the notifications in sequence order and takes those numbered above the last one taken
  (the first poll takes all of them: Kafka re-processes every notification at startup, which
  closes the gap between reading the state and watching for changes);
* decodes each into a key (a config entity, an ACL resource pattern) and reads each key's current
  state once (several notifications for one key coalesce, at the key's last place); a
  notification that does not decode is logged and skipped;
* deletes the notifications older than ``expiration_ms`` (Kafka's changeExpirationMs, 15 minutes)
  by their creation time. Every broker purges; deletions that race are harmless. Sequence order is
  creation order, so the scan stops at the first notification still young (Kafka checks them all).

Synchronous store calls: run it in a worker thread from trio code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kafkapy.clock import now_ms

from .errors import NoNodeError, StoreError
from .store import MetadataStore

log = logging.getLogger(__name__)

#: Kafka's changeExpirationMs for config and ACL change notifications
CHANGE_EXPIRATION_MS = 15 * 60 * 1000

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ChangeNotificationFeed(Generic[K, V]):
    """The notifications under ``root`` a broker has not processed yet (see the module doc).

    ``sequence(name)`` gives a child's sequence number (None: not a notification), ``decode``
    turns a notification's data into a key (ValueError, KeyError or TypeError when malformed),
    ``read(store, key)`` gives the key's current state.
    """

    def __init__(
        self,
        store: MetadataStore,
        root: str,
        sequence: Callable[[str], int | None],
        decode: Callable[[bytes], K],
        read: Callable[[MetadataStore, K], V],
        *,
        expiration_ms: int = CHANGE_EXPIRATION_MS,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.store = store
        self.root = root
        self._sequence = sequence
        self._decode = decode
        self._read = read
        self.expiration_ms = expiration_ms
        self.clock = clock
        self.last_sequence = -1  # the highest notification taken so far

    def poll(self) -> list[V]:
        """The changed keys' states since the last poll, in notification order, then purge the
        expired notifications."""
        now = self.clock()
        try:
            names = self.store.children(self.root)
        except NoNodeError:
            return []
        numbered = sorted(
            (seq, name) for name in names if (seq := self._sequence(name)) is not None
        )
        keys: dict[K, None] = {}
        last = self.last_sequence
        for seq, name in numbered:
            if seq <= last:
                continue
            key = self._key(f"{self.root}/{name}")
            if key is not None:
                keys.pop(key, None)
                keys[key] = None
            last = seq
        states = [self._read(self.store, key) for key in keys]
        self.last_sequence = last  # only once everything was read: a failed poll is repeated
        try:
            self.purge(now, [f"{self.root}/{name}" for _, name in numbered])
        except StoreError as e:
            log.warning("purging change notifications under %s failed: %s", self.root, e)
        return states

    def _key(self, path: str) -> K | None:
        got = self.store.get_or_none(path)
        if got is None:
            log.warning("change notification %s vanished before it was read", path)
            return None
        try:
            return self._decode(got[0])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            log.error("ignoring malformed change notification %s: %s", path, e)
            return None

    def purge(self, now: int, paths: list[str]) -> int:
        """Delete the notifications among ``paths`` (in sequence order) created more than
        ``expiration_ms`` before ``now``; returns how many this call deleted."""
        deleted = 0
        for path in paths:
            stat = self.store.exists(path)
            if stat is None:
                continue
            if now - stat.ctime <= self.expiration_ms:
                break
            try:
                self.store.delete(path)
                deleted += 1
            except NoNodeError:  # another broker purged it first
                pass
        if deleted:
            log.debug("purged %d expired change notifications under %s", deleted, self.root)
        return deleted
