"""The Kafka-named tools run as real subprocesses against a real kafkapy broker (and ZooKeeper),
their output compared with Kafka's formats."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkapy.testing import free_port

ROOT = Path(__file__).resolve().parents[1]


def kafkapy(*args: str, input: bytes | str | None = None, timeout: float = 60, check=True):
    if isinstance(input, str):
        input = input.encode()
    proc = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", *args],
        input=input,
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"kafkapy {' '.join(args)} exited {proc.returncode}:\n{proc.stdout.decode()}\n"
            f"{proc.stderr.decode()}"
        )
    return proc


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    return module_broker_factory(name="cli-broker")


def served_api_keys(bootstrap: str) -> set[int]:
    out = kafkapy("broker-api-versions", "--bootstrap-server", bootstrap).stdout.decode()
    return {int(k) for k in re.findall(r"\((\d+)\): \d+(?: to \d+)? \[usable", out)}


def test_topics_lifecycle(broker):
    b = broker.bootstrap
    out = kafkapy(
        "topics",
        "--bootstrap-server",
        b,
        "--create",
        "--topic",
        "orders",
        "--partitions",
        "3",
        "--replication-factor",
        "1",
        "--config",
        "retention.ms=86400000",
    ).stdout.decode()
    assert out == "Created topic orders.\n"
    again = kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "orders", check=False)
    assert again.returncode == 1 and again.stdout == b""
    assert again.stderr.decode().count("\n") == 1 and "already exists" in again.stderr.decode()
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "orders", "--if-not-exists")
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "plain")

    listing = kafkapy("topics", "--bootstrap-server", b, "--list").stdout.decode().split("\n")
    assert {"orders", "plain"} <= set(listing)
    assert listing == sorted(listing[:-1]) + [""]

    desc = kafkapy("topics", "--bootstrap-server", b, "--describe", "--topic", "orders")
    lines = desc.stdout.decode().splitlines()
    assert re.fullmatch(
        r"Topic: orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 1\t"
        # min.insync.replicas: the cluster-wide dynamic default a new cluster gets, as on 4.4
        r"Configs: min.insync.replicas=1,retention.ms=86400000",
        lines[0],
    ), lines[0]
    assert lines[1:] == [
        # Kafka's tool, through DescribeTopicPartitions: ELR lists present and empty
        f"\tTopic: orders\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: "
        for p in range(3)
    ]

    kafkapy("topics", "--bootstrap-server", b, "--alter", "--topic", "orders", "--partitions", "5")
    desc = kafkapy("topics", "--bootstrap-server", b, "--describe", "--topic", "orders")
    assert "\tPartitionCount: 5\t" in desc.stdout.decode().splitlines()[0]

    def with_overrides() -> list[str]:
        out = kafkapy("topics", "--bootstrap-server", b, "--describe", "--topics-with-overrides")
        return [line.split("\t")[0] for line in out.stdout.decode().splitlines()]

    # as on Kafka 4.4, the cluster-wide default of min.insync.replicas a new cluster gets is not
    # a default to TopicCommand (source DYNAMIC_DEFAULT_BROKER_CONFIG): every topic has it
    assert {"Topic: orders", "Topic: plain"} <= set(with_overrides())
    kafkapy("configs", "--bootstrap-server", b, "--alter", "--entity-type", "brokers",
            "--entity-default", "--delete-config", "min.insync.replicas")
    names = with_overrides()
    assert "Topic: orders" in names and "Topic: plain" not in names
    healthy = kafkapy(
        "topics", "--bootstrap-server", b, "--describe", "--under-replicated-partitions"
    )
    assert healthy.stdout == b""

    kafkapy("topics", "--bootstrap-server", b, "--delete", "--topic", "plain")
    deadline = time.monotonic() + 10
    while "plain" in kafkapy("topics", "--bootstrap-server", b, "--list").stdout.decode().split():
        assert time.monotonic() < deadline, "deleted topic still listed"
        time.sleep(0.2)
    missing = kafkapy(
        "topics", "--bootstrap-server", b, "--describe", "--topic", "plain", check=False
    )
    assert missing.returncode == 1
    assert missing.stderr.decode().strip() == "Error: Topic 'plain' does not exist as expected"


def test_console_round_trip_100k_lines_with_keys_and_headers(broker, tmp_path):
    b = broker.bootstrap
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "lines", "--partitions", "1")
    n = 100_000
    text = "".join(f"trace:{i % 7},n:{i}\tkey-{i}\tvalue {i} with\ttab\n" for i in range(n))
    (tmp_path / "in.txt").write_text(text)
    with open(tmp_path / "in.txt", "rb") as f:
        produced = subprocess.run(
            [
                sys.executable,
                "-m",
                "kafkapy.cli.main",
                "console-producer",
                "--bootstrap-server",
                b,
                "--topic",
                "lines",
                "--reader-property",
                "parse.key=true",
                "--reader-property",
                "parse.headers=true",
                "--compression-codec",
                "lz4",
            ],
            stdin=f,
            capture_output=True,
            timeout=120,
            cwd=ROOT,
        )
    assert produced.returncode == 0, produced.stderr.decode()
    consumed = kafkapy(
        "console-consumer",
        "--bootstrap-server",
        b,
        "--topic",
        "lines",
        "--from-beginning",
        "--max-messages",
        str(n),
        "--formatter-property",
        "print.key=true",
        "--formatter-property",
        "print.headers=true",
        "--formatter-property",
        "print.offset=true",
        timeout=120,
    )
    out = consumed.stdout.decode().splitlines()
    assert len(out) == n
    assert out[0] == "Offset:0\ttrace:0,n:0\tkey-0\tvalue 0 with\ttab"
    assert (
        out[-1] == f"Offset:{n - 1}\ttrace:{(n - 1) % 7},n:{n - 1}\tkey-{n - 1}\tvalue {n - 1}"
        " with\ttab"
    )
    expected = [f"Offset:{i}\t" + line for i, line in enumerate(text.splitlines())]
    assert out == expected
    assert consumed.stderr.decode().strip().endswith(f"Processed a total of {n} messages")


def test_console_producer_is_idempotent_as_kafkas(broker):
    """Kafka's console producer uses the Java producer's default, enable.idempotence=true, which
    is turned off silently when acks is not all or retries is 0, and refused when asked for
    together with them."""
    b = broker.bootstrap

    def produce(topic: str, *args: str, check: bool = True):
        kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", topic)
        return kafkapy(
            "console-producer", "--bootstrap-server", b, "--topic", topic, *args,
            input="a\nb\nc\n", check=check,
        )

    def producers(topic: str) -> list[list[str]]:
        out = kafkapy(
            "transactions", "--bootstrap-server", b, "describe-producers", "--topic", topic,
            "--partition", "0",
        ).stdout
        assert out.startswith(b"ProducerId\t")
        return [[c.strip() for c in line.split("\t")] for line in out.decode().splitlines()[1:]]

    produce("idem")
    (row,) = producers("idem")
    assert int(row[0]) >= 0 and row[3] == "2"  # a producer id; sequences 0-2
    produce("idem-acks1", "--request-required-acks", "1")
    produce("idem-off", "--command-property", "enable.idempotence=false")
    produce("idem-no-retries", "--message-send-max-retries", "0")
    assert producers("idem-acks1") == producers("idem-off") == producers("idem-no-retries") == []
    conflict = produce(
        "idem-conflict", "--request-required-acks", "1",
        "--command-property", "enable.idempotence=true", check=False,
    )
    assert conflict.returncode == 1
    assert conflict.stderr.decode().strip().splitlines() == [
        "Error: Failed to create producer: `acks` must be set to `all` when `enable.idempotence`"
        " is true"
    ]


def test_console_consumer_partition_offset_and_timeout(broker):
    b = broker.bootstrap
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "five", "--partitions", "2")
    lines = "".join(f"{i % 2}:v{i}\n" for i in range(10))
    kafkapy(
        "console-producer",
        "--bootstrap-server",
        b,
        "--topic",
        "five",
        "--sync",
        "--reader-property",
        "parse.key=true",
        "--reader-property",
        "key.separator=:",
        input=lines,
    )
    total = kafkapy(
        "console-consumer",
        "--bootstrap-server",
        b,
        "--topic",
        "five",
        "--from-beginning",
        "--timeout-ms",
        "1500",
        "--formatter-property",
        "print.partition=true",
    )
    assert len(total.stdout.decode().splitlines()) == 10
    assert "Processed a total of 10 messages" in total.stderr.decode()
    counts = kafkapy("get-offsets", "--bootstrap-server", b, "--topic", "five").stdout.decode()
    n0 = int(counts.splitlines()[0].rsplit(":", 1)[1])
    if n0 == 0:
        return
    part = kafkapy(
        "console-consumer",
        "--bootstrap-server",
        b,
        "--topic",
        "five",
        "--partition",
        "0",
        "--offset",
        "0",
        "--max-messages",
        str(n0),
        "--formatter-property",
        "print.partition=true",
        "--formatter-property",
        "print.offset=true",
    )
    got = part.stdout.decode().splitlines()
    assert [line.split("\t")[:2] for line in got] == [
        ["Partition:0", f"Offset:{i}"] for i in range(n0)
    ]


def test_console_consumer_exits_cleanly_on_sigint(broker):
    b = broker.bootstrap
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "live")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafkapy.cli.main",
            "console-consumer",
            "--bootstrap-server",
            b,
            "--topic",
            "live",
            "--from-beginning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        time.sleep(1.5)
        kafkapy(
            "console-producer",
            "--bootstrap-server",
            b,
            "--topic",
            "live",
            input="one\ntwo\nthree\n",
        )
        os.set_blocking(proc.stdout.fileno(), False)
        got = b""
        deadline = time.monotonic() + 15
        while got.count(b"\n") < 3 and time.monotonic() < deadline:
            got += proc.stdout.read() or b""
            time.sleep(0.1)
        assert got == b"one\ntwo\nthree\n"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(15)
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0
    assert err.strip().splitlines()[-1] == "Processed a total of 3 messages"
    assert "Traceback" not in err


def test_get_offsets_and_delete_records(broker, tmp_path):
    b = broker.bootstrap
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "offs", "--partitions", "2")
    kafkapy(
        "console-producer",
        "--bootstrap-server",
        b,
        "--topic",
        "offs",
        "--reader-property",
        "parse.key=true",
        "--reader-property",
        "key.separator=:",
        input="".join(f"{k}:x\n" for k in ["a"] * 6 + ["b"] * 4),
    )
    latest = kafkapy("get-offsets", "--bootstrap-server", b, "--topic", "offs").stdout.decode()
    rows = latest.splitlines()
    assert [r.rsplit(":", 1)[0] for r in rows] == ["offs:0", "offs:1"]
    assert sum(int(r.rsplit(":", 1)[1]) for r in rows) == 10
    big = max(rows, key=lambda r: int(r.rsplit(":", 1)[1]))
    part = int(big.split(":")[1])
    earliest = kafkapy(
        "get-offsets",
        "--bootstrap-server",
        b,
        "--topic",
        "offs",
        "--time",
        "-2",
        "--partitions",
        str(part),
    ).stdout.decode()
    assert earliest == f"offs:{part}:0\n"
    doc = {"partitions": [{"topic": "offs", "partition": part, "offset": 3}], "version": 1}
    (tmp_path / "del.json").write_text(json.dumps(doc))
    out = kafkapy(
        "delete-records", "--bootstrap-server", b, "--offset-json-file", str(tmp_path / "del.json")
    ).stdout.decode()
    assert out == (
        "Executing records delete operation\nRecords delete operation completed:\n"
        f"partition: offs-{part}\tlow_watermark: 3\n"
    )
    earliest = kafkapy(
        "get-offsets",
        "--bootstrap-server",
        b,
        "--topic-partitions",
        f"offs:{part}",
        "--time",
        "earliest",
    ).stdout.decode()
    assert earliest == f"offs:{part}:3\n"


def test_configs_describe_and_alter(broker):
    b = broker.bootstrap
    kafkapy(
        "topics",
        "--bootstrap-server",
        b,
        "--create",
        "--topic",
        "cfg",
        "--config",
        "retention.ms=1000",
    )
    out = (
        kafkapy(
            "configs",
            "--bootstrap-server",
            b,
            "--describe",
            "--entity-type",
            "topics",
            "--entity-name",
            "cfg",
        )
        .stdout.decode()
        .splitlines()
    )
    assert out[0] == "Dynamic configs for topic cfg are:"
    assert out[1].startswith(
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000"
    )
    everything = (
        kafkapy("configs", "--bootstrap-server", b, "--describe", "--topic", "cfg", "--all")
        .stdout.decode()
        .splitlines()
    )
    assert everything[0] == "All configs for topic cfg are:"
    assert any(
        line.startswith("  cleanup.policy=delete sensitive=false synonyms={") for line in everything
    )
    brokers = (
        kafkapy("configs", "--bootstrap-server", b, "--describe", "--entity-type", "brokers")
        .stdout.decode()
        .splitlines()
    )
    assert brokers[0] == "Dynamic configs for broker 0 are:"
    assert "Default configs for brokers in the cluster are:" in brokers
    gone = kafkapy("configs", "--bootstrap-server", b, "--describe", "--topic", "nope")
    assert gone.stdout.decode() == (
        "The topic 'nope' doesn't exist and doesn't have dynamic config.\n"
    )
    assert 44 in served_api_keys(b)  # IncrementalAlterConfigs, which --alter uses
    done = kafkapy(
        "configs",
        "--bootstrap-server",
        b,
        "--alter",
        "--topic",
        "cfg",
        "--add-config",
        "retention.ms=2000,cleanup.policy=[compact,delete]",
    )
    assert done.stdout.decode() == "Completed updating config for topic cfg.\n"
    out = kafkapy("configs", "--bootstrap-server", b, "--describe", "--topic", "cfg")
    text = out.stdout.decode()
    assert "  retention.ms=2000 " in text and "  cleanup.policy=compact,delete " in text
    kafkapy(
        "configs",
        "--bootstrap-server",
        b,
        "--alter",
        "--topic",
        "cfg",
        "--delete-config",
        "retention.ms",
    )
    text = kafkapy("configs", "--bootstrap-server", b, "--describe", "--topic", "cfg").stdout
    assert b"retention.ms" not in text


def test_broker_api_versions(broker):
    out = kafkapy("broker-api-versions", "--bootstrap-server", broker.bootstrap).stdout.decode()
    lines = out.splitlines()
    assert lines[0] == f"{broker.bootstrap} (id: 0 rack: null isFenced: false) -> ("
    assert "\tApiVersions(18): 0 to 5 [usable: 5]," in lines
    assert "\tProduce(0): 0 to 13 [usable: 13]," in lines
    assert lines[-1] == ")"


def test_producer_perf_test(broker):
    out = kafkapy(
        "producer-perf-test",
        "--topic",
        "perf",
        "--num-records",
        "20000",
        "--record-size",
        "100",
        "--throughput",
        "-1",
        "--command-property",
        f"bootstrap.servers={broker.bootstrap}",
        "acks=all",
    ).stdout.decode()
    last = out.splitlines()[-1]
    assert re.fullmatch(
        r"20000 records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg "
        r"latency, \d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, "
        r"\d+ ms 99\.9th\.",
        last,
    ), last
    offsets = kafkapy("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", "perf")
    assert sum(int(x.rsplit(":", 1)[1]) for x in offsets.stdout.decode().split()) == 20000


PERF_TOTAL = re.compile(
    r"(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), ([\d.]+) ms avg latency, "
    r"[\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\."
)


def perf_run(bootstrap: str, topic: str, n: int, *extra: str) -> re.Match[str]:
    out = kafkapy(
        "producer-perf-test",
        *("--topic", topic, "--num-records", str(n), "--record-size", "100"),
        *extra,
        *("--command-property", f"bootstrap.servers={bootstrap}", "acks=all"),
    ).stdout.decode()
    m = PERF_TOTAL.fullmatch(out.splitlines()[-1])
    assert m and int(m.group(1)) == n, out
    return m


def test_producer_perf_test_throttled_latency_is_the_records(broker):
    """A throttled run reports each record's time to its acknowledgement, not the time until
    the tool next served delivery reports (it used to, every 1,000 records: at 1,000
    records/s that made the median latency about 500 ms)."""
    m = perf_run(broker.bootstrap, "perf-throttled", 1500, "--throughput", "1000")
    assert int(m.group(3)) < 250, m.group(0)


def test_producer_perf_test_transactions(broker):
    """--transaction-duration-ms, as Kafka's ProducerPerformance: one transaction per 100 ms
    under --transactional-id, committed; each commit leaves a marker on the partition."""
    kafkapy(
        *("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic"),
        *("perf-txn", "--partitions", "1", "--replication-factor", "1"),
    )
    n = 600
    perf_run(
        broker.bootstrap,
        "perf-txn",
        n,
        "--throughput",
        "2000",
        "--transaction-duration-ms",
        "100",
        "--transactional-id",
        "perf-app",
    )
    offsets = kafkapy("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", "perf-txn")
    markers = int(offsets.stdout.decode().split(":")[-1]) - n
    assert markers >= 2, offsets.stdout  # 300 ms of records at least: three transactions
    described = kafkapy(
        "transactions",
        "--bootstrap-server",
        broker.bootstrap,
        "describe",
        "--transactional-id",
        "perf-app",
    ).stdout.decode()
    assert described.splitlines()[1].split()[4] == "CompleteCommit", described
    out = kafkapy(
        *("console-consumer", "--bootstrap-server", broker.bootstrap, "--topic", "perf-txn"),
        *("--from-beginning", "--isolation-level", "read_committed", "--timeout-ms", "5000"),
    )
    assert len(out.stdout.splitlines()) == n


@pytest.mark.parametrize(
    "args",
    [
        ["topics", "--list"],
        ["console-consumer", "--topic", "t", "--timeout-ms", "100"],
        ["configs", "--describe", "--topic", "t"],
        ["get-offsets", "--topic", "t"],
        ["broker-api-versions"],
        ["consumer-groups", "--list"],
    ],
)
def test_unreachable_cluster_is_one_line(args):
    port = free_port()
    proc = kafkapy(
        args[0], "--bootstrap-server", f"127.0.0.1:{port}", *args[1:], check=False, timeout=40
    )
    err = proc.stderr.decode()
    assert proc.returncode != 0
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("Error")], err


def test_wrapper_scripts_run_the_tools(broker):
    for name in ("kafka-topics.sh", "kafka-console-producer.sh", "zookeeper-shell.sh"):
        assert os.access(ROOT / "scripts" / name, os.X_OK)
    out = subprocess.run(
        [
            str(ROOT / "scripts" / "kafka-topics.sh"),
            "--bootstrap-server",
            broker.bootstrap,
            "--list",
        ],
        capture_output=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr.decode()


# -- consumer groups (need the broker's group coordinator APIs) ------------------------------------


def test_consumer_groups_describe_reset_and_delete(broker):
    b = broker.bootstrap
    assert {10, 11, 14, 15, 16, 8, 9, 42} <= served_api_keys(b)  # the group coordinator APIs
    kafkapy("topics", "--bootstrap-server", b, "--create", "--topic", "grp", "--partitions", "2")
    # Keys "0" and "1" hash (murmur2) to partitions 0 and 1: five records each. Keyless records
    # would land where the client's sticky partitioner puts them, all in one partition when the
    # topic's metadata arrives before the last line is read (as on a loaded machine).
    kafkapy(
        "console-producer",
        "--bootstrap-server",
        b,
        "--topic",
        "grp",
        "--reader-property",
        "parse.key=true",
        "--reader-property",
        "key.separator=:",
        input="".join(f"{i % 2}:m{i}\n" for i in range(10)),
    )
    first = kafkapy(
        "console-consumer",
        "--bootstrap-server",
        b,
        "--topic",
        "grp",
        "--group",
        "g1",
        "--from-beginning",
        "--max-messages",
        "10",
        timeout=60,
    )
    assert len(first.stdout.decode().splitlines()) == 10
    listed = kafkapy("consumer-groups", "--bootstrap-server", b, "--list").stdout.decode()
    assert "g1" in listed.split()
    desc = kafkapy("consumer-groups", "--bootstrap-server", b, "--describe", "--group", "g1")
    lines = desc.stdout.decode().splitlines()
    assert lines[0] == ""
    assert lines[1].split() == [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    ]
    rows = [line.split() for line in lines[2:] if line]
    # (partition, current offset, log end offset, lag): both partitions committed at their end
    assert sorted(tuple(r[2:6]) for r in rows) == [("0", "5", "5", "0"), ("1", "5", "5", "0")]
    plan = kafkapy(
        "consumer-groups",
        "--bootstrap-server",
        b,
        "--reset-offsets",
        "--group",
        "g1",
        "--topic",
        "grp",
        "--to-earliest",
    ).stdout.decode()
    assert plan.splitlines()[1].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    kafkapy(
        "consumer-groups",
        "--bootstrap-server",
        b,
        "--reset-offsets",
        "--group",
        "g1",
        "--topic",
        "grp",
        "--shift-by",
        "-2",
        "--execute",
    )
    again = kafkapy(
        "console-consumer",
        "--bootstrap-server",
        b,
        "--topic",
        "grp",
        "--group",
        "g1",
        "--max-messages",
        "4",
        "--timeout-ms",
        "20000",
        timeout=60,
    )
    assert len(again.stdout.decode().splitlines()) == 4  # two partitions shifted back by two
    states = kafkapy("consumer-groups", "--bootstrap-server", b, "--list", "--state").stdout
    assert states.decode().splitlines()[0].split() == ["GROUP", "STATE"]
    offsets_deleted = kafkapy(
        "consumer-groups",
        "--bootstrap-server",
        b,
        "--delete-offsets",
        "--group",
        "g1",
        "--topic",
        "grp:0",
    ).stdout.decode()
    lines = offsets_deleted.splitlines()
    assert lines[0] == "Request succeeded for deleting offsets from group g1."
    assert lines[-1].split() == ["grp", "0", "Successful"]
    desc = kafkapy("consumer-groups", "--bootstrap-server", b, "--describe", "--group", "g1")
    committed = [line.split()[2] for line in desc.stdout.decode().splitlines()[2:] if line]
    assert committed == ["1"]  # partition 0's offset is gone
    deleted = kafkapy("consumer-groups", "--bootstrap-server", b, "--delete", "--group", "g1")
    assert (
        deleted.stdout.decode() == "Deletion of requested consumer groups ('g1') was successful.\n"
    )


def test_consumer_perf_test(broker):
    b = broker.bootstrap
    assert {10, 11, 14} <= served_api_keys(b)  # FindCoordinator, JoinGroup, SyncGroup
    kafkapy(
        "producer-perf-test",
        "--topic",
        "cperf",
        "--num-records",
        "5000",
        "--record-size",
        "50",
        "--throughput",
        "-1",
        "--command-property",
        f"bootstrap.servers={b}",
    )
    out = kafkapy(
        "consumer-perf-test",
        "--bootstrap-server",
        b,
        "--topic",
        "cperf",
        "--num-records",
        "5000",
        "--timeout",
        "20000",
        timeout=60,
    ).stdout.decode()
    head, line = out.splitlines()[-2:]
    assert head.startswith("start.time, end.time, data.consumed.in.MB")
    assert line.split(", ")[4] == "5000"


def test_consumer_perf_test_reads_uncommitted_as_kafkas(broker):
    """Kafka's ConsumerPerformance consumes with the Java default, read_uncommitted: records of
    aborted and open transactions count, and an open transaction does not stop it
    (librdkafka's default, read_committed, stopped the tool at the open transaction)."""
    from confluent_kafka import Producer

    b = broker.bootstrap
    kafkapy(*("topics", "--bootstrap-server", b, "--create", "--topic", "cperf-txn"),
            *("--partitions", "1", "--replication-factor", "1"))
    txn = Producer({"bootstrap.servers": b, "transactional.id": "cperf-app"})
    txn.init_transactions(30)
    for end in (txn.abort_transaction, None):
        txn.begin_transaction()
        txn.produce("cperf-txn", b"t")
        assert txn.flush(30) == 0
        if end:
            end(30)  # aborted, then one left open
    plain = Producer({"bootstrap.servers": b})
    plain.produce("cperf-txn", b"after")
    assert plain.flush(30) == 0
    out = kafkapy(
        *("consumer-perf-test", "--bootstrap-server", b, "--topic", "cperf-txn"),
        *("--num-records", "3", "--timeout", "20000"),
        timeout=60,
    ).stdout.decode()
    assert out.splitlines()[-1].split(", ")[4] == "3", out


# -- zookeeper-shell -------------------------------------------------------------------------------


@pytest.fixture
def zk_connect(zookeeper):
    """The connect string of a real ZooKeeper server of this test's own."""
    return zookeeper.connect_string


def test_zookeeper_shell_ls_get_stat(zk_connect):
    zookeeper = zk_connect
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=zookeeper)
    zk.start(timeout=10)
    try:
        zk.create("/brokers/ids/0", b'{"host":"h"}', makepath=True)
        zk.create("/brokers/ids/1", b"{}", makepath=True)
    finally:
        zk.stop()
        zk.close()
    ls = kafkapy("zookeeper-shell", zookeeper, "ls", "/brokers/ids").stdout.decode()
    assert ls.splitlines()[0] == f"Connecting to {zookeeper}"
    assert ls.splitlines()[-1] == "[0, 1]"
    get = kafkapy("zookeeper-shell", zookeeper, "get", "/brokers/ids/0").stdout.decode()
    assert get.splitlines()[-1] == '{"host":"h"}'
    stat = kafkapy("zookeeper-shell", zookeeper, "stat", "/brokers/ids").stdout.decode()
    tail = stat.splitlines()[-11:]
    assert tail[0].startswith("cZxid = 0x") and tail[-1] == "numChildren = 2"
    missing = kafkapy("zookeeper-shell", zookeeper, "get", "/nope", check=False)
    assert missing.returncode == 1
    assert missing.stdout.decode().splitlines()[-1] == "Node does not exist: /nope"
