"""`kafkapy share-groups` (kafka-share-groups.sh) against Apache Kafka 4.4's own tool
(org.apache.kafka.tools.consumer.group.ShareGroupCommand), both run against the same kafkapy
broker and share group: the outputs of --list, --describe (offsets, --members, --state, with
--verbose), --reset-offsets (dry run and --execute), --delete-offsets and --delete are the
same, line for line (member ids, coordinator ports and the like are the same broker's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

ROOT = Path(__file__).resolve().parents[1]
TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    jvm.require_kafka_jvm(javac=True)
    share = jvm.compile_java(tmp_path_factory.mktemp("share-cli-java"), ROOT / "compat_tests"
                             / "java44", client="4.4")
    runner = jvm.ToolJvm(jvm.compile_java(tmp_path_factory.mktemp("tool-runner")))
    broker = BrokerProcess(tmp_path_factory.mktemp("share-cli-broker"), {
        "offsets.topic.num.partitions": "1",
        "share.coordinator.state.topic.num.partitions": "1"}).start()
    holder = subprocess.Popen(
        jvm.java_command("ShareGroupClient", "hold", broker.bootstrap, "cli-topic", "cli-busy",
                         "8", "3", extra_cp=(share,), client="4.4"),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().startswith("hold ")
        yield runner, broker
    finally:
        holder.kill()
        holder.wait()
        runner.close()
        assert broker.stop() == 0, broker.log_text()[-3000:]


def both(env, *args: str) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    runner, broker = env
    argv = ["--bootstrap-server", broker.bootstrap, *args]
    kafka = runner.run(TOOL, *argv, check=False)
    ours = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "share-groups", *argv],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    return kafka, ours


@pytest.mark.parametrize("args", [
    ("--list",),
    ("--list", "--state"),
    ("--describe", "--group", "cli-busy"),
    ("--describe", "--group", "cli-busy", "--offsets", "--verbose"),
    ("--describe", "--group", "cli-busy", "--members"),
    ("--describe", "--group", "cli-busy", "--members", "--verbose"),
    ("--describe", "--group", "cli-busy", "--state"),
    ("--describe", "--group", "cli-busy", "--state", "--verbose"),
    ("--reset-offsets", "--group", "cli-busy", "--topic", "cli-topic", "--to-earliest"),
    ("--delete", "--group", "cli-busy"),
    ("--reset-offsets", "--group", "cli-idle", "--topic", "cli-topic", "--to-earliest",
     "--dry-run"),
    ("--reset-offsets", "--group", "cli-idle", "--topic", "cli-topic", "--to-offset", "2",
     "--execute"),
    ("--reset-offsets", "--group", "cli-idle", "--all-topics", "--to-latest", "--dry-run"),
    ("--reset-offsets", "--group", "cli-busy", "--topic", "cli-topic", "--to-earliest",
     "--dry-run"),
    ("--describe", "--group", "cli-idle"),
    ("--describe", "--group", "cli-idle", "--state"),
    ("--describe", "--group", "cli-idle", "--members"),
    ("--delete-offsets", "--group", "cli-idle", "--topic", "cli-topic"),
], ids=lambda a: " ".join(a))
def test_same_output_as_kafkas_tool(env, args):
    kafka, ours = both(env, *args)
    assert (ours.returncode, ours.stdout) == (kafka.returncode, kafka.stdout), ours.stderr
    if kafka.stderr.strip() and not kafka.stderr.startswith("java."):
        # the first line: Kafka's tool follows a usage error with its help text
        assert ours.stderr.strip().splitlines()[0] == kafka.stderr.strip().splitlines()[0]


def test_delete_then_delete_again(env):
    # --execute above created cli-idle, empty: deleted, then not a share group any more
    runner, broker = env
    ours = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "share-groups",
                           "--bootstrap-server", broker.bootstrap, "--delete", "--group",
                           "cli-idle"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert ours.stdout == "Deletion of requested share groups ('cli-idle') was successful.\n"
    kafka, ours = both(env, "--delete", "--group", "cli-idle")
    assert (ours.returncode, ours.stdout) == (kafka.returncode, kafka.stdout), ours.stderr
    assert "is not a share group." in ours.stdout
