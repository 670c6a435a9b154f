"""The MetadataStore contract, run against every store: EmbeddedStore and ZooKeeperStore.

The ZooKeeper variant runs on a real server (one per module), each test in a chroot of its own,
so "/" is a fresh, empty root for every test exactly as in a new embedded store.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafkapy.metadata import acls
from kafkapy.metadata import client_quotas as cq
from kafkapy.metadata import znodes as zn
from kafkapy.metadata.acl_model import (
    AccessControlEntry,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.config_notifications import ABSENT, ConfigChangeFeed
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.errors import (
    BadVersionError,
    InvalidPathError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreClosedError,
    StoreError,
)
from kafkapy.metadata.store import (
    CheckOp,
    CreateOp,
    DeleteOp,
    EventType,
    MetadataStore,
    SetOp,
    WatchEvent,
)
from kafkapy.metadata.zookeeper import ZooKeeperStore

_chroots = itertools.count(1)


class Backend:
    """Opens sessions of one store kind on one shared tree."""

    def __init__(self, name: str, opener: Callable[[], MetadataStore]) -> None:
        self.name = name
        self._opener = opener
        self.opened: list[MetadataStore] = []

    def open(self) -> MetadataStore:
        store = self._opener()
        self.opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


def settle(store: MetadataStore) -> None:
    """Let asynchronous watch delivery (ZooKeeper) catch up; a no-op for the embedded store."""
    flush = getattr(store, "flush_watches", None)
    if flush is not None:
        assert flush(10.0)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


@pytest.fixture(params=["embedded", "zookeeper"])
def backend(request, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "embedded":
        db = tmp_path / "meta" / "__metadata.db"
        b = Backend("embedded", lambda: EmbeddedStore(db))
    else:
        zk = request.getfixturevalue("zookeeper_shared")
        connect = f"{zk.connect_string}/contract{next(_chroots)}"
        b = Backend("zookeeper", lambda: ZooKeeperStore(connect, session_timeout_ms=6000))
    try:
        yield b
    finally:
        b.close_all()


@pytest.fixture
def store(backend: Backend) -> MetadataStore:
    return backend.open()


def test_root_exists_and_create_get(store: MetadataStore) -> None:
    assert store.exists("/") is not None
    assert store.create("/a", b"x") == "/a"
    data, stat = store.get("/a")
    assert data == b"x"
    assert (stat.version, stat.cversion, stat.num_children, stat.ephemeral_owner) == (0, 0, 0, 0)
    assert stat.data_length == 1 and stat.ctime == stat.mtime > 0
    assert stat.czxid == stat.mzxid > 0
    assert store.exists("/missing") is None
    with pytest.raises(NoNodeError):
        store.get("/missing")
    assert store.get_or_none("/missing") is None


def test_create_errors_and_makepath(store: MetadataStore) -> None:
    store.create("/a")
    with pytest.raises(NodeExistsError):
        store.create("/a")
    with pytest.raises(NodeExistsError):
        store.create("/")
    with pytest.raises(NoNodeError):
        store.create("/x/y")
    assert store.create("/x/y/z", b"d", makepath=True) == "/x/y/z"
    assert store.get("/x/y")[0] == b""
    for bad in ("a", "/a/", "//a", "/a/./b", "/a/../b"):
        with pytest.raises(InvalidPathError):
            store.create(bad)
    store.ensure_path("/x/y/z")
    store.ensure_path("/e/f")
    assert store.exists("/e/f") is not None


def test_set_versions(store: MetadataStore) -> None:
    store.create("/a", b"0")
    assert store.set("/a", b"1").version == 1
    assert store.set("/a", b"2", version=1).version == 2
    with pytest.raises(BadVersionError):
        store.set("/a", b"3", version=1)
    data, stat = store.get("/a")
    assert data == b"2" and stat.mzxid > stat.czxid
    with pytest.raises(NoNodeError):
        store.set("/nope", b"")


def test_delete(store: MetadataStore) -> None:
    store.create("/a/b/c", makepath=True)
    store.create("/a/b2")
    store.create("/a_b")  # shares a prefix but is not a descendant
    with pytest.raises(NotEmptyError):
        store.delete("/a")
    with pytest.raises(BadVersionError):
        store.delete("/a/b/c", version=3)
    with pytest.raises(BadVersionError):
        store.delete("/a", version=3, recursive=True)
    assert store.exists("/a/b/c") is not None
    store.delete("/a", recursive=True)
    assert store.exists("/a") is None and store.exists("/a/b/c") is None
    assert store.exists("/a_b") is not None
    with pytest.raises(NoNodeError):
        store.delete("/a")
    with pytest.raises(NoNodeError):
        store.delete("/a", recursive=True)
    with pytest.raises(StoreError):
        store.delete("/", recursive=True)
    assert store.exists("/") is not None


def test_children_and_cversion(store: MetadataStore) -> None:
    store.create("/p")
    for name in ("b", "a", "c"):
        store.create(f"/p/{name}")
    store.delete("/p/c")
    assert store.children("/p") == ["a", "b"]
    stat = store.exists("/p")
    assert stat is not None and stat.cversion == 4 and stat.num_children == 2
    assert store.children("/") == ["p"]
    with pytest.raises(NoNodeError):
        store.children("/nope")


def test_sequential_names(backend: Backend, store: MetadataStore) -> None:
    store.create("/q")
    store.create("/q/other")
    first = store.create("/q/item_", b"1", sequential=True)
    second = store.create("/q/item_", b"2", sequential=True)
    assert first == "/q/item_0000000001"
    assert second == "/q/item_0000000002"
    assert store.get(first)[0] == b"1"
    store.delete(second)
    # ZooKeeper numbers sequential children by the count of child *creations*; the reported
    # cversion counts creations and deletions (it is 2 * creations - num_children)
    stat = store.exists("/q")
    assert stat is not None and (stat.cversion, stat.num_children) == (4, 2)
    third = store.create("/q/item_", sequential=True)
    assert third == "/q/item_0000000003"


def test_ephemeral_rules(store: MetadataStore) -> None:
    store.create("/e", ephemeral=True)
    stat = store.exists("/e")
    assert stat is not None and stat.ephemeral_owner == store.session_id != 0
    with pytest.raises(NoChildrenForEphemeralsError):
        store.create("/e/child")
    store.create("/ids", makepath=True)
    path = store.create("/ids/seq-", ephemeral=True, sequential=True)
    assert path == "/ids/seq-0000000000"
    assert store.exists(path).ephemeral_owner == store.session_id  # type: ignore[union-attr]


def test_ephemerals_removed_when_session_closes(backend: Backend) -> None:
    s = backend.open()
    s.create("/brokers/ids", makepath=True)
    s.create("/brokers/ids/1", b"b", ephemeral=True)
    s.create("/persistent", b"p")
    first_session = s.session_id
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreClosedError):
        s.get("/persistent")
    with pytest.raises(StoreClosedError):
        s.create("/other")
    s2 = backend.open()
    assert s2.session_id != first_session
    assert s2.exists("/brokers/ids/1") is None
    assert s2.children("/brokers/ids") == []
    assert s2.get("/persistent")[0] == b"p"


def test_multi_applies_all(store: MetadataStore) -> None:
    store.create("/m", b"0")
    assert store.multi([]) == []
    results = store.multi([
        CreateOp("/m/a", b"a"),
        CreateOp("/m/seq_", sequential=True),
        SetOp("/m", b"1", version=0),
        CheckOp("/m", version=1),
        DeleteOp("/m/a"),
        CreateOp("/m/eph", ephemeral=True),
    ])
    assert results[0] == "/m/a" and results[1] == "/m/seq_0000000001"
    assert results[2].version == 1  # type: ignore[union-attr]
    assert results[3:5] == [None, None] and results[5] == "/m/eph"
    assert store.children("/m") == ["eph", "seq_0000000001"]
    assert store.exists("/m/eph").ephemeral_owner == store.session_id  # type: ignore[union-attr]


def test_multi_rolls_back(store: MetadataStore) -> None:
    store.create("/m", b"0")
    with pytest.raises(BadVersionError) as info:
        store.multi([CreateOp("/m/a"), SetOp("/m", b"1"), CheckOp("/m", version=0)])
    assert info.value.op_index == 2
    assert store.exists("/m/a") is None
    data, stat = store.get("/m")
    assert data == b"0" and stat.version == 0 and stat.cversion == 0
    store.create("/m/a")  # still usable after the rollback
    with pytest.raises(NodeExistsError) as info2:
        store.multi([CreateOp("/m/b"), CreateOp("/m/a")])
    assert info2.value.op_index == 1 and store.exists("/m/b") is None
    with pytest.raises(NoNodeError) as info3:
        store.multi([CreateOp("/m/c"), DeleteOp("/m/zz"), SetOp("/m", b"2")])
    assert info3.value.op_index == 1 and store.exists("/m/c") is None
    with pytest.raises(NotEmptyError) as info4:
        store.multi([CheckOp("/m", 0), DeleteOp("/m")])
    assert info4.value.op_index == 1
    with pytest.raises(NoNodeError) as info5:
        store.multi([CreateOp("/nope/x")])
    assert info5.value.op_index == 0
    with pytest.raises(StoreError) as info6:
        store.multi([CreateOp("/m/d"), DeleteOp("/")])
    assert info6.value.op_index == 1 and store.exists("/") is not None
    assert store.children("/m") == ["a"]


def test_watches_fire(store: MetadataStore) -> None:
    seen: list[WatchEvent] = []
    handle = store.add_watch("/w", seen.append)
    store.add_watch("/", seen.append)
    store.create("/w")
    store.set("/w", b"x")
    store.create("/w/c")
    store.delete("/w/c")
    store.delete("/w")
    settle(store)
    assert seen == [
        WatchEvent(EventType.CREATED, "/w"),
        WatchEvent(EventType.CHILD, "/"),
        WatchEvent(EventType.CHANGED, "/w"),
        WatchEvent(EventType.CHILD, "/w"),
        WatchEvent(EventType.CHILD, "/w"),
        WatchEvent(EventType.DELETED, "/w"),
        WatchEvent(EventType.CHILD, "/"),
    ]
    seen.clear()
    store.remove_watch(handle)
    store.remove_watch(handle)  # unknown handles are ignored
    store.create("/w")
    store.set("/w", b"y")
    settle(store)
    assert seen == [WatchEvent(EventType.CHILD, "/")]


def test_two_watches_on_one_path_and_recursive_delete(store: MetadataStore) -> None:
    first: list[WatchEvent] = []
    second: list[WatchEvent] = []
    h1 = store.add_watch("/t/a/b", first.append)
    store.add_watch("/t/a/b", second.append)
    store.create("/t/a/b", makepath=True)
    store.delete("/t", recursive=True)
    settle(store)
    expected = [WatchEvent(EventType.CREATED, "/t/a/b"), WatchEvent(EventType.DELETED, "/t/a/b")]
    assert first == expected and second == expected
    store.remove_watch(h1)  # the other watch on the path stays
    store.create("/t/a/b", makepath=True)
    settle(store)
    assert len(first) == 2 and second[-1] == WatchEvent(EventType.CREATED, "/t/a/b")


def test_watch_sees_other_sessions(backend: Backend) -> None:
    watcher = backend.open()
    seen: list[WatchEvent] = []
    watcher.add_watch("/shared", seen.append)
    if backend.name == "embedded":
        writer = watcher  # one session per file: the watcher's own writes are the contract
    else:
        writer = backend.open()
    writer.create("/shared", b"1")
    writer.set("/shared", b"2")
    wait_for(lambda: len(seen) == 2)
    assert [e.type for e in seen] == [EventType.CREATED, EventType.CHANGED]


def test_watch_not_fired_on_rollback_and_callback_errors_contained(store: MetadataStore) -> None:
    seen: list[WatchEvent] = []

    def boom(event: WatchEvent) -> None:
        raise RuntimeError("callback bug")

    store.add_watch("/w", boom)
    store.add_watch("/w", seen.append)
    with pytest.raises(NodeExistsError):
        store.multi([CreateOp("/w"), CreateOp("/w")])
    settle(store)
    assert seen == []
    store.create("/w")  # boom raises; the write and the other callback still happen
    settle(store)
    assert seen == [WatchEvent(EventType.CREATED, "/w")]


def test_callback_may_use_store(store: MetadataStore) -> None:
    got: list[bytes] = []
    store.add_watch("/w", lambda ev: got.append(store.get("/w")[0]))
    store.create("/w", b"v")
    settle(store)
    assert got == [b"v"]


def test_watches_stop_at_close(backend: Backend) -> None:
    s = backend.open()
    seen: list[WatchEvent] = []
    s.add_watch("/w", seen.append)
    s.close()
    s2 = backend.open()
    s2.create("/w")
    settle(s2)
    time.sleep(0.2)
    assert seen == []


def test_threads(store: MetadataStore) -> None:
    store.create("/t")
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(20):
                store.create(f"/t/n{i}-{j}")
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store.children("/t")) == 80
    assert store.exists("/t").cversion == 80  # type: ignore[union-attr]


# --- config change notifications: /config/changes/config_change_NNNNNNNNNN ----------------------


def _cluster(store: MetadataStore, *topics: str) -> ClusterMetadata:
    cluster = ClusterMetadata(store)
    cluster.ensure_persistent_paths()
    for t in topics:
        cluster.create_topic(t, {0: [1]})
    return cluster


def _changes(store: MetadataStore) -> list[str]:
    return store.children(zn.CONFIG_CHANGES.path())


def test_config_writes_post_sequential_notifications(store: MetadataStore) -> None:
    cluster = _cluster(store, "orders")
    assert _changes(store) == []  # creating a topic posts none (brokers read its configs)
    zxid = cluster.set_topic_configs("orders", {"retention.ms": "1000"})
    cluster.set_broker_configs("<default>", {"log.retention.ms": "5"})
    cluster.set_broker_configs(2, {"log.cleaner.threads": "2"})
    cq.write(store, {"user": "alice", "client-id": None}, {"producer_byte_rate": "1024"})
    names = _changes(store)
    assert names == [f"config_change_{i:010d}" for i in range(4)]
    assert [zn.CONFIG_CHANGE_NOTIFICATION.sequence(n) for n in names] == [0, 1, 2, 3]
    assert [store.get(f"/config/changes/{n}")[0] for n in names] == [
        b'{"version":2,"entity_path":"topics/orders"}',
        b'{"version":2,"entity_path":"brokers/<default>"}',
        b'{"version":2,"entity_path":"brokers/2"}',
        b'{"version":2,"entity_path":"users/alice/clients/<default>"}',
    ]
    # the returned zxid is the config znode's, and topic reads carry it
    assert store.exists("/config/topics/orders").mzxid == zxid  # type: ignore[union-attr]
    assert cluster.get_topic("orders").configs_zxid == zxid  # type: ignore[union-attr]
    created = cluster.set_broker_configs(7, {"log.cleaner.threads": "1"})  # znode created
    assert store.exists("/config/brokers/7").mzxid == created  # type: ignore[union-attr]


def test_config_change_watch_fires_for_notifications(store: MetadataStore) -> None:
    cluster = _cluster(store, "orders")
    events: list[WatchEvent] = []
    store.add_watch(zn.CONFIG_CHANGES.path(), events.append)
    cluster.set_topic_configs("orders", {"cleanup.policy": "compact"})
    settle(store)
    assert WatchEvent(EventType.CHILD, "/config/changes") in events


def test_config_change_feed_takes_new_notifications_once(store: MetadataStore) -> None:
    cluster = _cluster(store, "a", "b")
    feed = ConfigChangeFeed(store)
    assert feed.poll() == [] and feed.last_sequence == -1
    cluster.set_topic_configs("a", {"x": "1"})
    cluster.set_topic_configs("b", {"y": "2"})
    last_a = cluster.set_topic_configs("a", {"x": "3"})
    changes = feed.poll()
    # one change per entity, at its last place, with the configs read after the notification
    assert [(c.entity_path, c.configs) for c in changes] == [
        ("topics/b", {"y": "2"}),
        ("topics/a", {"x": "3"}),
    ]
    assert changes[1].zxid == last_a and feed.last_sequence == 2
    assert feed.poll() == []
    # a broker starting now takes every notification still present
    assert [c.entity_path for c in ConfigChangeFeed(store).poll()] == ["topics/b", "topics/a"]
    cluster.set_broker_configs("<default>", {"log.retention.ms": "9"})
    cq.write(store, {"client-id": "c 1"}, {"consumer_byte_rate": "10"})
    store.create(
        zn.CONFIG_CHANGE_NOTIFICATION.path(),
        zn.CONFIG_CHANGE_NOTIFICATION.encode("topics/gone"),
        sequential=True,
    )
    store.create(zn.CONFIG_CHANGE_NOTIFICATION.path(), b"not json", sequential=True)
    store.create("/config/changes/unrelated")  # not a notification: ignored
    changes = feed.poll()
    assert [(c.entity_type, c.entity_name, c.configs) for c in changes] == [
        ("brokers", "<default>", {"log.retention.ms": "9"}),
        ("clients", "c%201", {"consumer_byte_rate": "10"}),
        ("topics", "gone", {}),
    ]
    assert changes[2].zxid == ABSENT and feed.last_sequence == 6


def test_config_change_feed_purges_expired_notifications(store: MetadataStore) -> None:
    cluster = _cluster(store, "a")
    cluster.set_topic_configs("a", {"x": "0"})
    time.sleep(0.05)
    cluster.set_topic_configs("a", {"x": "1"})
    cluster.set_topic_configs("a", {"x": "2"})
    first = f"/config/changes/{_changes(store)[0]}"
    ctime = store.exists(first).ctime  # type: ignore[union-attr]
    young = ConfigChangeFeed(store, expiration_ms=60_000, clock=lambda: ctime + 60_000)
    assert [c.configs for c in young.poll()] == [{"x": "2"}]
    assert len(_changes(store)) == 3  # nothing older than the expiration
    # 20 ms after the first expired, the others (50 ms younger) are not
    feed = ConfigChangeFeed(store, expiration_ms=20, clock=lambda: ctime + 21)
    assert [c.configs for c in feed.poll()] == [{"x": "2"}]
    assert _changes(store) == ["config_change_0000000001", "config_change_0000000002"]
    # sequence numbers keep counting creations after a purge
    cluster.set_topic_configs("a", {"x": "3"})
    assert _changes(store)[-1] == "config_change_0000000003"
    assert [c.configs for c in feed.poll()] == [{"x": "3"}]
    assert feed.purge(ctime + 10**9, [f"/config/changes/{n}" for n in _changes(store)]) == 3
    assert _changes(store) == []


# --- ACLs (kafkapy.metadata.acls): Kafka's /kafka-acl layout and change notifications -----------


def test_acls_are_stored_in_kafkas_layout_with_notifications(backend: Backend) -> None:
    store = backend.open()
    # another broker's session (the embedded store has one writer: the same session)
    other = backend.open() if backend.name == "zookeeper" else store
    acls.ensure_paths(store)
    feeds = acls.change_feeds(other)
    assert [f.poll() for f in feeds] == [[], []]
    alice_read = AccessControlEntry("User:alice", "*", AclOperation.READ, PermissionType.ALLOW)
    bob_deny = AccessControlEntry("User:bob", "10.0.0.1", AclOperation.WRITE, PermissionType.DENY)
    topic = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
    prefix = ResourcePattern(ResourceType.GROUP, "pay", PatternType.PREFIXED)
    acls.update_acls(store, topic, lambda cur: cur | {alice_read})
    before, after = acls.update_acls(store, topic, lambda cur: cur | {bob_deny})
    assert before == {alice_read} and after == {alice_read, bob_deny}
    acls.update_acls(store, prefix, lambda cur: cur | {alice_read})
    doc = json.loads(store.get("/kafka-acl/Topic/orders")[0])
    assert doc == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "Write",
         "host": "10.0.0.1"},
    ]}
    assert store.exists("/kafka-acl-extended/prefixed/Group/pay") is not None
    assert store.get("/kafka-acl-changes/acl_changes_0000000000")[0] == b"TOPIC:orders"
    assert json.loads(store.get("/kafka-acl-extended-changes/acl_changes_0000000000")[0]) == {
        "version": 1, "resourceType": "GROUP", "name": "pay", "patternType": "PREFIXED"}
    # the other broker: one change per pattern, with the ACLs as stored now
    assert [f.poll() for f in feeds] == [[(topic, after)], [(prefix, {alice_read})]]
    assert acls.read_all(other) == {topic: after, prefix: {alice_read}}
    # an unchanged set writes nothing; removing the last ACL deletes the znode
    acls.update_acls(store, topic, lambda cur: cur)
    acls.update_acls(store, prefix, lambda cur: frozenset())
    assert store.exists("/kafka-acl-extended/prefixed/Group/pay") is None
    assert [f.poll() for f in feeds] == [[], [(prefix, frozenset())]]
    assert acls.read_all(other) == {topic: after}


def test_acl_updates_retry_on_concurrent_writes(store: MetadataStore) -> None:
    acls.ensure_paths(store)
    topic = ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL)
    entries = [
        AccessControlEntry(f"User:u{i}", "*", AclOperation.READ, PermissionType.ALLOW)
        for i in range(8)
    ]
    errors: list[BaseException] = []

    def add(entry: AccessControlEntry) -> None:
        try:
            acls.update_acls(store, topic, lambda cur: cur | {entry})
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(e,)) for e in entries]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert acls.read_acls(store, topic)[0] == frozenset(entries)  # no write lost
