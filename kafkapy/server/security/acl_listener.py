"""ACL change notifications applied on every broker (Kafka's AclAuthorizer change listeners).

An ACL written through any broker (CreateAcls, DeleteAcls, kafka-acls.sh) or by Kafka's own
tools against the same ZooKeeper posts a notification under /kafka-acl-changes (literal
patterns) or /kafka-acl-extended-changes (prefixed ones), kafkapy.metadata.acls. This
ChangeListener (server/config/change_listener.py) rereads each named pattern's ACLs and hands them
to the broker's authorizer, so every broker decides from the same ACLs moments after a change.

At startup the broker watches first and then loads every ACL, as Kafka does, so nothing written
in between is missed; the first poll also rereads every pattern named in the last 15 minutes.

This broker's own writes (CreateAcls, DeleteAcls) go through :meth:`AclChangeListener.update`:
one at a time (Kafka's authorizer lock), in a worker thread, and applied to the authorizer as
soon as they are stored, so the next request on any connection sees them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import trio

from kafkapy.metadata import acls
from kafkapy.metadata.acl_model import AccessControlEntry, ResourcePattern

from ..config.change_listener import ChangeListener

if TYPE_CHECKING:
    from kafkapy.metadata.store import MetadataStore
    from kafkapy.security.authorizer import AclAuthorizer

log = logging.getLogger("kafkapy.acl_changes")


class AclChangeListener(ChangeListener):
    """Keeps ``authorizer``'s ACLs equal to the stored ones (see the module doc)."""

    def __init__(self, store: MetadataStore, authorizer: AclAuthorizer) -> None:
        super().__init__(store, acls.change_feeds(store))
        self.authorizer = authorizer
        self._write_lock = trio.Lock()

    def start(self) -> None:
        """Create the ACL paths, watch the change paths, then load every ACL (blocking)."""
        acls.ensure_paths(self.store)
        super().start()
        self.authorizer.replace_all(acls.read_all(self.store))

    def describe(self, item: tuple[ResourcePattern, frozenset[AccessControlEntry]]) -> str:
        return str(item[0])

    def apply(self, item: tuple[ResourcePattern, frozenset[AccessControlEntry]]) -> bool:
        pattern, entries = item
        if self.authorizer.acls_of(pattern) != entries:  # the writing broker logs at INFO
            log.debug("ACLs of %s are now %s", pattern, ", ".join(sorted(map(str, entries))))
        self.authorizer.set_acls(pattern, entries)
        self.applied += 1
        return True

    async def update(
        self, changes: Sequence[tuple[ResourcePattern, Callable[[frozenset], frozenset]]]
    ) -> list[tuple[frozenset, frozenset] | Exception]:
        """Apply each (pattern, change) to the stored ACLs (kafkapy.metadata.acls.update_acls)
        and to the authorizer; per change, (before, after) or the exception it failed with."""

        def write() -> list[tuple[frozenset, frozenset] | Exception]:
            out: list[tuple[frozenset, frozenset] | Exception] = []
            for pattern, change in changes:
                try:
                    out.append(acls.update_acls(self.store, pattern, change))
                except Exception as e:  # a store failure fails this pattern's ACLs only
                    log.warning("updating the ACLs of %s failed: %s", pattern, e)
                    out.append(e)
            return out

        async with self._write_lock:
            results = await trio.to_thread.run_sync(write)
            for (pattern, _), result in zip(changes, results, strict=True):
                if not isinstance(result, Exception):
                    self.authorizer.set_acls(pattern, result[1])
        return results
