"""Real ZooKeeper servers for tests and benchmarks: Debian's ``zookeeper`` package run by ``java``.

:class:`ZooKeeperServer` starts one standalone server (or one member of an ensemble) in its own
directory: a ``zoo.cfg`` (fast ticks for quick session expiry, data dir inside, loopback client
port, admin server off, every four-letter word allowed), ZooKeeper's log in ``zookeeper.log`` and
the JVM's output in ``java.out`` next to it. :meth:`~ZooKeeperServer.start` waits until the server
serves clients; :meth:`~ZooKeeperServer.stop` sends SIGTERM, then SIGKILL. The JVM dies with the
process that started it (``PR_SET_PDEATHSIG``) and an ``atexit`` hook stops what is still running,
so no ``java`` outlives a test run.

:class:`ZooKeeperEnsemble` runs N servers as one quorum on loopback ports (``server.N=127.0.0.1:
peer:election``), with per-node stop/start/kill for failover tests.

Environment: ``KAFKAPY_ZK_CLASSPATH`` replaces the class path, ``KAFKAPY_JAVA`` the java binary.

    with ZooKeeperServer(tmp_path / "zk") as zk:
        store = ZooKeeperStore(zk.connect_string + "/kafkapy")
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import weakref
from pathlib import Path

from kafkapy.testing import free_port

JAVA_DIR = Path("/usr/share/java")
ZOOKEEPER_JAR = JAVA_DIR / "zookeeper.jar"  # its manifest's Class-Path names its dependencies
#: ZooKeeper logs through slf4j; these route it to log4j 1.2, configured by our log4j.properties
LOGGING_JARS = (JAVA_DIR / "slf4j-log4j12.jar", JAVA_DIR / "log4j-1.2.jar")
SERVER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
CLI_MAIN = "org.apache.zookeeper.ZooKeeperMain"

_LOG4J = """\
log4j.rootLogger=INFO, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=${zookeeper.log.dir}/zookeeper.log
log4j.appender.FILE.Append=true
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
"""

_live: weakref.WeakSet[ZooKeeperServer] = weakref.WeakSet()


@atexit.register
def _stop_leftovers() -> None:
    for server in list(_live):
        server.kill()


class ZooKeeperUnavailable(RuntimeError):
    """java or Debian's zookeeper jars are missing."""


def java_binary() -> str:
    java = os.environ.get("KAFKAPY_JAVA") or shutil.which("java")
    if not java:
        raise ZooKeeperUnavailable(
            "java not found: install Debian's default-jre-headless and zookeeper packages"
        )
    return java


