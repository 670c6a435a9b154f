"""The metadata store interface: a ZooKeeper-shaped tree of znodes.

Every store (the embedded SQLite one, and the ZooKeeper/kazoo one) implements :class:`MetadataStore`
with ZooKeeper's semantics:

* paths are absolute (``/a/b``), the root ``/`` always exists, a parent must exist before a child;
* each znode has data (bytes) and a :class:`ZNodeStat`; ``version`` counts data changes,
  ``cversion`` counts child creations/deletions (it also numbers sequential children);
* ``set``/``delete``/``check`` take an expected version, ``-1`` meaning "any";
* ephemeral znodes belong to the store's session and vanish when the session ends; they have no
  children;
* ``multi`` applies a list of operations atomically: all of them or none;
* watches are persistent, in-process callbacks receiving a :class:`WatchEvent` for the watched
  path's creation, deletion, data change, or a change to its list of children. Callbacks run after
  the change is durable, on whichever thread made it (or the store's own thread): keep them short
  and hand work over (for example with ``trio.from_thread``/``trio.lowlevel.TrioToken``).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkapy.metadata.errors import InvalidPathError, NodeExistsError, NoNodeError

ANY_VERSION = -1


@dataclass(frozen=True, slots=True)
class ZNodeStat:
    """A znode's metadata, named like ZooKeeper's Stat (snake_case)."""

    version: int
    cversion: int
    ctime: int  # milliseconds since the epoch
    mtime: int
    ephemeral_owner: int  # session id owning an ephemeral node, 0 for persistent nodes
    num_children: int
    data_length: int = 0
    aversion: int = 0
    czxid: int = 0
    mzxid: int = 0
    pzxid: int = 0


class EventType(enum.Enum):
    """Kinds of watch notifications (ZooKeeper's NodeCreated, NodeDeleted, ...)."""

    CREATED = "created"
    DELETED = "deleted"
    CHANGED = "changed"
    CHILD = "child"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """A change to a watched path."""

    type: EventType
    path: str


WatchCallback = Callable[[WatchEvent], None]


# --- multi operations ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateOp:
    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequential: bool = False


@dataclass(frozen=True, slots=True)
class SetOp:
    path: str
    data: bytes
    version: int = ANY_VERSION


@dataclass(frozen=True, slots=True)
class DeleteOp:
    path: str
    version: int = ANY_VERSION


@dataclass(frozen=True, slots=True)
class CheckOp:
    path: str
    version: int


Op = CreateOp | SetOp | DeleteOp | CheckOp
#: result of each op in ``multi``: created path, new stat, or None (delete, check)
OpResult = str | ZNodeStat | None


# --- paths ---------------------------------------------------------------------------------------


def validate_path(path: str) -> str:
    """Return ``path`` if it is a valid absolute znode path, else raise InvalidPathError."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidPathError(f"znode path must start with '/': {path!r}", path)
    if path == "/":
        return path
    if path.endswith("/"):
        raise InvalidPathError(f"znode path must not end with '/': {path!r}", path)
    for part in path[1:].split("/"):
        if part in ("", ".", ".."):
            raise InvalidPathError(f"invalid znode path element {part!r} in {path!r}", path)
        if "\x00" in part:
            raise InvalidPathError(f"null character in znode path {path!r}", path)
    return path


def parent_of(path: str) -> str:
    """The parent path of ``path`` ("/" for top-level nodes)."""
    head = path.rsplit("/", 1)[0]
    return head or "/"


def join(*parts: str | int) -> str:
    """Join path elements below the root: join("brokers", "ids", 1) == "/brokers/ids/1"."""
    return "/" + "/".join(str(p).strip("/") for p in parts)


def sequential_name(path: str, sequence: int) -> str:
    """ZooKeeper's name for a sequential znode: the requested path plus a 10-digit counter."""
    return f"{path}{sequence:010d}"


# --- the interface -------------------------------------------------------------------------------


class MetadataStore(abc.ABC):
    """A ZooKeeper-semantics znode store. Implementations: EmbeddedStore, (later) ZooKeeperStore."""

    @property
    @abc.abstractmethod
    def session_id(self) -> int:
        """This store's session id; the ``ephemeral_owner`` of the ephemeral nodes it creates."""

    @abc.abstractmethod
    def get(self, path: str) -> tuple[bytes, ZNodeStat]:
        """Data and stat of ``path``; NoNodeError if absent."""

    @abc.abstractmethod
    def exists(self, path: str) -> ZNodeStat | None:
        """Stat of ``path`` or None."""

    @abc.abstractmethod
    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequential: bool = False,
        makepath: bool = False,
    ) -> str:
        """Create ``path`` and return the created path (with its suffix when sequential).

        NodeExistsError if present; NoNodeError if the parent is missing (unless ``makepath``, which
        creates missing ancestors as empty persistent nodes).
        """

    @abc.abstractmethod
    def set(self, path: str, data: bytes, version: int = ANY_VERSION) -> ZNodeStat:
        """Replace the data of ``path``; BadVersionError when ``version`` is not current."""

    @abc.abstractmethod
    def delete(self, path: str, version: int = ANY_VERSION, recursive: bool = False) -> None:
        """Delete ``path`` (NotEmptyError if it has children and not ``recursive``)."""

    @abc.abstractmethod
    def children(self, path: str) -> list[str]:
        """Names (not paths) of the children of ``path``, sorted; NoNodeError if absent."""

    @abc.abstractmethod
    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        """Apply ``ops`` atomically. On failure nothing is applied and the failing op's error is
        raised with ``op_index`` set."""

    @abc.abstractmethod
    def add_watch(self, path: str, callback: WatchCallback) -> int:
        """Register a persistent watch on ``path``; returns a handle for remove_watch."""

    @abc.abstractmethod
    def remove_watch(self, handle: int) -> None:
        """Forget a watch (unknown handles are ignored)."""

    @abc.abstractmethod
    def close(self) -> None:
        """End the session: its ephemeral nodes are deleted. Idempotent."""

    # --- helpers built on the primitives (stores may override with faster versions) ----------

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its ancestors as empty persistent nodes if missing."""
        if self.exists(path) is None:
            try:
                self.create(path, b"", makepath=True)
            except NodeExistsError:
                pass

    def get_or_none(self, path: str) -> tuple[bytes, ZNodeStat] | None:
        """Like get, but None when the node does not exist."""
        try:
            return self.get(path)
        except NoNodeError:
            return None

    def __enter__(self) -> MetadataStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
