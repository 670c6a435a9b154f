"""Fixtures of the JVM-based compat tests: the project's Java programs compiled once per
session, and one JVM that runs Kafka's command-line tools on request."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.suites import jvm


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory) -> Path:
    jvm.require_kafka_jvm(javac=True)
    return jvm.compile_java(tmp_path_factory.mktemp("java-classes"))


@pytest.fixture(scope="module")
def tools(java_classes):
    runner = jvm.ToolJvm(java_classes)
    yield runner
    runner.close()
