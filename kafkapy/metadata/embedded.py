"""EmbeddedStore: the metadata store for a broker running without ZooKeeper, on SQLite.

One SQLite file (by convention ``<first log dir>/__metadata.db``) holds the znode tree, one row per
znode. WAL journal with ``synchronous=FULL``: every mutating call is one SQLite transaction, durable
when it returns, so a crash never leaves a half-applied ``multi``.

Sessions: each open is a new session with a fresh id. Ephemeral znodes belong to it; they are
deleted on :meth:`close`, and any left by an earlier process are deleted when the store is opened
(that process, hence its session, is dead). An exclusive ``flock`` on ``<db>.lock`` keeps a second
process (or a second open in this process) from sharing the file and killing live ephemerals.

Thread safety: one connection (``check_same_thread=False``) guarded by a re-entrant lock; watch
callbacks run after the change committed, outside the lock, on the calling thread.
"""

from __future__ import annotations

import fcntl
import itertools
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from kafkapy import clock
from kafkapy.metadata.errors import (
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreClosedError,
    StoreError,
    StoreLockedError,
)
from kafkapy.metadata.store import (
    ANY_VERSION,
    CheckOp,
    CreateOp,
    DeleteOp,
    EventType,
    MetadataStore,
    Op,
    OpResult,
    SetOp,
    WatchCallback,
    WatchEvent,
    ZNodeStat,
    parent_of,
    sequential_name,
    validate_path,
)

log = logging.getLogger(__name__)

DEFAULT_FILE_NAME = "__metadata.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS znodes (
    path            TEXT PRIMARY KEY,
    parent          TEXT NOT NULL,
    data            BLOB NOT NULL,
    version         INTEGER NOT NULL,
    cversion        INTEGER NOT NULL,
    czxid           INTEGER NOT NULL,
    mzxid           INTEGER NOT NULL,
    pzxid           INTEGER NOT NULL,
    ctime           INTEGER NOT NULL,
    mtime           INTEGER NOT NULL,
    ephemeral_owner INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS znodes_by_parent ON znodes(parent);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

_COLUMNS = "path, data, version, cversion, czxid, mzxid, pzxid, ctime, mtime, ephemeral_owner"


class _Row:
    """One znode row as read from SQLite."""

    __slots__ = (
        "path", "data", "version", "cversion", "czxid", "mzxid", "pzxid", "ctime", "mtime",
        "ephemeral_owner",
    )

    def __init__(self, row: tuple) -> None:
        (self.path, self.data, self.version, self.cversion, self.czxid, self.mzxid, self.pzxid,
         self.ctime, self.mtime, self.ephemeral_owner) = row


