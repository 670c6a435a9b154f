"""Where the JVM-based compat tests look for their jars, and the Spark connector switch."""

from __future__ import annotations

from compat_tests.suites import jvm
from kafkapy.spark.testing import JARS_ENV, PACKAGES_ENV


def test_shared_jvm_defaults_beside_the_repository(monkeypatch):
    monkeypatch.delenv(jvm.JVM_ENV, raising=False)
    assert jvm.shared_jvm() == (jvm.ROOT.parent / "shared" / "jvm").resolve()


def test_spark_kafka_jars_switch(monkeypatch, tmp_path):
    monkeypatch.setenv(jvm.JVM_ENV, str(tmp_path))
    assert jvm.configure_spark_kafka_connector({}) is None  # no spark-kafka/ yet: nothing set
    (tmp_path / "spark-kafka").mkdir()
    for name in ("spark-sql-kafka-0-10_2.13-4.3.0.jar", "commons-pool2-2.12.0.jar",
                 "README.md"):
        (tmp_path / "spark-kafka" / name).write_text("")
    env: dict[str, str] = {}
    value = jvm.configure_spark_kafka_connector(env)
    assert env == {JARS_ENV: value}
    assert value.split(",") == [str(tmp_path / "spark-kafka" / n) for n in (
        "commons-pool2-2.12.0.jar", "spark-sql-kafka-0-10_2.13-4.3.0.jar")]
    # a choice made by the environment wins
    chosen = {PACKAGES_ENV: "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0"}
    assert jvm.configure_spark_kafka_connector(chosen) is None and JARS_ENV not in chosen


def test_missing_kafka_jars_give_a_reason(monkeypatch, tmp_path):
    monkeypatch.setenv(jvm.JVM_ENV, str(tmp_path))
    reason = jvm.kafka_jvm_missing()
    assert reason is not None and str(tmp_path / "kafka") in reason
