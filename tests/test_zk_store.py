"""ZooKeeperStore on a real ZooKeeper: chroot, connection errors, session expiry, reconnection
and watch re-synchronisation, an ensemble losing members, ClusterMetadata writing Kafka's tree,
and the test harness itself (no java process outlives it)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kafkapy.metadata import znodes as zn
from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.errors import (
    BrokerAlreadyRegisteredError,
    ControllerExistsError,
    InvalidPathError,
    NodeExistsError,
    StoreClosedError,
)
from kafkapy.metadata.models import PartitionState
from kafkapy.metadata.store import EventType, WatchEvent
from kafkapy.metadata.uuids import uuid_to_base64
from kafkapy.metadata.zookeeper import (
    ZooKeeperConfigError,
    ZooKeeperConnectionError,
    ZooKeeperStore,
    parse_connect_string,
)
from kafkapy.testing import free_port
from kafkapy.testing.zookeeper import ZooKeeperEnsemble, ZooKeeperServer, expire_session


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not reached within {timeout}s"
        time.sleep(0.02)


def raw_client(connect: str) -> KazooClient:
    client = KazooClient(hosts=connect, timeout=10.0)
    client.start(timeout=10.0)
    return client


def java_pids_in(directory: Path) -> list[int]:
    """java processes whose command line mentions ``directory`` (ours only: unique tmp dirs)."""
    done = subprocess.run(["pgrep", "-f", str(directory)], capture_output=True, text=True)
    return [int(p) for p in done.stdout.split()]


# --- connect string and connection errors -----------------------------------------------------


def test_parse_connect_string() -> None:
    assert parse_connect_string("h:1") == ("h:1", "")
    assert parse_connect_string("h:1,g:2/kafka") == ("h:1,g:2", "/kafka")
    assert parse_connect_string("h:1/a/b/") == ("h:1", "/a/b")
    assert parse_connect_string("h:1/") == ("h:1", "")
    for bad in ("", "  ", "/chroot"):
        with pytest.raises(ValueError):
            parse_connect_string(bad)
    with pytest.raises(InvalidPathError):
        parse_connect_string("h:1/a//b")
    with pytest.raises(ZooKeeperConfigError, match="invalid zookeeper.connect 'h:abc'"):
        ZooKeeperStore("h:abc")


def test_connection_timeout_names_the_connect_string() -> None:
    connect = f"127.0.0.1:{free_port()}/kafkapy"
    started = time.monotonic()
    with pytest.raises(ZooKeeperConnectionError) as info:
        ZooKeeperStore(connect, session_timeout_ms=6000, connection_timeout_ms=1500)
    elapsed = time.monotonic() - started
    assert connect in str(info.value) and "Timed out" in str(info.value)
    assert 1.0 < elapsed < 10.0
    time.sleep(0.5)
    leftovers = [t.name for t in threading.enumerate() if "kazoo" in t.name.lower()]
    assert not any("kafkapy-zk" in t.name for t in threading.enumerate())
    assert len(leftovers) <= 2  # kazoo may leave an idle daemon worker; no reconnect loop


# --- chroot ------------------------------------------------------------------------------------


def test_chroot_created_and_isolating(zookeeper: ZooKeeperServer) -> None:
    raw = raw_client(zookeeper.connect_string)
    try:
        assert raw.exists("/kafka/cluster1") is None
        with ZooKeeperStore(zookeeper.connect_string + "/kafka/cluster1") as store:
            assert store.chroot == "/kafka/cluster1"
            assert raw.exists("/kafka/cluster1") is not None
            store.create("/brokers/ids", b"x", makepath=True)
            assert raw.get("/kafka/cluster1/brokers/ids")[0] == b"x"
            assert store.children("/") == ["brokers"]
            assert store.exists("/kafka") is None  # nothing outside the chroot is visible
            seen: list[WatchEvent] = []
            store.add_watch("/", seen.append)
            raw.create("/kafka/cluster1/zz")
            wait_for(lambda: seen == [WatchEvent(EventType.CHILD, "/")], what="chroot event")
        with ZooKeeperStore(zookeeper.connect_string + "/kafka/cluster2") as other:
            assert other.children("/") == []
        assert sorted(raw.get_children("/kafka")) == ["cluster1", "cluster2"]
    finally:
        raw.stop()
        raw.close()


def test_one_server_side_watch_per_path_removed_with_the_last_handle(
    zookeeper: ZooKeeperServer,
) -> None:
    with ZooKeeperStore(zookeeper.connect_string + "/c") as store:
        h1 = store.add_watch("/w", lambda e: None)
        h2 = store.add_watch("/w", lambda e: None)
        store.add_watch("/x", lambda e: None)
        watched = zookeeper.four_letter("wchp")  # watches by path, as the server sees them
        assert watched.count("/c/w\n") == 1 and "/c/x\n" in watched
        store.remove_watch(h1)
        assert "/c/w\n" in zookeeper.four_letter("wchp")
        store.remove_watch(h2)
        watched = zookeeper.four_letter("wchp")
        assert "/c/w\n" not in watched and "/c/x\n" in watched
    # closing the session drops its last watch; the server does that as it closes the
    # connection, which may come just after the close reply: wait for it, a few seconds at most
    deadline = time.monotonic() + 5
    while "/c/x" in zookeeper.four_letter("wchp") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "/c/x" not in zookeeper.four_letter("wchp")


# --- sessions ----------------------------------------------------------------------------------


def test_ephemeral_visible_to_other_sessions_until_close(zookeeper: ZooKeeperServer) -> None:
    connect = zookeeper.connect_string + "/kafkapy"
    with ZooKeeperStore(connect) as a, ZooKeeperStore(connect) as b:
        a.create("/e", b"a", ephemeral=True)
        stat = b.exists("/e")
        assert stat is not None and stat.ephemeral_owner == a.session_id != b.session_id
        with pytest.raises(NodeExistsError):
            b.create("/e", ephemeral=True)
        seen: list[WatchEvent] = []
        b.add_watch("/e", seen.append)
        a.close()
        assert b.exists("/e") is None  # gone as soon as close() returns
        wait_for(lambda: seen == [WatchEvent(EventType.DELETED, "/e")], what="DELETED event")
        with pytest.raises(StoreClosedError):
            a.exists("/e")


def test_session_expiry_then_new_session(zookeeper: ZooKeeperServer) -> None:
    connect = zookeeper.connect_string + "/kafkapy"
    store = ZooKeeperStore(connect, session_timeout_ms=4000)
    observer = ZooKeeperStore(connect)
    try:
        lost = threading.Event()
        reconnects: list[bool] = []
        seen: list[WatchEvent] = []
        store.on_session_lost(lost.set)

        def reregister(new_session: bool) -> None:
            if new_session:
                store.create("/brokers/ids/0", b"again", ephemeral=True)
            reconnects.append(new_session)  # after the re-registration, which the test reads

        store.on_reconnected(reregister)
        store.create("/brokers/ids/0", b"first", ephemeral=True, makepath=True)
        store.add_watch("/brokers/ids/0", seen.append)
        old_session = store.session_id
        session_id, password = store.client.client_id
        expire_session(zookeeper.connect_string, session_id, password)
        assert lost.wait(20), "session loss not reported"
        wait_for(lambda: reconnects == [True], what="reconnection with a new session")
        assert store.session_id not in (0, old_session)
        data, stat = observer.get("/brokers/ids/0")
        assert data == b"again" and stat.ephemeral_owner == store.session_id
        # the watch came back with the new session; the deletion it missed was synthesized
        store.set("/brokers/ids/0", b"changed")
        store.flush_watches()
        assert seen[0] == WatchEvent(EventType.DELETED, "/brokers/ids/0")
        assert WatchEvent(EventType.CREATED, "/brokers/ids/0") in seen
        assert seen[-1] == WatchEvent(EventType.CHANGED, "/brokers/ids/0")
    finally:
        store.close()
        observer.close()


def _block_dispatcher(store: ZooKeeperStore, path: str) -> threading.Event:
    """Hold the store's event thread inside a watch callback until the returned event is set."""
    release = threading.Event()
    entered = threading.Event()

    def blocker(event: WatchEvent) -> None:
        entered.set()
        release.wait(60)

    store.add_watch(path, blocker)
    store.create(path)
    assert entered.wait(10)
    return release


