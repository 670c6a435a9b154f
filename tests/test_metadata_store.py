"""EmbeddedStore: ZooKeeper semantics, durability, sessions and watches."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.errors import (
    BadVersionError,
    InvalidPathError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreClosedError,
    StoreLockedError,
)
from kafkapy.metadata.store import CheckOp, CreateOp, DeleteOp, EventType, SetOp, WatchEvent


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "meta" / "__metadata.db"


@pytest.fixture
def store(db: Path):
    s = EmbeddedStore(db)
    yield s
    s.close()


def test_root_exists_and_create_get(store: EmbeddedStore) -> None:
    assert store.exists("/") is not None
    assert store.create("/a", b"x") == "/a"
    data, stat = store.get("/a")
    assert data == b"x"
    assert (stat.version, stat.cversion, stat.num_children, stat.ephemeral_owner) == (0, 0, 0, 0)
    assert stat.data_length == 1 and stat.ctime == stat.mtime > 0
    assert store.exists("/missing") is None
    with pytest.raises(NoNodeError):
        store.get("/missing")


def test_create_errors_and_makepath(store: EmbeddedStore) -> None:
    store.create("/a")
    with pytest.raises(NodeExistsError):
        store.create("/a")
    with pytest.raises(NoNodeError):
        store.create("/x/y")
    assert store.create("/x/y/z", b"d", makepath=True) == "/x/y/z"
    assert store.get("/x/y")[0] == b""
    for bad in ("a", "/a/", "//a", "/a/./b", "/a/../b"):
        with pytest.raises(InvalidPathError):
            store.create(bad)


def test_set_versions(store: EmbeddedStore) -> None:
    store.create("/a", b"0")
    assert store.set("/a", b"1").version == 1
    assert store.set("/a", b"2", version=1).version == 2
    with pytest.raises(BadVersionError):
        store.set("/a", b"3", version=1)
    assert store.get("/a")[0] == b"2"
    with pytest.raises(NoNodeError):
        store.set("/nope", b"")


def test_delete(store: EmbeddedStore) -> None:
    store.create("/a/b/c", makepath=True)
    store.create("/a_b")  # shares a prefix but is not a descendant
    with pytest.raises(NotEmptyError):
        store.delete("/a")
    with pytest.raises(BadVersionError):
        store.delete("/a/b/c", version=3)
    store.delete("/a", recursive=True)
    assert store.exists("/a") is None and store.exists("/a/b/c") is None
    assert store.exists("/a_b") is not None
    with pytest.raises(NoNodeError):
        store.delete("/a")


def test_children_and_cversion(store: EmbeddedStore) -> None:
    store.create("/p")
    for name in ("b", "a", "c"):
        store.create(f"/p/{name}")
    store.delete("/p/c")
    assert store.children("/p") == ["a", "b"]
    stat = store.exists("/p")
    assert stat is not None and stat.cversion == 4 and stat.num_children == 2
    assert "p" in store.children("/")
    with pytest.raises(NoNodeError):
        store.children("/nope")


def test_sequential_names(store: EmbeddedStore) -> None:
    store.create("/q")
    store.create("/q/other")
    first = store.create("/q/item_", b"1", sequential=True)
    second = store.create("/q/item_", b"2", sequential=True)
    assert first == "/q/item_0000000001"
    assert second == "/q/item_0000000002"
    store.delete(second)
    assert store.create("/q/item_", sequential=True) == "/q/item_0000000003"


def test_ephemeral_rules(store: EmbeddedStore) -> None:
    store.create("/e", ephemeral=True)
    stat = store.exists("/e")
    assert stat is not None and stat.ephemeral_owner == store.session_id != 0
    with pytest.raises(NoChildrenForEphemeralsError):
        store.create("/e/child")


def test_ephemerals_removed_on_close(db: Path) -> None:
    s = EmbeddedStore(db)
    s.create("/brokers/ids", makepath=True)
    s.create("/brokers/ids/1", b"b", ephemeral=True)
    s.create("/persistent", b"p")
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreClosedError):
        s.get("/persistent")
    with EmbeddedStore(db) as s2:
        assert s2.exists("/brokers/ids/1") is None
        assert s2.get("/persistent")[0] == b"p"


def test_ephemerals_of_crashed_process_removed_at_open(db: Path) -> None:
    code = f"""
import os
from kafkapy.metadata.embedded import EmbeddedStore
s = EmbeddedStore({str(db)!r})
s.create('/eph', b'e', ephemeral=True)
s.create('/kept', b'k')
s.multi([])
os._exit(0)  # no close: a crash
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    with EmbeddedStore(db) as s:
        assert s.exists("/eph") is None
        assert s.get("/kept")[0] == b"k"
        assert s.exists("/").cversion >= 3  # type: ignore[union-attr]


def test_second_open_is_refused(store: EmbeddedStore, db: Path) -> None:
    with pytest.raises(StoreLockedError):
        EmbeddedStore(db)


def test_session_ids_differ(db: Path) -> None:
    with EmbeddedStore(db) as s:
        first = s.session_id
    with EmbeddedStore(db) as s:
        assert s.session_id != first


def test_multi_applies_all(store: EmbeddedStore) -> None:
    store.create("/m", b"0")
    results = store.multi([
        CreateOp("/m/a", b"a"),
        CreateOp("/m/seq_", sequential=True),
        SetOp("/m", b"1", version=0),
        CheckOp("/m", version=1),
        DeleteOp("/m/a"),
    ])
    assert results[0] == "/m/a" and results[1] == "/m/seq_0000000001"
    assert results[2].version == 1  # type: ignore[union-attr]
    assert results[3:] == [None, None]
    assert store.children("/m") == ["seq_0000000001"]


def test_multi_rolls_back(store: EmbeddedStore) -> None:
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


def test_watches_fire(store: EmbeddedStore) -> None:
    seen: list[WatchEvent] = []
    handle = store.add_watch("/w", seen.append)
    store.add_watch("/", seen.append)
    store.create("/w")
    store.set("/w", b"x")
    store.create("/w/c")
    store.delete("/w/c")
    store.delete("/w")
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
    store.create("/w")
    assert seen == [WatchEvent(EventType.CHILD, "/")]


def test_watch_not_fired_on_rollback_and_callback_errors_contained(store: EmbeddedStore) -> None:
    seen: list[WatchEvent] = []

    def boom(event: WatchEvent) -> None:
        raise RuntimeError("callback bug")

    store.add_watch("/w", boom)
    store.add_watch("/w", seen.append)
    with pytest.raises(NodeExistsError):
        store.multi([CreateOp("/w"), CreateOp("/w")])
    assert seen == []
    store.create("/w")  # boom raises; the write and the other callback still happen
    assert seen == [WatchEvent(EventType.CREATED, "/w")]


def test_callback_may_use_store(store: EmbeddedStore) -> None:
    got: list[bytes] = []
    store.add_watch("/w", lambda ev: got.append(store.get("/w")[0]))
    store.create("/w", b"v")
    assert got == [b"v"]


def test_persistence_across_reopen(db: Path) -> None:
    with EmbeddedStore(db) as s:
        s.create("/a", b"1")
        s.set("/a", b"2")
    with EmbeddedStore(db) as s:
        data, stat = s.get("/a")
        assert data == b"2" and stat.version == 1
        assert stat.mzxid > stat.czxid


def test_threads(store: EmbeddedStore) -> None:
    store.create("/t")

    def work(i: int) -> None:
        for j in range(20):
            store.create(f"/t/n{i}-{j}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.children("/t")) == 80
