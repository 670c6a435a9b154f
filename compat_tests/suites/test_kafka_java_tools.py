"""Apache Kafka's own command-line tools (Java, Kafka 4.4) against kafkapy, next to kafkapy's
tools of the same name (scripts/kafka-*.sh): same flags, same output.

The Java tools come from Maven Central (see artifacts.py and jvm.py): TopicCommand,
ProducerPerformance, ConsumerPerformance, ConsoleConsumer, GetOffsetShell and
DeleteRecordsCommand, run one after the other in one JVM (java/ToolRunner.java: Kafka's Exit
hook ends a tool instead of the JVM, as in Kafka's own tool tests).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.suites import jvm

pytestmark = pytest.mark.timeout(300)

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
TOOLS = "org.apache.kafka.tools."
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PRODUCER_PERF = re.compile(
    r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$")
CONSUMER_PERF_HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, "
                        "data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, "
                        "fetch.MB.sec, fetch.nMsg.sec")
CONSUMER_PERF_ROW = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, "
    r"(\d+\.\d{4}), -?\d+\.\d{4}, (\d+), -?\d+\.\d{4}, -?\d+, -?\d+, -?\d+\.\d{4}, -?\d+\.\d{4}$")


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    jvm.require_kafka_jvm()
    # the runtime install scripts/kafka-*.sh run from (built on first use)
    subprocess.run([str(SCRIPTS / "bootstrap.sh")], check=True, timeout=600)
    # no initial rebalance delay, as Kafka's shipped config/server.properties sets it
    return module_broker_factory({"group.initial.rebalance.delay.ms": "0"},
                                 name="java-tools-broker")


@pytest.fixture(autouse=True)
def _tool_jvm(tools):
    global _tools
    _tools = tools


_tools: jvm.ToolJvm | None = None


def java(cls: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """One of Kafka's tools, run in the module's tool JVM (java/ToolRunner.java)."""
    assert _tools is not None
    return _tools.run(TOOLS + cls, *args, check=check)


def kafkapy(script: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{script} {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def both(java_cls: str, script: str, *args: str, check: bool = True):
    return java(java_cls, *args, check=check), kafkapy(script, *args, check=check)


def create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(15)


def test_topic_command(broker):
    b = ["--bootstrap-server", broker.bootstrap]
    for run, topic in ((java, "tc-java"), (lambda _c, *a: kafkapy("kafka-topics.sh", *a),
                                           "tc-py")):
        out = run("TopicCommand", *b, "--create", "--topic", topic, "--partitions", "2",
                  "--replication-factor", "1", "--config", "retention.ms=86400000",
                  "--config", "cleanup.policy=compact")
        assert out.stdout == f"Created topic {topic}.\n"

    def same_describe() -> str:
        j, p = both("TopicCommand", "kafka-topics.sh", *b, "--describe", "--topic", "tc-.*")
        assert j.stdout == p.stdout
        return j.stdout

    text = same_describe()
    for topic in ("tc-java", "tc-py"):
        assert re.search(rf"^Topic: {topic}\tTopicId: [\w-]{{22}}\tPartitionCount: 2\t"
                         r"ReplicationFactor: 1\tConfigs: min.insync.replicas=1,"
                         r"cleanup.policy=compact,retention.ms=86400000$", text, re.M), text
    # alter with each tool, then both describe the same result
    java("TopicCommand", *b, "--alter", "--topic", "tc-java", "--partitions", "4")
    kafkapy("kafka-topics.sh", *b, "--alter", "--topic", "tc-py", "--partitions", "4")
    text = same_describe()
    assert text.count("PartitionCount: 4") == 2 and text.count("\tPartition: ") == 8
    j, p = both("TopicCommand", "kafka-topics.sh", *b, "--list")
    assert j.stdout == p.stdout and {"tc-java", "tc-py"} <= set(j.stdout.split())
    # a refusal: both exit 1 (the message wording is each tool's own, see the README)
    j, p = both("TopicCommand", "kafka-topics.sh", *b, "--create", "--topic", "tc-java",
                check=False)
    assert (j.returncode, p.returncode) == (1, 1), (j.stdout, p.stderr)
    assert "Topic 'tc-java' already exists." in j.stdout and "already exists" in p.stderr
    java("TopicCommand", *b, "--delete", "--topic", "tc-java")
    kafkapy("kafka-topics.sh", *b, "--delete", "--topic", "tc-p.*")  # a regex, as Kafka's takes
    left = kafkapy("kafka-topics.sh", *b, "--list").stdout.split()
    assert "tc-java" not in left and "tc-py" not in left


def check_producer_perf(out: subprocess.CompletedProcess[str], n: int) -> None:
    m = PRODUCER_PERF.match(out.stdout.strip().splitlines()[-1])
    assert m and int(m.group(1)) == n, out.stdout


def check_consumer_perf(out: subprocess.CompletedProcess[str], n: int) -> None:
    lines = out.stdout.strip().splitlines()
    assert lines[0] == CONSUMER_PERF_HEADER, out.stdout
    m = CONSUMER_PERF_ROW.match(lines[1])
    assert m and int(m.group(2)) == n, out.stdout
    assert float(m.group(1)) == round(n * 100 / 1024 / 1024, 4)


def perf_args(broker, topic: str, n: int, codec: str) -> list[str]:
    return ["--topic", topic, "--num-records", str(n), "--record-size", "100", "--throughput",
            "-1", "--bootstrap-server", broker.bootstrap, "--command-property",
            f"compression.type={codec}", "acks=all"]


@pytest.mark.parametrize("codec", CODECS)
def test_java_producer_perf_every_codec(broker, codec):
    """Kafka's ProducerPerformance with each codec; kafkapy's consumer-perf-test reads it back
    (librdkafka decompressing the Java client's batches)."""
    n = 2000
    check_producer_perf(java("ProducerPerformance", *perf_args(broker, f"pj-{codec}", n, codec)),
                        n)
    check_consumer_perf(kafkapy("kafka-consumer-perf-test.sh", "--bootstrap-server",
                                broker.bootstrap, "--topic", f"pj-{codec}", "--num-records",
                                str(n), "--timeout", "30000"), n)


def test_kafkapy_perf_tools_read_by_java(broker):
    """kafkapy's producer-perf-test writes (zstd, the last codec added); Kafka's
    ConsumerPerformance reads it; both print the same formats as their Java namesakes."""
    n = 2000
    check_producer_perf(kafkapy("kafka-producer-perf-test.sh",
                                *perf_args(broker, "pp-zstd", n, "zstd")), n)
    check_consumer_perf(java("ConsumerPerformance", "--bootstrap-server", broker.bootstrap,
                             "--topic", "pp-zstd", "--num-records", str(n), "--timeout",
                             "30000"), n)


def warnings_of(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in out.stdout.splitlines()
            if line.startswith(("Warning: ", "Option ")) and "deprecated" in line]


def test_deprecated_flags_warn_alike(broker, tmp_path):
    """Kafka 4.4's tools take their 3.x flags with a warning each, on stdout, in their own
    order; kafkapy's namesakes say the same."""
    create(broker.bootstrap, "depr", 1)
    props = tmp_path / "depr.properties"
    props.write_text("client.id=depr\n")
    b = ["--bootstrap-server", broker.bootstrap, "--topic", "depr"]
    runs = {
        ("ConsoleProducer", "kafka-console-producer.sh"): [
            *b, "--property", "parse.key=true", "--producer.config", str(props),
            "--producer-property", "acks=1"],
        ("consumer.ConsoleConsumer", "kafka-console-consumer.sh"): [
            *b, "--property", "print.key=true", "--consumer.config", str(props),
            "--consumer-property", "fetch.min.bytes=1", "--timeout-ms", "500"],
        ("ProducerPerformance", "kafka-producer-perf-test.sh"): [
            "--topic", "depr", "--num-records", "1", "--record-size", "10", "--throughput", "-1",
            "--producer.config", str(props), "--producer-props",
            f"bootstrap.servers={broker.bootstrap}"],
    }
    for (cls, script), args in runs.items():
        # a JVM of its own: ConsoleProducer reads stdin, which the tool JVM's commands arrive on
        j = jvm.run_java(TOOLS + cls, *args, check=False)
        py = kafkapy(script, *args, check=False)
        assert warnings_of(j) and warnings_of(j) == warnings_of(py), (cls, j.stdout, py.stdout)


def test_consumer_perf_deprecated_flags_warn_alike(broker, tmp_path):
    """Kafka 4.4's ConsumerPerformance still takes --messages and --consumer.config, with a
    warning line each on stdout before the header; kafkapy's namesake says the same."""
    create(broker.bootstrap, "perf-flags", 1)
    props = tmp_path / "perf-flags.properties"
    props.write_text("client.id=perf-flags\n")
    args = ["--bootstrap-server", broker.bootstrap, "--topic", "perf-flags", "--messages", "1",
            "--consumer.config", str(props), "--timeout", "1000"]
    j = java("ConsumerPerformance", *args).stdout.splitlines()
    py = kafkapy("kafka-consumer-perf-test.sh", *args).stdout.splitlines()
    assert j[:3] == py[:3] == [
        "Warning: --messages is deprecated. Use --num-records instead.",
        "Warning: --consumer.config is deprecated. Use --command-config instead.",
        CONSUMER_PERF_HEADER]


def test_producer_perf_transactions(broker):
    """--transaction-duration-ms and --transactional-id with each tool: the same summary, a
    commit marker per transaction (100 ms each over a 300 ms run), every record committed."""
    from compat_tests.txn_clients import read_all

    n = 600
    for tool, topic in (("java", "ptx-java"), ("kafkapy", "ptx-py")):
        create(broker.bootstrap, topic, 1)
        args = ["--topic", topic, "--num-records", str(n), "--record-size", "100",
                "--throughput", "2000", "--transaction-duration-ms", "100",
                "--transactional-id", f"perf-{topic}", "--command-property",
                f"bootstrap.servers={broker.bootstrap}"]
        out = (java("ProducerPerformance", *args) if tool == "java"
               else kafkapy("kafka-producer-perf-test.sh", *args))
        check_producer_perf(out, n)
        end = kafkapy("kafka-get-offsets.sh", "--bootstrap-server", broker.bootstrap,
                      "--topic", topic).stdout
        assert int(end.split(":")[-1]) - n >= 2, (tool, end)
        assert len(read_all(broker.bootstrap, topic, "read_committed")) == n, tool
        described = kafkapy("kafka-transactions.sh", "--bootstrap-server", broker.bootstrap,
                            "describe", "--transactional-id", f"perf-{topic}").stdout
        assert described.splitlines()[1].split()[4] == "CompleteCommit", (tool, described)


def test_console_consumer_keys_and_groups(broker):
    create(broker.bootstrap, "console", 1)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    records = [(b"k1", b"v1", [("h", b"x")]), (None, b"no key", None), (b"k3", b"", None),
               (b"k4", b"with\ttab", [("a", b"1"), ("b", b"2")])]
    for i, (k, v, h) in enumerate(records):
        p.produce("console", key=k, value=v, headers=h, timestamp=1_700_000_000_000 + i)
    p.flush(10)
    shown = [arg for prop in ("print.key=true", "print.partition=true", "print.offset=true",
                              "print.headers=true", "print.timestamp=true", "key.separator=|")
             for arg in ("--formatter-property", prop)]
    base = ["--bootstrap-server", broker.bootstrap, "--topic", "console"]
    j = java("consumer.ConsoleConsumer", *base, "--from-beginning", "--max-messages", "4",
             *shown, "--group", "cc-java")
    py = kafkapy("kafka-console-consumer.sh", *base, "--from-beginning", "--max-messages", "4",
                 *shown, "--group", "cc-py")
    assert j.stdout == py.stdout
    assert j.stdout.splitlines()[0] == "CreateTime:1700000000000|Partition:0|Offset:0|h:x|k1|v1"
    assert j.stdout.splitlines()[1].endswith("|NO_HEADERS|null|no key")
    for out in (j, py):
        assert "Processed a total of 4 messages" in out.stderr
    # the groups committed their position: a second run of each reads nothing
    again = [java("consumer.ConsoleConsumer", *base, "--group", "cc-java", "--timeout-ms", "1500"),
             kafkapy("kafka-console-consumer.sh", *base, "--group", "cc-py", "--timeout-ms",
                     "1500")]
    for out in again:
        assert out.stdout == "" and "Processed a total of 0 messages" in out.stderr


def test_get_offset_shell(broker):
    create(broker.bootstrap, "offsets-a", 2)
    create(broker.bootstrap, "offsets-b", 1)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(30):
        topic, partition = ("offsets-a", 0) if i % 2 == 0 else ("offsets-b", 0)
        p.produce(topic, value=b"x", partition=partition, timestamp=1_700_000_000_000 + i * 10)
    p.flush(10)
    b = ["--bootstrap-server", broker.bootstrap]
    cases = {("--topic", "offsets-.*"): "offsets-a:0:15\noffsets-a:1:0\noffsets-b:0:15\n",
             ("--topic-partitions", "offsets-.*:0", "--time", "-2"):
                 "offsets-a:0:0\noffsets-b:0:0\n",
             ("--topic", "offsets-b", "--time", "-3"): "offsets-b:0:14\n",
             ("--topic", "offsets-b", "--time", str(1_700_000_000_000 + 55)): "offsets-b:0:3\n"}
    for args, expected in cases.items():
        j, py = both("GetOffsetShell", "kafka-get-offsets.sh", *b, *args)
        assert j.stdout == py.stdout == expected, args


def test_delete_records_command(broker, tmp_path):
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for topic in ("trim-java", "trim-py"):
        create(broker.bootstrap, topic, 2)
        for i in range(20):
            p.produce(topic, value=b"x", partition=i % 2)
    p.flush(10)
    outputs = {}
    for topic, run in (("trim-java", lambda *a: java("DeleteRecordsCommand", *a)),
                       ("trim-py", lambda *a: kafkapy("kafka-delete-records.sh", *a))):
        spec = tmp_path / f"{topic}.json"
        spec.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": topic, "partition": 0, "offset": 4},
            {"topic": topic, "partition": 1, "offset": -1}]}))
        out = run("--bootstrap-server", broker.bootstrap, "--offset-json-file", str(spec))
        outputs[topic] = out.stdout.replace(topic, "T")
    # the same lines; Kafka 4.4 prints the partitions in its HashMap's order
    java_lines, py_lines = (outputs[t].splitlines() for t in ("trim-java", "trim-py"))
    assert java_lines[0] == py_lines[0] and sorted(java_lines) == sorted(py_lines)
    lines = outputs["trim-py"].splitlines()
    assert lines[:2] == ["Executing records delete operation",
                         "Records delete operation completed:"]
    # offset -1 means the high watermark (10 records in partition 1)
    assert sorted(lines[2:]) == ["partition: T-0\tlow_watermark: 4",
                                 "partition: T-1\tlow_watermark: 10"]


