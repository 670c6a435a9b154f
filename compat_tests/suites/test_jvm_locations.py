"""Where the JVM compat tests get their jars (artifacts.py), and the Spark connector switch."""

from __future__ import annotations

import os
import subprocess

import pytest

from compat_tests.suites import artifacts, jvm
from kafkapy.spark.testing import JARS_ENV, PACKAGES_ENV


def test_sets_are_cached_by_pom_and_versions(monkeypatch, tmp_path):
    monkeypatch.setenv(artifacts.CACHE_ENV, str(tmp_path))
    first = artifacts.set_dir("kafka-4.4")
    assert first.parent == tmp_path and first.name.startswith("kafka-4.4-")
    assert artifacts.set_dir("kafka-4.4") == first  # the same pom: the same folder
    # the connector's folder follows PySpark's version, which it must equal
    monkeypatch.setattr(artifacts, "pyspark_version", lambda: "9.9.9")
    other = artifacts.set_dir("spark-kafka")
    monkeypatch.setattr(artifacts, "pyspark_version", lambda: "9.9.8")
    assert artifacts.set_dir("spark-kafka") != other


def test_an_unreachable_registry_says_what_failed(monkeypatch, tmp_path):
    monkeypatch.setenv(artifacts.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn
    with pytest.raises(artifacts.ArtifactsUnavailable, match="no mvn on PATH"):
        artifacts.fetch("kafka-4.4")
    with pytest.raises(ValueError, match="unknown artifact set"):
        artifacts.fetch("kafka-0.8")


def test_kafka_home_is_a_kafka_directory():
    home = jvm.kafka_home()
    libs = {p.name for p in (home / "libs").glob("*.jar")}
    for jar in ("kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar", "kafka-tools-4.4.0.jar",
                "kafka-streams-4.4.0.jar", "log4j-core-2.25.5.jar"):
        assert jar in libs
    for script in artifacts.SCRIPTS:
        assert os.access(home / "bin" / script, os.X_OK), script
    # bin/ scripts run Kafka's own classes: kafka-topics.sh answers --version as Kafka 4.4.0
    out = subprocess.run([str(home / "bin" / "kafka-topics.sh"), "--version"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split()[0] == "4.4.0", out


def test_client_lines():
    assert {p.name for p in jvm.client_dir("3.9").glob("kafka-clients-*.jar")} == {
        "kafka-clients-3.9.2.jar"}
    assert {p.name for p in jvm.client_dir("4.4").glob("kafka-clients-*.jar")} == {
        "kafka-clients-4.4.0.jar"}
    with pytest.raises(ValueError):
        jvm.client_dir("2.8")


def test_spark_kafka_jars_switch():
    env: dict[str, str] = {}
    value = jvm.configure_spark_kafka_connector(env)
    assert env == {JARS_ENV: value}
    names = [os.path.basename(p) for p in value.split(",")]
    version = artifacts.pyspark_version()
    assert f"spark-sql-kafka-0-10_2.13-{version}.jar" in names
    assert f"spark-token-provider-kafka-0-10_2.13-{version}.jar" in names
    assert not [n for n in names if n.startswith(("scala-", "hadoop-", "slf4j-"))]
    # a choice made by the environment wins
    chosen = {PACKAGES_ENV: f"org.apache.spark:spark-sql-kafka-0-10_2.13:{version}"}
    assert jvm.configure_spark_kafka_connector(chosen) is None and JARS_ENV not in chosen
