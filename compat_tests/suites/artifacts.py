"""The JVM pieces of the compat tests, fetched by name from Maven Central as a user gets them.

Each set is a small pom the project keeps in ``poms/``; ``mvn dependency:copy-dependencies``
copies the set's jars, with their runtime dependencies, into a cache folder keyed by the pom's
text and the versions it is given, so a second run (and CI on the same machine) finds them at
once and a changed pom fetches anew:

- ``kafka-4.4``: Apache Kafka 4.4.0 as its distribution's ``libs/`` holds it (broker, tools,
  client, streams, log4j2). `kafka_home()` lays a Kafka directory over it (``libs/``, ``bin/``
  with kafka-run-class.sh and the scripts the tests call, ``config/``), the way librdkafka's
  suite and the reference broker expect one.
- ``kafka-clients-3.9``: Kafka 3.9's Java client, the line Spark's connector uses.
- ``spark-kafka``: spark-sql-kafka-0-10 for the installed PySpark's version (they must be equal).

``KAFKAPY_JVM_CACHE`` moves the cache (default ``~/.cache/kafkapy-tests/jvm``).
``python -m compat_tests.suites.artifacts`` fetches every set (scripts/bootstrap.sh --tests
runs it); each fetch says what it fetches, on stderr.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

POMS = Path(__file__).resolve().parent / "poms"
CACHE_ENV = "KAFKAPY_JVM_CACHE"
LOG_CONFIG = Path(__file__).resolve().parent / "java" / "log4j2-tools.properties"
SETS = ("kafka-4.4", "kafka-clients-3.9", "spark-kafka")
KAFKA_VERSION = "4.4.0"
KAFKA_39_VERSION = "3.9.2"


class ArtifactsUnavailable(RuntimeError):
    """A set could not be fetched (no mvn, or Maven Central refused it): the message says which."""


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "kafkapy-tests" / "jvm")


def pyspark_version() -> str:
    try:
        import pyspark
    except ImportError as exc:
        raise ArtifactsUnavailable(
            "PySpark is not installed (scripts/bootstrap.sh --tests installs the spark extra); "
            "Spark's kafka connector must match its version") from exc
    return pyspark.__version__


def _properties(name: str) -> dict[str, str]:
    return {"spark.version": pyspark_version()} if name == "spark-kafka" else {}


def set_dir(name: str) -> Path:
    """Where set `name` lies (or will lie) in the cache: keyed by its pom and properties."""
    pom = (POMS / f"{name}.xml").read_bytes()
    props = _properties(name)
    key = hashlib.sha256(pom + repr(sorted(props.items())).encode()).hexdigest()[:12]
    return cache_root() / f"{name}-{key}"


def fetch(name: str) -> Path:
    """The folder holding set `name`'s jars, fetched with mvn when not cached yet."""
    if name not in SETS:
        raise ValueError(f"unknown artifact set {name!r} (known: {', '.join(SETS)})")
    dest = set_dir(name)
    if (dest / ".complete").exists():
        return dest
    if shutil.which("mvn") is None:
        raise ArtifactsUnavailable("no mvn on PATH (scripts/bootstrap.sh --tests installs maven)")
    props = _properties(name)
    print(f"artifacts: fetching {name} {' '.join(f'{k}={v}' for k, v in props.items())} "
          f"from Maven Central into {dest}", file=sys.stderr, flush=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=dest.parent))
    try:
        command = ["mvn", "-B", "-q", "-f", str(POMS / f"{name}.xml"),
                   "dependency:copy-dependencies", "-DincludeScope=runtime",
                   f"-DoutputDirectory={staging}",
                   *(f"-D{k}={v}" for k, v in props.items())]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0 or not list(staging.glob("*.jar")):
            raise ArtifactsUnavailable(
                f"mvn could not fetch {name} (exit {proc.returncode}): "
                f"{(proc.stdout + proc.stderr).strip()[-2000:]}")
        (staging / ".complete").write_text(" ".join(command) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def jars(name: str) -> list[Path]:
    return sorted(fetch(name).glob("*.jar"))


# ---- a Kafka directory over the 4.4 jars ----------------------------------------------------

# bin/ scripts of Kafka's distribution that the tests (and librdkafka's suite) call: name -> class
SCRIPTS = {
    "kafka-server-start.sh": "kafka.Kafka",
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs.sh": "org.apache.kafka.tools.ConfigCommand",
    "kafka-console-producer.sh": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-consumer-groups.sh": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-broker-api-versions.sh": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-features.sh": "org.apache.kafka.tools.FeatureCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
    "kafka-transactions.sh": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-get-offsets.sh": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-producer-perf-test.sh": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test.sh": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-verifiable-producer.sh": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer.sh": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-reassign-partitions.sh": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
}

RUN_CLASS = """#!/bin/sh
# kafka-run-class.sh as Kafka's distribution has it, reduced: run a class with libs/ on the class
# path (after $CLASSPATH), $KAFKA_HEAP_OPTS, $KAFKA_JVM_PERFORMANCE_OPTS and $KAFKA_OPTS.
base=$(cd "$(dirname "$0")/.." && pwd)
: "${{KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base/config/tools-log4j2.properties}}"
exec java ${{KAFKA_HEAP_OPTS:-}} ${{KAFKA_JVM_PERFORMANCE_OPTS:-}} $KAFKA_LOG4J_OPTS \\
  ${{KAFKA_OPTS:-}} -cp "${{CLASSPATH:+$CLASSPATH:}}$base/libs/*" "$@"
"""


def kafka_home() -> Path:
    """A Kafka 4.4 directory (libs/, bin/, config/) over the fetched jars; made once per set."""
    libs = fetch("kafka-4.4")
    layout = hashlib.sha256((RUN_CLASS + repr(SCRIPTS)).encode()).hexdigest()[:8]
    home = libs.parent / f"{libs.name}-home-{layout}"
    if (home / ".complete").exists():
        return home
    staging = Path(tempfile.mkdtemp(prefix=f".{home.name}-", dir=home.parent))
    try:
        (staging / "libs").symlink_to(libs)
        (staging / "bin").mkdir()
        (staging / "config").mkdir()
        shutil.copy(LOG_CONFIG, staging / "config" / "tools-log4j2.properties")
        run_class = staging / "bin" / "kafka-run-class.sh"
        run_class.write_text(RUN_CLASS.format())
        for script, main_class in SCRIPTS.items():
            path = staging / "bin" / script
            path.write_text(f'#!/bin/sh\nexec "$(dirname "$0")/kafka-run-class.sh" {main_class} '
                            '"$@"\n')
        for path in (staging / "bin").iterdir():
            path.chmod(0o755)
        (staging / ".complete").write_text(f"Apache Kafka {KAFKA_VERSION}\n")
        if home.exists():
            shutil.rmtree(home)
        staging.rename(home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return home


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(SETS)
    try:
        for name in names:
            folder = kafka_home() if name == "kafka-4.4" else fetch(name)
            print(f"artifacts: {name}: {folder}", file=sys.stderr)
    except ArtifactsUnavailable as exc:
        print(f"artifacts: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