class EmbeddedStore(MetadataStore):
    """A crash-safe, single-process znode store in one SQLite file."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self._db_path = Path(db_path)
        self._db_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._watches: dict[int, tuple[str, WatchCallback]] = {}
        self._watch_ids = itertools.count(1)
        self._closed = False
        self._lock_file = self._acquire_file_lock()
        try:
            self._conn = sqlite3.connect(
                str(self._db_path), check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.executescript(_SCHEMA)
            self._zxid = 0
            self._session_id = 0
            self._open_session()
        except BaseException:
            self._release_file_lock()
            raise

    @classmethod
    def in_dir(cls, directory: str | os.PathLike[str]) -> EmbeddedStore:
        """Open (creating if needed) ``<directory>/__metadata.db``."""
        return cls(Path(directory) / DEFAULT_FILE_NAME)

    @property
    def path(self) -> Path:
        return self._db_path

    @property
    def session_id(self) -> int:
        return self._session_id

    # --- opening and closing ------------------------------------------------------------------

    def _acquire_file_lock(self) -> IO[bytes]:
        lock_path = self._db_path.with_name(self._db_path.name + ".lock")
        f = open(lock_path, "a+b")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            f.close()
            raise StoreLockedError(
                f"metadata store {self._db_path} is in use by another broker process", None
            ) from e
        return f

    def _release_file_lock(self) -> None:
        try:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
        finally:
            self._lock_file.close()

    def _open_session(self) -> None:
        def work(events: list[WatchEvent]) -> None:
            cur = self._conn.execute("SELECT value FROM meta WHERE key = 'zxid'")
            row = cur.fetchone()
            self._zxid = row[0] if row else 0
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'session'").fetchone()
            self._session_id = (row[0] if row else 0) + 1
            self._conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES('session', ?)", (self._session_id,)
            )
            if self._conn.execute("SELECT 1 FROM znodes WHERE path = '/'").fetchone() is None:
                now = clock.now_ms()
                self._conn.execute(
                    f"INSERT INTO znodes(parent, {_COLUMNS}) VALUES('', '/', x'', 0, 0, 0, 0, 0,"
                    " ?, ?, 0)",
                    (now, now),
                )
            # the previous process's session is dead: its ephemeral nodes go
            self._delete_ephemerals(None, events)

        self._transaction(work, fire=False)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._transaction(
                    lambda events: self._delete_ephemerals(self._session_id, events), fire=False
                )
            except (sqlite3.Error, OSError) as e:  # e.g. a full disk: the next open drops them
                log.debug("ephemeral nodes left for the next open to delete: %s", e)
            finally:
                self._closed = True
                self._watches.clear()
                self._conn.close()
                self._release_file_lock()

    def _delete_ephemerals(self, owner: int | None, events: list[WatchEvent]) -> None:
        if owner is None:
            cur = self._conn.execute("SELECT path FROM znodes WHERE ephemeral_owner != 0")
        else:
            cur = self._conn.execute("SELECT path FROM znodes WHERE ephemeral_owner = ?", (owner,))
        for (path,) in cur.fetchall():
            self._do_delete(DeleteOp(path), recursive=False, events=events)

    # --- transaction plumbing -----------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"metadata store {self._db_path} is closed")

    def _transaction(self, work, fire: bool = True):  # type: ignore[no-untyped-def]
        """Run ``work(events)`` in one SQLite write transaction with one new zxid."""
        events: list[WatchEvent] = []
        with self._lock:
            self._check_open()
            saved_zxid = self._zxid
            self._zxid += 1
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(events)
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES('zxid', ?)", (self._zxid,)
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._zxid = saved_zxid
                if self._conn.in_transaction:  # a failed COMMIT (disk full) already rolled back
                    self._conn.execute("ROLLBACK")
                raise
            watches = list(self._watches.values()) if fire and events else []
        for event in events:
            for path, callback in watches:
                if path == event.path:
                    try:
                        callback(event)
                    except Exception:
                        log.exception("metadata watch callback for %s failed", path)
        return result

    def _row(self, path: str) -> _Row | None:
        r = self._conn.execute(f"SELECT {_COLUMNS} FROM znodes WHERE path = ?", (path,)).fetchone()
        return _Row(r) if r else None

    def _num_children(self, path: str) -> int:
        cur = self._conn.execute("SELECT COUNT(*) FROM znodes WHERE parent = ?", (path,))
        return int(cur.fetchone()[0])

    def _stat(self, row: _Row) -> ZNodeStat:
        return ZNodeStat(
            version=row.version,
            cversion=row.cversion,
            ctime=row.ctime,
            mtime=row.mtime,
            ephemeral_owner=row.ephemeral_owner,
            num_children=self._num_children(row.path),
            data_length=len(row.data),
            czxid=row.czxid,
            mzxid=row.mzxid,
            pzxid=row.pzxid,
        )

    def _existing(self, path: str) -> _Row:
        row = self._row(validate_path(path))
        if row is None:
            raise NoNodeError(f"znode {path} does not exist", path)
        return row

    @staticmethod
    def _check_version(row: _Row, version: int) -> None:
        if version != ANY_VERSION and version != row.version:
            raise BadVersionError(
                f"znode {row.path} is at version {row.version}, expected {version}", row.path
            )

    def _touch_parent(self, parent: str) -> None:
        self._conn.execute(
            "UPDATE znodes SET cversion = cversion + 1, pzxid = ? WHERE path = ?",
            (self._zxid, parent),
        )

    # --- primitive ops (inside a transaction) ---------------------------------------------------

    def _do_create(self, op: CreateOp, makepath: bool, events: list[WatchEvent]) -> str:
        path = validate_path(op.path)
        if path == "/":
            raise NodeExistsError("znode / already exists", path)
        parent = parent_of(path)
        prow = self._row(parent)
        if prow is None:
            if not makepath:
                raise NoNodeError(f"parent znode {parent} of {path} does not exist", path)
            self._do_create(CreateOp(parent), True, events)
            prow = self._row(parent)
            assert prow is not None
        if prow.ephemeral_owner:
            raise NoChildrenForEphemeralsError(
                f"ephemeral znode {parent} cannot have children", path
            )
        if op.sequential:
            # ZooKeeper numbers by child creations; cversion also counts deletions
            path = sequential_name(path, (prow.cversion + self._num_children(parent)) // 2)
        if self._row(path) is not None:
            raise NodeExistsError(f"znode {path} already exists", path)
        now = clock.now_ms()
        owner = self._session_id if op.ephemeral else 0
        self._conn.execute(
            f"INSERT INTO znodes(parent, {_COLUMNS}) VALUES(?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)",
            (parent, path, bytes(op.data), self._zxid, self._zxid, self._zxid, now, now, owner),
        )
        self._touch_parent(parent)
        events.append(WatchEvent(EventType.CREATED, path))
        events.append(WatchEvent(EventType.CHILD, parent))
        return path

    def _do_set(self, op: SetOp, events: list[WatchEvent]) -> ZNodeStat:
        row = self._existing(op.path)
        self._check_version(row, op.version)
        self._conn.execute(
            "UPDATE znodes SET data = ?, version = version + 1, mzxid = ?, mtime = ? "
            "WHERE path = ?",
            (bytes(op.data), self._zxid, clock.now_ms(), row.path),
        )
        events.append(WatchEvent(EventType.CHANGED, row.path))
        new = self._row(row.path)
        assert new is not None
        return self._stat(new)

    def _do_delete(self, op: DeleteOp, recursive: bool, events: list[WatchEvent]) -> None:
        row = self._existing(op.path)
        if row.path == "/":
            raise StoreError("the root znode cannot be deleted", "/")
        self._check_version(row, op.version)
        if self._num_children(row.path):
            if not recursive:
                raise NotEmptyError(f"znode {row.path} has children", row.path)
            # '/' + 1 == '0': this range is exactly the descendants of row.path
            lo, hi = row.path + "/", row.path + "0"
            cur = self._conn.execute(
                "SELECT path FROM znodes WHERE path >= ? AND path < ? ORDER BY path DESC", (lo, hi)
            )
            descendants = [p for (p,) in cur.fetchall()]
            self._conn.execute("DELETE FROM znodes WHERE path >= ? AND path < ?", (lo, hi))
            events.extend(WatchEvent(EventType.DELETED, p) for p in descendants)
        self._conn.execute("DELETE FROM znodes WHERE path = ?", (row.path,))
        parent = parent_of(row.path)
        self._touch_parent(parent)
        events.append(WatchEvent(EventType.DELETED, row.path))
        events.append(WatchEvent(EventType.CHILD, parent))

    def _do_check(self, op: CheckOp) -> None:
        self._check_version(self._existing(op.path), op.version)

    # --- public API -------------------------------------------------------------------------------

    def get(self, path: str) -> tuple[bytes, ZNodeStat]:
        with self._lock:
            self._check_open()
            row = self._existing(path)
            return bytes(row.data), self._stat(row)

    def exists(self, path: str) -> ZNodeStat | None:
        with self._lock:
            self._check_open()
            row = self._row(validate_path(path))
            return self._stat(row) if row else None

    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        makepath: bool = False,
    ) -> str:
        op = CreateOp(path, data, ephemeral, sequential)
        return self._transaction(lambda ev: self._do_create(op, makepath, ev))

    def set(self, path: str, data: bytes, version: int = ANY_VERSION) -> ZNodeStat:
        op = SetOp(path, data, version)
        return self._transaction(lambda ev: self._do_set(op, ev))

    def delete(self, path: str, version: int = ANY_VERSION, recursive: bool = False) -> None:
        op = DeleteOp(path, version)
        self._transaction(lambda ev: self._do_delete(op, recursive, ev))

    def children(self, path: str) -> list[str]:
        with self._lock:
            self._check_open()
            row = self._existing(path)
            cur = self._conn.execute(
                "SELECT path FROM znodes WHERE parent = ? ORDER BY path", (row.path,)
            )
            cut = 1 if row.path == "/" else len(row.path) + 1
            return [p[cut:] for (p,) in cur.fetchall()]

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        ops = list(ops)

        def work(events: list[WatchEvent]) -> list[OpResult]:
            results: list[OpResult] = []
            for index, op in enumerate(ops):
                try:
                    if isinstance(op, CreateOp):
                        results.append(self._do_create(op, False, events))
                    elif isinstance(op, SetOp):
                        results.append(self._do_set(op, events))
                    elif isinstance(op, DeleteOp):
                        self._do_delete(op, False, events)
                        results.append(None)
                    elif isinstance(op, CheckOp):
                        self._do_check(op)
                        results.append(None)
                    else:
                        raise TypeError(f"not a store operation: {op!r}")
                except StoreError as e:
                    e.op_index = index
                    raise
            return results

        return self._transaction(work)

    def add_watch(self, path: str, callback: WatchCallback) -> int:
        validate_path(path)
        with self._lock:
            self._check_open()
            handle = next(self._watch_ids)
            self._watches[handle] = (path, callback)
            return handle

    def remove_watch(self, handle: int) -> None:
        with self._lock:
            self._watches.pop(handle, None)
