"""Share groups (KIP-932) with Apache Kafka 4.4's KafkaShareConsumer against kafkapy
(java44/ShareGroupClient.java, compiled against the 4.4 client): implicit and explicit
acknowledgement, two consumers splitting one partition's records (none delivered to both), a
consumer killed (kill -9) while holding acquisition locks whose records go to another consumer
once the locks expire, a poison record archived at the delivery count limit, and a broker killed
and restarted in the middle of a group's consumption: nothing acknowledged is delivered again,
everything unacknowledged is."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

SOURCES = Path(__file__).with_name("java44")
BROKER = {
    "offsets.topic.num.partitions": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    # locks of 2 s (4.4's lower bound is 15 s by default), so expiry is quick to observe
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.record.lock.duration.ms": "2000",
}


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    jvm.require_kafka_jvm(javac=True)
    return jvm.compile_java(tmp_path_factory.mktemp("share-java"), SOURCES, client="4.4")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    proc = BrokerProcess(tmp_path_factory.mktemp("share-broker"), BROKER).start()
    yield proc
    assert proc.stop() == 0, proc.log_text()[-3000:]


def run(classes: Path, broker: BrokerProcess, scenario: str, *args: str) -> dict[str, str]:
    proc = jvm.run_java("ShareGroupClient", scenario, broker.bootstrap, *args,
                        extra_cp=(classes,), timeout=90, check=False, client="4.4")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    return parse(proc.stdout)


def parse(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        out.update(re.findall(r"(\S+?)=(\S*)", line))
    return out


def hold(classes: Path, broker: BrokerProcess, *args: str) -> tuple[subprocess.Popen, dict]:
    """Start a consumer that holds locks; return it (still running) and what it printed."""
    cmd = jvm.java_command("ShareGroupClient", "hold", broker.bootstrap, *args,
                           extra_cp=(classes,), client="4.4")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("hold "), line
    return proc, parse(line)


def offsets(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def test_implicit_acknowledgement(classes, broker):
    out = run(classes, broker, "implicit", "sq-implicit", "g-implicit", "10")
    assert out["received"] == "0"  # the second consumer: everything was acknowledged
    assert out["distinct"] == "10"


def test_explicit_accept_release_reject(classes, broker):
    out = run(classes, broker, "explicit", "sq-explicit", "g-explicit")
    assert out == {"first": "6", "redelivered": "e3", "count": "2", "after": "0"}


def test_two_consumers_split_one_partition(classes, broker):
    out = run(classes, broker, "split", "sq-split", "g-split", "200")
    assert out == {"distinct": "200", "dups": "0", "both": "true"}


def test_poison_record_archived_at_the_delivery_limit(classes, broker):
    out = run(classes, broker, "poison", "sq-poison", "g-poison")
    assert out == {"deliveries": "2", "max_count": "2", "ok": "ok1,ok2"}


def test_killed_consumer_records_go_to_another_after_the_lock(classes, broker):
    proc, held = hold(classes, broker, "sq-kill", "g-kill", "8", "3")
    proc.kill()
    proc.wait()
    assert offsets(held["accepted"]) == [0, 1, 2]
    out = run(classes, broker, "drain", "sq-kill", "g-kill", "5")
    assert offsets(out["offsets"]) == [3, 4, 5, 6, 7]
    assert set(out["counts"].split(",")) == {"2"}


def test_broker_restart_loses_no_acknowledgement(classes, broker):
    proc, held = hold(classes, broker, "sq-restart", "g-restart", "20", "12")
    broker.kill()  # kill -9 while the consumer holds locks on 8 records
    proc.kill()
    proc.wait()
    broker.start()
    assert offsets(held["accepted"]) == list(range(12))
    out = run(classes, broker, "drain", "sq-restart", "g-restart", "5")
    assert offsets(out["offsets"]) == list(range(12, 20))
    assert set(out["counts"].split(",")) == {"2"}