def test_reconnect_same_session_resyncs_missed_changes(tmp_path: Path) -> None:
    server = ZooKeeperServer(tmp_path / "zk").start()
    try:
        connect = server.connect_string + "/kafkapy"
        store = ZooKeeperStore(connect, session_timeout_ms=20000)
        try:
            store.create("/w", b"0")
            store.create("/eph", ephemeral=True)
            session = store.session_id
            seen: list[WatchEvent] = []
            reconnects: list[bool] = []
            store.add_watch("/w", seen.append)
            store.on_reconnected(reconnects.append)
            release = _block_dispatcher(store, "/blocker")
            server.restart()  # same port and data: the session survives
            wait_for(lambda: store.connected, what="kazoo reconnection")
            # changed while the store's server-side watch is not re-established yet
            writer = ZooKeeperStore(connect)
            writer.set("/w", b"1")
            writer.create("/w/child")
            writer.close()
            release.set()
            wait_for(lambda: reconnects == [False], what="on_reconnected(False)")
            assert store.session_id == session
            assert store.exists("/eph").ephemeral_owner == session  # type: ignore[union-attr]
            store.flush_watches()
            assert seen == [WatchEvent(EventType.CHANGED, "/w"), WatchEvent(EventType.CHILD, "/w")]
            store.delete("/w/child")  # live events flow again
            store.flush_watches()
            assert seen[-1] == WatchEvent(EventType.CHILD, "/w")
        finally:
            store.close()
    finally:
        server.stop()


