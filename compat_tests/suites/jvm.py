"""The JVM pieces of the compatibility tests: where they are and how to run them.

Apache Kafka's Java client and command-line tools (and, once built, Spark's kafka connector)
are not installable from this project's package sources; they are provided beside the
repository in ``../shared/jvm/`` (see its README): ``kafka/`` holds kafka-clients and a subset of
Kafka's tools, ``spark-kafka/`` Spark's connector jars. ``KAFKAPY_SHARED_JVM`` overrides that
location (a git worktree elsewhere, for instance). The rest of the class path (jackson, slf4j and
the codec libraries) is PySpark's ``jars`` directory, which the test extra installs.

Every test that needs them calls `require_kafka_jvm()`, which skips with the reason (what is
missing, where it was looked for) rather than passing silently.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JVM_ENV = "KAFKAPY_SHARED_JVM"
LOG_CONFIG = Path(__file__).resolve().parent / "java" / "log4j2-tools.properties"


def shared_jvm() -> Path:
    return Path(os.environ.get(JVM_ENV) or ROOT.parent / "shared" / "jvm").resolve()


def kafka_dir() -> Path:
    return shared_jvm() / "kafka"


def spark_kafka_dir() -> Path:
    return shared_jvm() / "spark-kafka"


def pyspark_jars() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    return jars if jars.is_dir() else None


def kafka_jvm_missing() -> str | None:
    """Why Kafka's Java client and tools cannot run here, or None when they can."""
    if not list(kafka_dir().glob("kafka-clients-*.jar")):
        return (f"Kafka's Java client and tools not found in {kafka_dir()} (../shared/jvm/kafka "
                f"beside the repository; set {JVM_ENV} to the directory holding kafka/)")
    if pyspark_jars() is None:
        return "PySpark's jars directory (the rest of the class path) is missing: install the " \
               "spark extra (scripts/bootstrap.sh --tests)"
    if shutil.which("java") is None:
        return "no java on PATH (scripts/bootstrap.sh --tests installs a JDK)"
    return None


def require_kafka_jvm(javac: bool = False) -> None:
    reason = kafka_jvm_missing()
    if reason is None and javac and shutil.which("javac") is None:
        reason = "no javac on PATH (scripts/bootstrap.sh --tests installs default-jdk-headless)"
    if reason:
        import pytest

        pytest.skip(reason)


def classpath(*extra: Path) -> str:
    return os.pathsep.join([*(str(p) for p in extra), f"{kafka_dir()}/*", f"{pyspark_jars()}/*"])


def java_command(main_class: str, *args: str, extra_cp: tuple[Path, ...] = ()) -> list[str]:
    return ["java", "-XX:TieredStopAtLevel=1", f"-Dlog4j2.configurationFile={LOG_CONFIG}",
            "-cp", classpath(*extra_cp), main_class, *args]


def run_java(main_class: str, *args: str, extra_cp: tuple[Path, ...] = (), timeout: float = 120,
             check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a Java main class with Kafka's jars on the class path; output as text."""
    proc = subprocess.run(java_command(main_class, *args, extra_cp=extra_cp),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{main_class} {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def spark_kafka_jars() -> list[str]:
    """Spark's kafka connector and its dependencies from ../shared/jvm/spark-kafka, if there."""
    d = spark_kafka_dir()
    return sorted(str(p) for p in d.glob("*.jar")) if d.is_dir() else []


def configure_spark_kafka_connector(environ=os.environ) -> str | None:
    """Put Spark's kafka connector from ../shared/jvm/spark-kafka on the test sessions' class
    path (KAFKAPY_SPARK_KAFKA_JARS) unless the environment already chose jars or packages;
    returns the value set, if any. The compat tests' conftest calls it, so
    test_spark_kafka_connector.py runs as soon as those jars exist."""
    from kafkapy.spark.testing import JARS_ENV, PACKAGES_ENV

    if environ.get(JARS_ENV) or environ.get(PACKAGES_ENV):
        return None
    jars = spark_kafka_jars()
    if not jars:
        return None
    environ[JARS_ENV] = ",".join(jars)
    return environ[JARS_ENV]


JAVA_SOURCES = Path(__file__).resolve().parent / "java"


def compile_java(out: Path) -> Path:
    """javac java/*.java (the compat tests' own programs) into out, against Kafka's jars."""
    sources = sorted(str(p) for p in JAVA_SOURCES.glob("*.java"))
    proc = subprocess.run(["javac", "-d", str(out), "-cp", classpath(), *sources],
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