def classpath(conf_dir: Path | None = None) -> str:
    """The JVM class path: ``conf_dir`` (for log4j.properties), ZooKeeper and the log binding."""
    env = os.environ.get("KAFKAPY_ZK_CLASSPATH")
    parts = [str(conf_dir)] if conf_dir else []
    if env:
        return os.pathsep.join([*parts, env])
    if not ZOOKEEPER_JAR.exists():
        raise ZooKeeperUnavailable(
            f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper package "
            "(or set KAFKAPY_ZK_CLASSPATH)"
        )
    parts.append(str(ZOOKEEPER_JAR))
    parts += [str(j) for j in LOGGING_JARS if j.exists()]
    return os.pathsep.join(parts)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def four_letter_word(host: str, port: int, word: str, timeout: float = 2.0) -> str:
    """Send a ZooKeeper four-letter command (ruok, srvr, stat, mntr, ...) and return the answer."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word.encode("ascii"))
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


class ZooKeeperServer:
    """One ZooKeeper server process in ``base_dir`` (created if needed).

    ``peers`` (server id -> (peer port, election port)) and ``server_id`` make it one member of
    an ensemble; :class:`ZooKeeperEnsemble` fills them in.
    """

    def __init__(
        self,
        base_dir: str | os.PathLike[str],
        *,
        port: int | None = None,
        tick_time_ms: int = 500,
        server_id: int | None = None,
        peers: dict[int, tuple[int, int]] | None = None,
        heap_mb: int = 128,
        extra_config: dict[str, str] | None = None,
        die_with_parent: bool = True,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.data_dir = self.base_dir / "data"
        self.conf_dir = self.base_dir / "conf"
        self.config_path = self.base_dir / "zoo.cfg"
        self.log_path = self.base_dir / "zookeeper.log"
        self.out_path = self.base_dir / "java.out"
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.tick_time_ms = tick_time_ms
        self.server_id = server_id
        self.peers = dict(peers or {})
        self.heap_mb = heap_mb
        self.extra_config = dict(extra_config or {})
        self.die_with_parent = die_with_parent
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    # --- addresses ------------------------------------------------------------------------------

    @property
    def connect_string(self) -> str:
        """``127.0.0.1:<port>`` (append a chroot such as ``/kafkapy`` for a broker)."""
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- configuration --------------------------------------------------------------------------

    def config(self) -> dict[str, str]:
        tick = self.tick_time_ms
        cfg = {
            "tickTime": str(tick),
            "initLimit": "10",
            "syncLimit": "5",
            "dataDir": str(self.data_dir),
            "clientPort": str(self.port),
            "clientPortAddress": self.host,
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "*",
            # let clients ask for Kafka's session timeouts (ZooKeeper's default max is 20 ticks)
            "minSessionTimeout": str(2 * tick),
            "maxSessionTimeout": str(max(60000, 20 * tick)),
            "maxClientCnxns": "0",
            "autopurge.purgeInterval": "0",
        }
        if self.peers:
            cfg["standaloneEnabled"] = "false"
            cfg["reconfigEnabled"] = "false"
            for sid, (peer, election) in sorted(self.peers.items()):
                cfg[f"server.{sid}"] = f"{self.host}:{peer}:{election}"
        cfg.update(self.extra_config)
        return cfg

    def write_config(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{k}={v}\n" for k, v in self.config().items())
        self.config_path.write_text(text)
        (self.conf_dir / "log4j.properties").write_text(_LOG4J)
        if self.server_id is not None:
            (self.data_dir / "myid").write_text(f"{self.server_id}\n")

    def command(self) -> list[str]:
        return [
            java_binary(),
            f"-Xmx{self.heap_mb}m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            f"-Dzookeeper.log.dir={self.base_dir}",
            f"-Dlog4j.configuration=file:{self.conf_dir / 'log4j.properties'}",
            "-Dzookeeper.admin.enableServer=false",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-cp",
            classpath(self.conf_dir),
            SERVER_MAIN,
            str(self.config_path),
        ]

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self, timeout: float = 60.0, *, wait: bool = True) -> ZooKeeperServer:
        """Start the JVM; with ``wait`` return once it serves clients (a standalone server) or is
        a leader/follower of its ensemble."""
        with self._lock:
            if self.running:
                return self
            self.write_config()
            out = open(self.out_path, "ab")
            try:
                self.proc = subprocess.Popen(
                    self.command(),
                    cwd=self.base_dir,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=_die_with_parent if self.die_with_parent else None,
                )
            finally:
                out.close()
            _live.add(self)
        if wait:
            self.wait_serving(timeout)
        return self

    def wait_serving(self, timeout: float = 60.0) -> None:
        """Wait until the server answers clients (standalone) or is in a quorum (ensemble)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                code = None if self.proc is None else self.proc.returncode
                raise RuntimeError(
                    f"ZooKeeper on port {self.port} exited with {code}:\n{self.output()[-3000:]}"
                )
            if self.mode() in ("standalone", "leader", "follower") and self._client_ok():
                return
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(
            f"ZooKeeper on port {self.port} did not serve within {timeout}s:\n"
            f"{self.output()[-3000:]}"
        )

    def _client_ok(self) -> bool:
        """A kazoo session can be opened (the definition of "up" used by the tests)."""
        from kazoo.client import KazooClient

        client = KazooClient(hosts=self.connect_string, timeout=5.0)
        try:
            client.start(timeout=3.0)
            client.get_children("/")
            return True
        except Exception:
            return False
        finally:
            try:
                client.stop()
                client.close()
            except Exception:
                pass

    def mode(self) -> str | None:
        """"standalone", "leader", "follower", or None when not serving."""
        try:
            answer = four_letter_word(self.host, self.port, "srvr", timeout=1.0)
        except OSError:
            return None
        for line in answer.splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def four_letter(self, word: str) -> str:
        return four_letter_word(self.host, self.port, word)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; the exit status (None if it was not running)."""
        with self._lock:
            proc, self.proc = self.proc, None
            _live.discard(self)
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._killpg(proc)
        return proc.returncode

    def kill(self) -> None:
        """SIGKILL (a crash)."""
        with self._lock:
            proc, self.proc = self.proc, None
            _live.discard(self)
        if proc is not None:
            self._killpg(proc)

    @staticmethod
    def _killpg(proc: subprocess.Popen[bytes]) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def restart(self, timeout: float = 60.0) -> ZooKeeperServer:
        self.stop()
        return self.start(timeout)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def output(self) -> str:
        """ZooKeeper's log followed by the JVM's own stdout/stderr."""
        try:
            out = self.out_path.read_text(errors="replace")
        except OSError:
            out = ""
        return self.log_text() + out

    # --- zkCli ----------------------------------------------------------------------------------

    def cli(self, *args: str, timeout: float = 60.0) -> str:
        """Run ZooKeeper's own shell (``zkCli``) once against this server; returns its output."""
        return run_zkcli(self.connect_string, *args, log_dir=self.base_dir, timeout=timeout)

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ZooKeeperServer({self.connect_string}, pid={self.pid})"