def test_calls_wait_for_a_restarting_server(tmp_path: Path) -> None:
    server = ZooKeeperServer(tmp_path / "zk").start()
    try:
        store = ZooKeeperStore(server.connect_string, session_timeout_ms=20000)
        try:
            store.create("/a", b"0")
            server.stop()
            result: list[object] = []
            t = threading.Thread(target=lambda: result.append(store.set("/a", b"1").version))
            t.start()
            time.sleep(0.5)
            assert t.is_alive()  # blocked, waiting for ZooKeeper
            server.start()
            t.join(30)
            assert result == [1]
            server.stop()
            store._connection_timeout_ms = 1000  # give up fast while it is down
            with pytest.raises(ZooKeeperConnectionError, match="unreachable for 1000 ms"):
                store.get("/a")
        finally:
            store.close()
    finally:
        server.stop()


# --- ensemble ----------------------------------------------------------------------------------


def _connected_port(store: ZooKeeperStore) -> int:
    sock = store.client._connection._socket
    return int(sock.getpeername()[1])


def test_ensemble_member_loss(zk_ensemble: ZooKeeperEnsemble) -> None:
    assert sorted(m or "" for m in zk_ensemble.modes()) == ["follower", "follower", "leader"]
    connect = zk_ensemble.connect_string + "/kafkapy"
    store = ZooKeeperStore(connect, session_timeout_ms=10000)
    observer = ZooKeeperStore(connect)
    try:
        store.create("/brokers/ids/1", b"b1", ephemeral=True, makepath=True)
        session = store.session_id
        seen: list[WatchEvent] = []
        reconnects: list[bool] = []
        store.on_reconnected(reconnects.append)
        store.add_watch("/w", seen.append)
        release = _block_dispatcher(store, "/blocker")
        ports = [n.port for n in zk_ensemble.nodes]
        index = ports.index(_connected_port(store))
        zk_ensemble.stop_node(index)
        wait_for(lambda: store.connected and _connected_port(store) != ports[index],
                 what="failover to another member")
        observer.create("/w", b"x")
        release.set()
        wait_for(lambda: reconnects == [False], what="on_reconnected")
        assert store.session_id == session
        assert observer.exists("/brokers/ids/1").ephemeral_owner == session  # type: ignore[union-attr]
        store.flush_watches()
        assert seen == [WatchEvent(EventType.CREATED, "/w")]
        # lose the leader too? one more member down loses the quorum: stop the leader only if
        # it is not the member we already stopped, then bring both back
        zk_ensemble.start_node(index)
        leader = zk_ensemble.leader_index()
        assert leader is not None
        zk_ensemble.stop_node(leader)
        store.set("/w", b"y")  # a new leader is elected; the call waits and succeeds
        assert observer.get("/w")[0] == b"y"
        zk_ensemble.start_node(leader)
        store.flush_watches()
        assert seen[-1] == WatchEvent(EventType.CHANGED, "/w")
    finally:
        store.close()
        observer.close()


# --- ClusterMetadata writes Kafka's tree -------------------------------------------------------


