"""`kafkapy streams-groups` (kafka-streams-groups.sh) against Kafka 4.4's own tool: on one kafkapy
broker holding a streams group (a member with its tasks, a committed offset of an input
partition), `--list`, `--list --state`, `--describe --state`, `--describe --members`,
`--describe` (offset lags) and the describe of an unknown group print exactly what Kafka 4.4's
StreamsGroupCommand prints there, with the same exit status."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from kio.schema.offset_commit.v9 import request as commit9

from compat_tests.rawclient import RawClient
from compat_tests.reference.differential import Target
from compat_tests.reference.observe import create_topic
from compat_tests.streams_wire import heartbeat, join
from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    ["--list"],
    ["--list", "--state"],
    ["--describe", "--group", "wc-app", "--state"],
    ["--describe", "--group", "wc-app", "--members"],
    ["--describe", "--group", "wc-app"],
    ["--describe", "--group", "nope"],
]


@pytest.fixture(scope="module")
def tool_jvm(tmp_path_factory):
    jvm.require_kafka_jvm(javac=True)
    runner = jvm.ToolJvm(jvm.compile_java(tmp_path_factory.mktemp("streams-cli-java")))
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    proc = BrokerProcess(tmp_path_factory.mktemp("streams-cli"), {
        "offsets.topic.num.partitions": "1",
        "group.streams.initial.rebalance.delay.ms": "0"}).start()
    try:
        create_topic(Target("kafkapy", proc.bootstrap, None, 0), "words", partitions=2)
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": proc.bootstrap})
        for _ in range(3):
            producer.produce("words", b"x", partition=0)
        assert producer.flush(10) == 0
        with RawClient(proc.bootstrap) as c:
            r = join(c, "wc-app", "m1", "wc-app")
            deadline = time.monotonic() + 20
            while not r.active_tasks and time.monotonic() < deadline:
                time.sleep(0.3)
                r = heartbeat(c, "wc-app", "m1", r.member_epoch, active={}, standby={}, warmup={})
            assert r.active_tasks, r
            topic = commit9.OffsetCommitRequestTopic(name="words", partitions=(
                commit9.OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                     committed_leader_epoch=-1,
                                                     committed_metadata=""),))
            c.request(commit9.OffsetCommitRequest(
                group_id="wc-app", generation_id_or_member_epoch=r.member_epoch, member_id="m1",
                group_instance_id=None, topics=(topic,)))
        yield proc
    finally:
        assert proc.stop() == 0, proc.log_text()[-3000:]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_the_same_output_as_kafkas_tool(broker, tool_jvm, args) -> None:
    java = tool_jvm.run("org.apache.kafka.tools.streams.StreamsGroupCommand",
                        "--bootstrap-server", broker.bootstrap, *args, timeout=60, check=False)
    ours = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "streams-groups",
                           "--bootstrap-server", broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert (ours.returncode, ours.stdout) == (java.returncode, java.stdout), ours.stderr
    if args == ["--describe", "--group", "wc-app"]:
        assert "wc-app          words              0          2" in ours.stdout