def run_zkcli(server: str, *args: str, log_dir: Path | None = None, timeout: float = 60.0) -> str:
    """``java ... org.apache.zookeeper.ZooKeeperMain -server <server> <args>``: the command's
    stdout (its log goes to ``log_dir``/zkcli.log, or nowhere)."""
    cmd = [java_binary(), "-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    if log_dir is not None:
        conf = Path(log_dir) / "cli-conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "log4j.properties").write_text(_LOG4J.replace("zookeeper.log", "zkcli.log"))
        cmd += [
            f"-Dzookeeper.log.dir={log_dir}",
            f"-Dlog4j.configuration=file:{conf / 'log4j.properties'}",
            "-cp", classpath(conf),
        ]
    else:
        cmd += ["-Dlog4j.rootLogger=OFF", "-cp", classpath()]
    cmd += [CLI_MAIN, "-server", server, *args]
    done = subprocess.run(
        cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"zkCli {' '.join(args)} failed ({done.returncode}): "
            f"{done.stdout.decode(errors='replace')}{done.stderr.decode(errors='replace')}"
        )
    return done.stdout.decode(errors="replace")


class ZooKeeperEnsemble:
    """``size`` ZooKeeper servers forming one quorum on loopback ports, in ``base_dir/zkN``."""

    def __init__(
        self, base_dir: str | os.PathLike[str], size: int = 3, *, tick_time_ms: int = 500
    ) -> None:
        self.base_dir = Path(base_dir)
        peers = {sid: (free_port(), free_port()) for sid in range(1, size + 1)}
        self.nodes = [
            ZooKeeperServer(
                self.base_dir / f"zk{sid}", server_id=sid, peers=peers, tick_time_ms=tick_time_ms
            )
            for sid in range(1, size + 1)
        ]

    @property
    def connect_string(self) -> str:
        """All members: ``127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3``."""
        return ",".join(n.connect_string for n in self.nodes)

    def start(self, timeout: float = 90.0) -> ZooKeeperEnsemble:
        for node in self.nodes:
            node.start(wait=False)
        try:
            for node in self.nodes:
                node.wait_serving(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def stop_node(self, index: int) -> None:
        """Stop node ``index`` (0-based) gracefully."""
        self.nodes[index].stop()

    def kill_node(self, index: int) -> None:
        self.nodes[index].kill()

    def start_node(self, index: int, timeout: float = 60.0) -> None:
        """(Re)start node ``index`` and wait until it rejoined the quorum."""
        self.nodes[index].start(timeout)

    def leader_index(self) -> int | None:
        for i, node in enumerate(self.nodes):
            if node.running and node.mode() == "leader":
                return i
        return None

    def modes(self) -> list[str | None]:
        return [n.mode() if n.running else None for n in self.nodes]

    @property
    def pids(self) -> list[int]:
        return [n.pid for n in self.nodes if n.pid is not None]

    def __enter__(self) -> ZooKeeperEnsemble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def expire_session(connect: str, session_id: int, password: bytes, timeout: float = 10.0) -> None:
    """Make ZooKeeper expire a client's session now (the classic way: open the same session from
    a second client and close it). The original client finds its session expired when it next
    reaches the server."""
    from kazoo.client import KazooClient

    other = KazooClient(hosts=connect, client_id=(session_id, password), timeout=10.0)
    other.start(timeout=timeout)
    other.stop()
    other.close()
