"""A reference Apache Kafka 4.4 broker beside kafkapy: one KRaft node that is broker and
controller at once, on free loopback ports, with its data in a directory of its own.

`ReferenceKafka` writes a ``server.properties`` (the single-node settings of Kafka's quickstart:
internal topics of one replica, groups that form at once), formats the storage with Kafka's
StorageTool (``kafka-storage.sh format``), then starts ``kafka-server-start.sh``'s class with the
JVM settings that script uses (1 GiB heap, G1). It is ready when a client's ApiVersions and
Metadata requests are answered with the node itself as a broker; ``started_in`` says how long
that took. `stop()` ends the JVM (SIGTERM, then SIGKILL) and is safe to call more than once; the
process also dies with the Python process that started it, and an atexit hook stops what is left,
so no JVM outlives a test run even when a test fails.

Kafka's jars come from Maven Central through compat_tests/suites/artifacts.py (`kafka_home()`).
"""

from __future__ import annotations

import atexit
import base64
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from kafkapy.testing import free_port

HOST = "127.0.0.1"
NODE_ID = 1
# kafka-server-start.sh's heap and kafka-run-class.sh's default JVM performance options
HEAP_OPTS = "-Xmx1G -Xms1G"
JVM_PERFORMANCE_OPTS = ("-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "
                        "-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent "
                        "-Djava.awt.headless=true")
# the broker's own log: warnings and errors of every logger, in server.log of its directory
LOG_CONFIG = """status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = info
"""

_running: set[ReferenceKafka] = set()


class ReferenceUnavailable(RuntimeError):
    """Apache Kafka cannot run here (no java, or its jars could not be fetched)."""


def java_missing() -> str | None:
    """Why the reference broker cannot run here, or None when it can."""
    if shutil.which("java") is None:
        return "no java on PATH (scripts/bootstrap.sh --tests installs a JDK)"
    return None


def random_cluster_id() -> str:
    """A cluster id as ``kafka-storage.sh random-uuid`` prints one: 16 random bytes, base64url
    without padding, never starting with ``-`` (a command line would take it for an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _die_with_parent() -> None:  # runs in the child between fork and exec
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class ReferenceKafka:
    """Apache Kafka 4.4 as one combined broker+controller KRaft node on 127.0.0.1."""

    def __init__(self, base: Path, overrides: dict[str, str] | None = None) -> None:
        self.base = Path(base)
        self.port = free_port()
        self.controller_port = free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self.cluster_id = random_cluster_id()
        self.overrides = dict(overrides or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_in: float | None = None  # seconds from start() until clients were answered
        self.home: Path | None = None

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.base / "server.log"

    @property
    def stdout_path(self) -> Path:
        return self.base / "stdout.log"

    def properties(self) -> dict[str, str]:
        """server.properties of the node: the settings of Kafka's single-node example."""
        return {
            "process.roles": "broker,controller",
            "node.id": str(NODE_ID),
            "controller.quorum.voters": f"{NODE_ID}@{HOST}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.base / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            **self.overrides,
        }

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "KAFKA_HEAP_OPTS": HEAP_OPTS,
            "KAFKA_JVM_PERFORMANCE_OPTS": JVM_PERFORMANCE_OPTS,
            "KAFKA_LOG4J_OPTS": f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
        }

    def _kafka_home(self) -> Path:
        reason = java_missing()
        if reason:
            raise ReferenceUnavailable(reason)
        from compat_tests.suites.artifacts import ArtifactsUnavailable, kafka_home

        try:
            return kafka_home()
        except ArtifactsUnavailable as exc:
            raise ReferenceUnavailable(str(exc)) from exc

    def start(self, timeout: float = 120.0) -> ReferenceKafka:
        """Write the config, format the storage and start the node; ready when a client is
        answered. On any failure the JVM is stopped before the error propagates."""
        started = time.perf_counter()
        self.home = self._kafka_home()
        self.base.mkdir(parents=True, exist_ok=True)
        config = self.base / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))
        (self.base / "log4j2.properties").write_text(LOG_CONFIG.format(log=self.log_path))
        fmt = subprocess.run(
            [str(self.home / "bin" / "kafka-storage.sh"), "format", "-t", self.cluster_id,
             "-c", str(config)],
            capture_output=True, text=True, timeout=120, env=self._env(),
            stdin=subprocess.DEVNULL)
        if fmt.returncode != 0:
            raise RuntimeError(f"kafka-storage.sh format failed ({fmt.returncode}):\n"
                               f"{fmt.stdout}{fmt.stderr}")
        with open(self.stdout_path, "ab") as out:
            self.proc = subprocess.Popen(
                [str(self.home / "bin" / "kafka-server-start.sh"), str(config)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self._env(), preexec_fn=_die_with_parent)
        _running.add(self)
        try:
            self._wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        self.started_in = time.perf_counter() - started
        return self

    def _wait_ready(self, deadline: float) -> None:
        """Until ApiVersions and Metadata are answered and Metadata lists this node."""
        from kio.schema.api_versions.v3.request import ApiVersionsRequest
        from kio.schema.metadata.v12.request import MetadataRequest

        from compat_tests.rawclient import RawClient

        last: object = None
        while time.perf_counter() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"Apache Kafka exited before it was ready: {self.log_tail()}")
            try:
                with RawClient(self.bootstrap, timeout=5.0, client_id="ready-probe") as client:
                    versions = client.request(ApiVersionsRequest(
                        client_software_name="kafkapy-reference", client_software_version="1"))
                    meta = client.request(MetadataRequest(
                        topics=(), allow_auto_topic_creation=False,
                        include_topic_authorized_operations=False))
                if versions.error_code == 0 and any(b.node_id == NODE_ID for b in meta.brokers):
                    return
                last = (versions.error_code, meta.brokers)
            except (OSError, ConnectionError) as exc:
                last = exc
            time.sleep(0.2)
        raise TimeoutError(f"Apache Kafka not ready on {self.bootstrap} (last: {last!r}): "
                           f"{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        text = ""
        for path in (self.stdout_path, self.log_path):
            try:
                text += path.read_text(errors="replace")[-chars:]
            except OSError:
                pass
        return text

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (Kafka's controlled shutdown), SIGKILL after `timeout`; the exit code."""
        _running.discard(self)
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> ReferenceKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@atexit.register
def _stop_leftovers() -> None:
    for broker in list(_running):
        broker.stop(timeout=10.0)
