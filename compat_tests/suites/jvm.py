"""The JVM pieces of the compatibility tests: where they are and how to run them.

Apache Kafka's Java client and command-line tools, and Spark's kafka connector, come by name from
Maven Central (compat_tests/suites/artifacts.py, cached under ~/.cache/kafkapy-tests/jvm):
Kafka 4.4.0's libs/ (client, tools, broker, log4j2) and Kafka 3.9's client (the line Spark's
connector uses). Every function taking ``client`` runs with the 4.4 client line by default and
with 3.9's when asked; the project's Java programs are compiled once against the older line, so
the same classes run on both.

`kafka_jvm_missing()` says why the JVM tests cannot run (no java, or Maven Central could not be
reached) — scripts/bootstrap.sh --tests installs and fetches everything, so in the README's test
command that never happens.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path

from compat_tests.suites import artifacts

ROOT = Path(__file__).resolve().parents[2]
LOG_CONFIG = artifacts.LOG_CONFIG
CLIENTS = ("4.4", "3.9")


def kafka_home() -> Path:
    """Apache Kafka 4.4's directory (bin/, libs/, config/) over the Maven Central jars."""
    return artifacts.kafka_home()


def kafka_dir() -> Path:
    """Kafka 4.4's libs/: every jar of the distribution."""
    return kafka_home() / "libs"


def client_dir(client: str = "4.4") -> Path:
    if client == "4.4":
        return kafka_dir()
    if client == "3.9":
        return artifacts.fetch("kafka-clients-3.9")
    raise ValueError(f"unknown Kafka client line {client!r} (known: {', '.join(CLIENTS)})")


def kafka_jvm_missing() -> str | None:
    """Why Kafka's Java client and tools cannot run here, or None when they can."""
    if shutil.which("java") is None:
        return "no java on PATH (scripts/bootstrap.sh --tests installs a JDK)"
    try:
        for client in CLIENTS:
            client_dir(client)
    except artifacts.ArtifactsUnavailable as exc:
        return str(exc)
    return None


def require_kafka_jvm(javac: bool = False) -> None:
    reason = kafka_jvm_missing()
    if reason is None and javac and shutil.which("javac") is None:
        reason = "no javac on PATH (scripts/bootstrap.sh --tests installs default-jdk-headless)"
    if reason:
        import pytest

        pytest.skip(reason)


def classpath(*extra: Path, client: str = "4.4") -> str:
    return os.pathsep.join([*(str(p) for p in extra), f"{client_dir(client)}/*"])


def java_command(main_class: str, *args: str, extra_cp: tuple[Path, ...] = (),
                 client: str = "4.4") -> list[str]:
    return ["java", "-XX:TieredStopAtLevel=1", f"-Dlog4j2.configurationFile={LOG_CONFIG}",
            "-cp", classpath(*extra_cp, client=client), main_class, *args]


def run_java(main_class: str, *args: str, extra_cp: tuple[Path, ...] = (), timeout: float = 120,
             check: bool = True, client: str = "4.4") -> subprocess.CompletedProcess[str]:
    """Run a Java main class with Kafka's jars on the class path; output as text."""
    proc = subprocess.run(java_command(main_class, *args, extra_cp=extra_cp, client=client),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{main_class} {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def spark_kafka_jars() -> list[str]:
    """Spark's kafka connector and its dependencies for the installed PySpark."""
    return [str(p) for p in artifacts.jars("spark-kafka")]


def connector_missing() -> str | None:
    """Why Spark's kafka connector is not on the test sessions' class path, or None."""
    from kafkapy.spark.testing import kafka_connector_configured

    if kafka_connector_configured():
        return None
    try:
        spark_kafka_jars()
    except artifacts.ArtifactsUnavailable as exc:
        return f"Spark's kafka connector is not on the class path: {exc}"
    return "Spark's kafka connector is not on the class path (configure_spark_kafka_connector)"


def configure_spark_kafka_connector(environ=os.environ) -> str | None:
    """Put Spark's kafka connector (from Maven Central, see artifacts.py) on the test sessions'
    class path (KAFKAPY_SPARK_KAFKA_JARS) unless the environment already chose jars or packages;
    returns the value set, if any. The compat tests' conftest calls it, so Spark's connector
    tests run in every test run."""
    from kafkapy.spark.testing import JARS_ENV, PACKAGES_ENV

    if environ.get(JARS_ENV) or environ.get(PACKAGES_ENV):
        return None
    try:
        jars = spark_kafka_jars()
    except artifacts.ArtifactsUnavailable:
        return None  # test_spark_kafka_connector.py says why, and fails in the strict run
    environ[JARS_ENV] = ",".join(jars)
    return environ[JARS_ENV]


JAVA_SOURCES = Path(__file__).resolve().parent / "java"


def compile_java(out: Path, sources_dir: Path = JAVA_SOURCES, client: str = "3.9") -> Path:
    """javac <sources_dir>/*.java (the compat tests' own programs) into out, against Kafka 3.9's
    client, the older of the two lines, so that the classes run with either (``client="4.4"``
    for programs using what only 4.4 has, such as KafkaShareConsumer)."""
    sources = sorted(str(p) for p in sources_dir.glob("*.java"))
    proc = subprocess.run(["javac", "-d", str(out), "-cp", classpath(client=client), *sources],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
    return out


def compile_java_44(out: Path, sources_dir: Path) -> Path:
    """javac <sources_dir>/*.java against Kafka 4.4's libs/ (client, Kafka Streams and the
    rest of the distribution): programs that need more than the client, run with the 4.4
    line only."""
    sources = sorted(str(p) for p in sources_dir.glob("*.java"))
    proc = subprocess.run(["javac", "-d", str(out), "-cp", classpath(client="4.4"), *sources],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
    return out


class ToolJvm:
    """One JVM running Kafka's command-line tools on request (java/ToolRunner.java): `run()`
    returns what a separate `java -cp ... <tool>` would have (exit status, stdout, stderr)."""

    def __init__(self, classes: Path) -> None:
        self.classes = classes
        self.proc: subprocess.Popen[bytes] | None = None
        self.results: queue.Queue[tuple[int, str, str] | None] = queue.Queue()

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            java_command("ToolRunner", extra_cp=(self.classes,)), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.results = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.results), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen[bytes], results: queue.Queue) -> None:
        assert proc.stdout is not None
        while True:
            header = proc.stdout.readline()
            if not header.startswith(b"@@result "):
                results.put(None)  # the JVM ended
                return
            status, n_out, n_err = (int(x) for x in header.split()[1:])
            out = proc.stdout.read(n_out).decode(errors="replace")
            err = proc.stdout.read(n_err).decode(errors="replace")
            results.put((status, out, err))

    def run(self, main_class: str, *args: str, timeout: float = 120,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(("\t".join([main_class, *args]) + "\n").encode())
        self.proc.stdin.flush()
        try:
            got = self.results.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise AssertionError(
                f"{main_class} {' '.join(args)} did not finish in {timeout}s") from None
        if got is None:
            self.close()
            raise AssertionError(f"the tool JVM ended while running {main_class}")
        status, out, err = got
        result = subprocess.CompletedProcess([main_class, *args], status, out, err)
        if check and status != 0:
            raise AssertionError(f"{main_class} {' '.join(args)} exited {status}:\n{out}\n{err}")
        return result

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None