def test_feature_command(broker):
    """kafka-features.sh describe lists the features kafkapy implements (server/features.py);
    upgrades to the running level pass, others are refused in Apache Kafka 4.4's words."""
    b = broker.bootstrap
    out = java("FeatureCommand", "--bootstrap-server", b, "describe").stdout
    lines = {line.split()[1]: line.split() for line in out.splitlines()
             if line.startswith("Feature:")}
    assert set(lines) == {"eligible.leader.replicas.version", "group.version", "kraft.version",
                          "share.version", "streams.version", "transaction.version"}, out
    assert lines["group.version"][2:8] == ["SupportedMinVersion:", "1", "SupportedMaxVersion:",
                                           "1", "FinalizedVersionLevel:", "1"], out
    ok = java("FeatureCommand", "--bootstrap-server", b, "upgrade", "--feature",
              "group.version=1")
    assert "group.version was upgraded to 1." in ok.stdout, ok.stdout
    refused = java("FeatureCommand", "--bootstrap-server", b, "upgrade", "--feature",
                   "eligible.leader.replicas.version=1", check=False)
    assert refused.returncode != 0
    assert ("Could not upgrade eligible.leader.replicas.version to 1. The update failed for all "
            "features since the following feature had an error: Invalid update version 1 for "
            "feature eligible.leader.replicas.version. Local controller 0 only supports versions "
            "0-0") in refused.stdout, refused