def test_cluster_metadata_on_zookeeper(zookeeper: ZooKeeperServer) -> None:
    raw = raw_client(zookeeper.connect_string)
    store = ZooKeeperStore(zookeeper.connect_string + "/kafkapy")
    other = ZooKeeperStore(zookeeper.connect_string + "/kafkapy")
    try:
        cluster = ClusterMetadata(store)
        for path in zn.PERSISTENT_PATHS:
            assert raw.exists("/kafkapy" + path) is not None, path
        cid = cluster.ensure_cluster_id()
        assert ClusterMetadata(other).ensure_cluster_id() == cid
        assert json.loads(raw.get("/kafkapy/cluster/id")[0]) == {"version": "1", "id": cid}

        cluster.register_broker(0, "127.0.0.1", 9092, rack="r1")
        data, stat = raw.get("/kafkapy/brokers/ids/0")
        assert stat.ephemeralOwner == store.session_id
        doc = json.loads(data)
        assert doc["endpoints"] == ["PLAINTEXT://127.0.0.1:9092"] and doc["rack"] == "r1"
        assert doc["host"] == "127.0.0.1" and doc["port"] == 9092 and doc["version"] == 5
        assert doc["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
        assert isinstance(doc["timestamp"], str)
        with pytest.raises(BrokerAlreadyRegisteredError) as taken:
            ClusterMetadata(other).register_broker(0, "127.0.0.1", 9093)
        assert taken.value.owner == store.session_id

        assert cluster.elect_controller(0) == 1
        assert raw.get("/kafkapy/controller_epoch")[0] == b"1"
        ctrl, ctrl_stat = raw.get("/kafkapy/controller")
        assert json.loads(ctrl)["brokerid"] == 0 and json.loads(ctrl)["version"] == 2
        assert ctrl_stat.ephemeralOwner == store.session_id
        with pytest.raises(ControllerExistsError) as info:
            ClusterMetadata(other).elect_controller(1)
        assert info.value.controller_id == 0

        info2 = cluster.create_topic("orders", {0: [0, 1], 1: [1, 0]}, {"retention.ms": "1000"})
        assert json.loads(raw.get("/kafkapy/brokers/topics/orders")[0]) == {
            "partitions": {"0": [0, 1], "1": [1, 0]},
            "topic_id": uuid_to_base64(info2.topic_id),
            "adding_replicas": {},
            "removing_replicas": {},
            "version": 3,
        }
        assert raw.get("/kafkapy/brokers/topics/orders/partitions/1/state")[0] == (
            b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,0]}'
        )
        assert raw.get("/kafkapy/config/topics/orders")[0] == (
            b'{"version":1,"config":{"retention.ms":"1000"}}'
        )
        assert sorted(raw.get_children("/kafkapy/brokers/topics/orders/partitions")) == ["0", "1"]
        assert ClusterMetadata(other).get_topic("orders") == info2

        state = cluster.update_partition_state(
            "orders", 0, PartitionState(1, 1, [1], 1), info2.states[0].zk_version
        )
        assert state.zk_version == 1
        assert json.loads(raw.get("/kafkapy/brokers/topics/orders/partitions/0/state")[0])[
            "isr"] == [1]

        cluster.set_topic_configs("orders", {"cleanup.policy": "compact"})
        assert raw.get_children("/kafkapy/config/changes") == ["config_change_0000000000"]
        assert json.loads(raw.get("/kafkapy/config/changes/config_change_0000000000")[0]) == {
            "version": 2, "entity_path": "topics/orders"
        }

        cluster.delete_topic("orders")
        assert raw.exists("/kafkapy/brokers/topics/orders") is None
        assert raw.exists("/kafkapy/config/topics/orders") is None
        assert raw.get_children("/kafkapy/admin/delete_topics") == []
        assert cluster.generate_broker_id() == 1001

        store.close()  # the session ends: registration and controller vanish at once
        assert raw.exists("/kafkapy/brokers/ids/0") is None
        assert raw.exists("/kafkapy/controller") is None
        assert ClusterMetadata(other).elect_controller(1) == 2
    finally:
        store.close()
        other.close()
        raw.stop()
        raw.close()


# --- the harness -------------------------------------------------------------------------------


def test_server_harness_leaves_no_java_process(tmp_path: Path) -> None:
    base = tmp_path / "zk-harness"
    server = ZooKeeperServer(base)
    with server:
        pid = server.pid
        assert pid is not None and java_pids_in(base) == [pid]
        assert server.mode() == "standalone" and server.four_letter("ruok") == "imok"
        assert (base / "zoo.cfg").read_text().count("clientPortAddress=127.0.0.1") == 1
    assert java_pids_in(base) == []
    assert "binding to port" in server.log_text() or "clientPortAddress" in server.log_text()
    assert (base / "data" / "version-2").is_dir()
    server.start()
    server.kill()
    assert java_pids_in(base) == []


def test_ensemble_harness_stops_everything(tmp_path: Path) -> None:
    base = tmp_path / "ens"
    ensemble = ZooKeeperEnsemble(base, 3)
    with ensemble:
        assert len(java_pids_in(base)) == 3
        assert ensemble.leader_index() is not None
        ensemble.kill_node(0)
        assert len(java_pids_in(base)) == 2
        ensemble.start_node(0)
        assert ensemble.modes()[0] in ("leader", "follower")
    assert java_pids_in(base) == []
