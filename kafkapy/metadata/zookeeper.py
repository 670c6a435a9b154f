"""ZooKeeperStore: the metadata store on a real ZooKeeper ensemble, through kazoo.

Selected by ``zookeeper.connect`` (``host:port[,host:port...][/chroot]``). Same interface and
semantics as :class:`~kafkapy.metadata.embedded.EmbeddedStore`, with these ZooKeeper specifics:

* **chroot**: the optional ``/chroot`` suffix of the connect string is created when missing (as
  Kafka does) and every path is relative to it; ``/`` is the chroot node and cannot be deleted.
* **sessions**: the store's session is the ZooKeeper session; its ephemeral znodes vanish when
  :meth:`close` ends it, or when the ensemble expires it (no heartbeat for the negotiated session
  timeout). kazoo reconnects by itself, with a *new* session after an expiry: register
  :meth:`ZooKeeperStore.on_session_lost` / :meth:`ZooKeeperStore.on_reconnected` callbacks to
  re-create ephemerals (a broker re-registers ``/brokers/ids/N``) and re-read state.
* **blocking calls, retried**: every call blocks until ZooKeeper answers. While the connection is
  down a call waits for the reconnection (up to ``connection_timeout_ms``) and retries, so a write
  whose answer was lost may have been applied: an ephemeral create that finds its node owned by
  this session counts as done, a delete that finds the node gone likewise.
  :class:`ZooKeeperConnectionError` when ZooKeeper stays unreachable.
* **watches** are ZooKeeper 3.6+ *persistent* watches (``addWatch``, mode PERSISTENT): one
  server-side watch per watched path delivering every NodeCreated / NodeDeleted / NodeDataChanged
  / NodeChildrenChanged on it, with no gap between events. Callbacks run in ZooKeeper's order on
  the store's own dispatcher thread (they may call the store). A lost connection drops server-side
  watches: after reconnecting the store re-adds them and synthesizes the events a watcher missed
  from the znodes' zxids (possibly coalesced, as with ZooKeeper's own SetWatches).
* **multi** is a ZooKeeper transaction; ``recursive`` delete is one transaction too (split into
  several only for subtrees over :data:`MAX_MULTI_OPS` nodes).

Sessions and watches are in zookeeper_watches (a mixin), the translation of kazoo's stats,
errors and missing requests in kazoo_adapter.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kazoo import exceptions as kz
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import ZnodeStat
from kazoo.retry import KazooRetry

from kafkapy.metadata.errors import (
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreClosedError,
    StoreError,
)
from kafkapy.metadata.kazoo_adapter import RETRYABLE_ERRORS, store_error_for, to_store_stat
from kafkapy.metadata.store import (
    ANY_VERSION,
    CheckOp,
    CreateOp,
    DeleteOp,
    MetadataStore,
    Op,
    OpResult,
    SetOp,
    WatchCallback,
    ZNodeStat,
    validate_path,
)
from kafkapy.metadata.zookeeper_watches import (
    ReconnectCallback,
    SessionCallback,
    ZooKeeperWatches,
)

log = logging.getLogger(__name__)

#: largest transaction a recursive delete sends at once (ZooKeeper's jute.maxbuffer is 1 MiB)
MAX_MULTI_OPS = 1000


class ZooKeeperConnectionError(StoreError):
    """ZooKeeper could not be reached (at start, or for longer than the connection timeout)."""


class ZooKeeperConfigError(StoreError, ValueError):
    """An unusable zookeeper.connect string."""


# --- helpers -----------------------------------------------------------------------------------


def parse_connect_string(connect: str) -> tuple[str, str]:
    """Split ``host:port,host:port/chroot`` into (hosts, chroot); chroot is "" when absent."""
    if not isinstance(connect, str) or not connect.strip():
        raise ZooKeeperConfigError("zookeeper.connect is empty")
    connect = connect.strip()
    hosts, sep, chroot = connect.partition("/")
    if not hosts:
        raise ZooKeeperConfigError(f"zookeeper.connect {connect!r} names no host")
    chroot = ("/" + chroot).rstrip("/") if sep else ""
    if chroot:
        validate_path(chroot)
    return hosts, chroot



# --- the store ---------------------------------------------------------------------------------


class ZooKeeperStore(ZooKeeperWatches, MetadataStore):
    """A :class:`MetadataStore` on a ZooKeeper ensemble (one kazoo client = one session)."""

    def __init__(
        self,
        connect: str,
        *,
        session_timeout_ms: int = 18000,
        connection_timeout_ms: int | None = None,
    ) -> None:
        self._connect = connect
        self._hosts, self._chroot = parse_connect_string(connect)
        self._session_timeout_ms = int(session_timeout_ms)
        self._connection_timeout_ms = int(
            connection_timeout_ms if connection_timeout_ms is not None else session_timeout_ms
        )
        self._closed = False
        self._closing = False
        self._lock = threading.RLock()  # watch tables and callback lists
        self._watch_reg_lock = threading.Lock()  # server-side (un)registration, resync
        self._watches: dict[int, tuple[str, WatchCallback]] = {}
        self._watch_ids = itertools.count(1)
        self._watched: dict[str, bool] = {}  # watched path -> exists (as last seen)
        self._lost_callbacks: list[SessionCallback] = []
        self._reconnect_callbacks: list[ReconnectCallback] = []
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._ever_connected = False
        self._connected_session: int | None = None
        self._disconnect_zxid: int | None = None
        self._last_heard = 0.0  # time.monotonic() of the server's last reply or ping

        try:
            self._client = KazooClient(
                hosts=self._hosts,
                timeout=self._session_timeout_ms / 1000.0,
                connection_retry=KazooRetry(
                    max_tries=-1, delay=0.1, backoff=2, max_delay=2.0, max_jitter=0.2
                ),
                logger=logging.getLogger("kafkapy.zookeeper.kazoo"),
            )
        except (ValueError, kz.ConfigurationError) as e:
            raise ZooKeeperConfigError(f"invalid zookeeper.connect {connect!r}: {e}") from None
        self._install_event_hook()
        self._client.add_listener(self._on_state)
        try:
            self._client.start(timeout=self._connection_timeout_ms / 1000.0)
        except KazooTimeoutError:
            raise ZooKeeperConnectionError(
                f"Timed out waiting for connection to ZooKeeper at {connect!r} "
                f"(zookeeper.connection.timeout.ms={self._connection_timeout_ms})"
            ) from None
        except Exception as e:
            self._client.stop()
            self._client.close()
            raise ZooKeeperConnectionError(
                f"cannot connect to ZooKeeper at {connect!r}: {e}"
            ) from e
        self._dispatcher = threading.Thread(
            target=self._dispatch_loop, name="kafkapy-zk-events", daemon=True
        )
        self._dispatcher.start()
        try:
            if self._chroot:
                chroot = self._chroot
                self._run(lambda: self._wait(self._client.ensure_path_async(chroot)), chroot)
                self._client.chroot = self._chroot
        except BaseException:
            self.close()
            raise

    # --- properties ----------------------------------------------------------------------------

    @property
    def connect_string(self) -> str:
        return self._connect

    @property
    def chroot(self) -> str:
        """The chroot ("" when none)."""
        return self._chroot

    @property
    def client(self) -> KazooClient:
        """The kazoo client (its paths are relative to the chroot)."""
        return self._client

    @property
    def session_id(self) -> int:
        return int(self._client._session_id or 0)

    @property
    def connected(self) -> bool:
        return bool(self._client.connected)

    def unreachable_for(self) -> float:
        """Seconds since the ensemble last answered while the connection is down (0.0 while
        connected): past the session timeout, the ensemble has expired this session."""
        if self._client.connected:
            return 0.0
        return time.monotonic() - self._last_heard

    @property
    def closed(self) -> bool:
        return self._closed

    # --- call plumbing -------------------------------------------------------------------------

    def _zpath(self, path: str) -> str:
        """The absolute server-side path of a store path."""
        if not self._chroot:
            return path
        return self._chroot if path == "/" else self._chroot + path

    def _send(self, request: Any, timeout: float | None = None) -> Any:
        """Send a request kazoo has no method for; wait for its answer."""
        result = self._client.handler.async_result()
        self._client._call(request, result)
        return self._wait(result, timeout)

    def _wait(self, result: Any, timeout: float | None = None) -> Any:
        """The answer of a kazoo async call. kazoo keeps a request made while disconnected
        queued until it reconnects: on timeout, a request still unsent is withdrawn, so a call
        that failed can never be applied later."""
        try:
            return result.get(timeout=timeout if timeout is not None else self._op_timeout())
        except KazooTimeoutError:
            for entry in list(self._client._queue):
                if entry[1] is result:
                    try:
                        self._client._queue.remove(entry)
                    except ValueError:  # sent meanwhile
                        pass
            raise

    def _op_timeout(self) -> float:
        return max(self._session_timeout_ms, self._connection_timeout_ms) / 1000.0

    def _check_open(self) -> None:
        if self._closed or self._closing:
            raise StoreClosedError(f"ZooKeeper store ({self._connect}) is closed")

    def _run(self, fn: Callable[[], Any], path: str | None, op: str = "") -> Any:
        """Run a kazoo call once connected, retrying across connection losses for up to the
        connection timeout; kazoo errors become store errors."""
        deadline: float | None = None
        err: Exception | None = None
        while True:
            self._check_open()
            now = time.monotonic()
            if not self._client.connected:
                if deadline is None:
                    deadline = now + self._connection_timeout_ms / 1000.0
                if now >= deadline:
                    raise ZooKeeperConnectionError(
                        f"ZooKeeper at {self._connect!r} unreachable for "
                        f"{self._connection_timeout_ms} ms"
                        + (f" ({type(err).__name__} on {path})" if err and path else ""),
                        path,
                    )
                self._client._live.wait(min(0.1, deadline - now))  # never spin
                continue
            try:
                return fn()
            except kz.ConnectionClosedError:
                if self._closing or self._closed:
                    raise StoreClosedError(f"ZooKeeper store ({self._connect}) is closed") from None
                err = kz.ConnectionLoss()
            except (*RETRYABLE_ERRORS, KazooTimeoutError) as e:
                err = e
            except kz.ZookeeperError as e:
                raise store_error_for(e, path, op) from None
            now = time.monotonic()
            if deadline is None:
                deadline = now + self._connection_timeout_ms / 1000.0
            elif now >= deadline:
                raise ZooKeeperConnectionError(
                    f"ZooKeeper at {self._connect!r} did not answer within "
                    f"{self._connection_timeout_ms} ms ({type(err).__name__}"
                    + (f" on {path})" if path else ")"),
                    path,
                )
            time.sleep(0.02)

    # --- MetadataStore -------------------------------------------------------------------------

    def get(self, path: str) -> tuple[bytes, ZNodeStat]:
        validate_path(path)
        data, stat = self._run(lambda: self._wait(self._client.get_async(path)), path)
        return bytes(data), to_store_stat(stat)

    def exists(self, path: str) -> ZNodeStat | None:
        validate_path(path)
        stat = self._run(lambda: self._wait(self._client.exists_async(path)), path)
        return None if stat is None else to_store_stat(stat)

    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        makepath: bool = False,
    ) -> str:
        validate_path(path)
        if path == "/":
            raise NodeExistsError("znode / already exists", path)
        attempts = 0

        def attempt() -> str:
            nonlocal attempts
            attempts += 1
            try:
                return self._wait(self._client.create_async(
                    path, bytes(data), ephemeral=ephemeral, sequence=sequential,
                    makepath=makepath,
                ))
            except kz.NodeExistsError:
                if attempts > 1 and ephemeral and not sequential:
                    # our first attempt may have succeeded before the connection dropped
                    stat = self._wait(self._client.exists_async(path))
                    if stat is not None and stat.ephemeralOwner == self._client._session_id:
                        return path
                raise

        return str(self._run(attempt, path, "create"))

    def set(self, path: str, data: bytes, version: int = ANY_VERSION) -> ZNodeStat:
        validate_path(path)
        stat = self._run(
            lambda: self._wait(self._client.set_async(path, bytes(data), version)), path
        )
        return to_store_stat(stat)

    def delete(self, path: str, version: int = ANY_VERSION, recursive: bool = False) -> None:
        validate_path(path)
        if path == "/":
            raise StoreError("the root znode cannot be deleted", "/")
        attempts = 0

        def attempt() -> None:
            nonlocal attempts
            attempts += 1
            try:
                self._wait(self._client.delete_async(path, version))
            except kz.NoNodeError:
                if attempts > 1:
                    return  # deleted by our first attempt, whose answer was lost
                raise

        if not recursive:
            self._run(attempt, path)
            return
        for _ in range(20):  # children may come and go while we collect them
            try:
                self._delete_tree(path, version)
                return
            except (NotEmptyError, NoNodeError) as e:
                if e.path == path and isinstance(e, NoNodeError):
                    raise
                continue
        raise NotEmptyError(f"znode {path} keeps changing; recursive delete gave up", path)

    def _delete_tree(self, path: str, version: int) -> None:
        paths: list[str] = []

        def collect(p: str) -> None:
            for child in self._run(lambda: self._wait(self._client.get_children_async(p)), p):
                collect(f"{p}/{child}")
            paths.append(p)

        collect(path)  # NoNodeError for path itself propagates
        ops: list[Op] = [DeleteOp(p) for p in paths[:-1]] + [DeleteOp(path, version)]
        if len(ops) <= MAX_MULTI_OPS:
            try:
                self.multi(ops)
            except StoreError as e:
                e.op_index = None
                raise
            return
        if version != ANY_VERSION:
            self.multi([CheckOp(path, version)])
        for start in range(0, len(ops), MAX_MULTI_OPS):
            self.multi(ops[start:start + MAX_MULTI_OPS])

    def children(self, path: str) -> list[str]:
        validate_path(path)
        return sorted(self._run(lambda: self._wait(self._client.get_children_async(path)), path))

    def ensure_path(self, path: str) -> None:
        validate_path(path)
        if path != "/":
            self._run(lambda: self._wait(self._client.ensure_path_async(path)), path)

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        ops = list(ops)
        for index, op in enumerate(ops):
            if not isinstance(op, CreateOp | SetOp | DeleteOp | CheckOp):
                raise TypeError(f"not a store operation: {op!r}")
            try:
                validate_path(op.path)
                if op.path == "/" and isinstance(op, CreateOp):
                    raise NodeExistsError("znode / already exists", "/")
                if op.path == "/" and isinstance(op, DeleteOp):  # would delete the chroot
                    raise StoreError("the root znode cannot be deleted", "/")
            except StoreError as e:
                e.op_index = index
                raise
        self._check_open()
        if not ops:
            return []

        def attempt() -> list[Any]:
            tx = self._client.transaction()
            for op in ops:
                if isinstance(op, CreateOp):
                    tx.create(op.path, bytes(op.data), ephemeral=op.ephemeral,
                              sequence=op.sequential)
                elif isinstance(op, SetOp):
                    tx.set_data(op.path, bytes(op.data), op.version)
                elif isinstance(op, DeleteOp):
                    tx.delete(op.path, op.version)
                else:
                    tx.check(op.path, op.version)
            return self._wait(tx.commit_async())

        results = self._run(attempt, None)
        failed = [
            (i, r) for i, r in enumerate(results)
            if isinstance(r, Exception)
            and not isinstance(r, kz.RolledBackError | kz.RuntimeInconsistency)
        ]
        if failed:
            index, exc = failed[0]
            op = ops[index]
            err = store_error_for(exc, op.path, "create" if isinstance(op, CreateOp) else "")
            if isinstance(err, StoreError):
                err.op_index = index
            raise err
        out: list[OpResult] = []
        for r in results:
            if isinstance(r, str):
                out.append(r)
            elif isinstance(r, ZnodeStat):
                out.append(to_store_stat(r))
            else:
                out.append(None)
        return out

    # --- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._closed or self._closing:
                return
            self._closing = True
        try:
            self._client.stop()  # ends the session: the server deletes our ephemerals
        except Exception:
            log.exception("stopping the ZooKeeper client failed")
        try:
            self._client.close()
        except Exception:
            log.debug("closing the ZooKeeper client failed", exc_info=True)
        with self._lock:
            self._closed = True
            self._watches.clear()
            self._watched.clear()
        dispatcher = getattr(self, "_dispatcher", None)
        if dispatcher is not None:
            self._events.put(("stop", None))
            if dispatcher is not threading.current_thread():
                dispatcher.join(5.0)

    def __repr__(self) -> str:
        return f"ZooKeeperStore({self._connect!r}, session=0x{self.session_id:x})"
