"""The layer between kazoo and the metadata store interface (kafkapy.metadata.store): kazoo's
stats and exceptions as the store's, and the wire requests kazoo 2.11 lacks, addWatch
(ZooKeeper 3.6+ persistent watches) and removeWatches."""

from __future__ import annotations

from collections import namedtuple

from kazoo import exceptions as kz
from kazoo.protocol.serialization import int_struct, write_string
from kazoo.protocol.states import ZnodeStat

from kafkapy.metadata.errors import (
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreClosedError,
    StoreError,
)
from kafkapy.metadata.store import EventType, ZNodeStat, parent_of

# --- wire requests kazoo 2.11 lacks: addWatch (ZooKeeper 3.6+) and removeWatches ---------------

PERSISTENT_WATCH = 0  # AddWatchMode.PERSISTENT (1 would be PERSISTENT_RECURSIVE)
WATCHER_TYPE_ANY = 3
EVENT_TYPES = {
    1: EventType.CREATED, 2: EventType.DELETED, 3: EventType.CHANGED, 4: EventType.CHILD,
}


class AddWatch(namedtuple("AddWatch", "path mode")):
    type = 106

    def serialize(self) -> bytearray:
        b = bytearray(write_string(self.path))
        b.extend(int_struct.pack(self.mode))
        return b

    @classmethod
    def deserialize(cls, data: bytes, offset: int) -> bool:
        return True


class RemoveWatches(namedtuple("RemoveWatches", "path watcher_type")):
    type = 18

    def serialize(self) -> bytearray:
        b = bytearray(write_string(self.path))
        b.extend(int_struct.pack(self.watcher_type))
        return b

    @classmethod
    def deserialize(cls, data: bytes, offset: int) -> bool:
        return True


# --- kazoo's stats and errors as the store's ---------------------------------------------------


def to_store_stat(s: ZnodeStat) -> ZNodeStat:
    return ZNodeStat(
        version=s.version,
        cversion=s.cversion,
        ctime=s.ctime,
        mtime=s.mtime,
        ephemeral_owner=s.ephemeralOwner,
        num_children=s.numChildren,
        data_length=s.dataLength,
        aversion=s.aversion,
        czxid=s.czxid,
        mzxid=s.mzxid,
        pzxid=s.pzxid,
    )


RETRYABLE_ERRORS = (kz.ConnectionLoss, kz.OperationTimeoutError, kz.SessionMovedError,
              kz.SessionExpiredError, kz.ConnectionDropped)


def store_error_for(e: Exception, path: str | None, op: str = "") -> Exception:
    """The store error for a kazoo exception."""
    where = f"znode {path}" if path else "znodes"
    if isinstance(e, kz.NoNodeError):
        if op == "create" and path:
            return NoNodeError(f"parent znode {parent_of(path)} of {path} does not exist", path)
        return NoNodeError(f"{where} does not exist", path)
    if isinstance(e, kz.NodeExistsError):
        return NodeExistsError(f"{where} already exists", path)
    if isinstance(e, kz.BadVersionError):
        return BadVersionError(f"{where}: version mismatch", path)
    if isinstance(e, kz.NotEmptyError):
        return NotEmptyError(f"{where} has children", path)
    if isinstance(e, kz.NoChildrenForEphemeralsError):
        return NoChildrenForEphemeralsError(
            f"ephemeral znode {parent_of(path) if path else '?'} cannot have children", path
        )
    if isinstance(e, kz.ConnectionClosedError):
        return StoreClosedError("ZooKeeper store is closed", path)
    name = type(e).__name__
    return StoreError(f"ZooKeeper error {name} on {where}" + (f": {e}" if str(e) else ""), path)
