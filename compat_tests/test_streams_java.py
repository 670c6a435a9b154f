"""A Kafka Streams 4.4 application with ``group.protocol=streams`` (KIP-1071) against kafkapy and
against Apache Kafka 4.4: java_streams/StreamsWordCount.java (compiled against Kafka 4.4's libs/,
which hold kafka-streams 4.4.0 from Maven Central) runs two instances of a word count (input ->
repartition by word -> count in a state store with a changelog -> output topic), both get
tasks, the second is closed mid-run and the first takes over its tasks; the counts on the output
topic must equal the words of the input, and the run against Apache Kafka 4.4 prints the same
lines. The broker creates the repartition and changelog topics itself (MISSING_INTERNAL_TOPICS)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from compat_tests.reference.differential import Target
from compat_tests.reference.kafka_broker import ReferenceKafka
from compat_tests.reference.observe import create_topic
from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

SOURCES = Path(__file__).with_name("java_streams")
WORDS = ["alpha", "beta", "gamma", "delta", "kafka", "streams", "python", "java"]
# heartbeats every second so the rebalances of the run take seconds, on both brokers
STREAMS_CONFIG = {
    "group.streams.heartbeat.interval.ms": "1000",
    "group.streams.min.heartbeat.interval.ms": "1000",
}


def lines() -> list[str]:
    rnd = random.Random(7)
    return [" ".join(rnd.choice(WORDS) for _ in range(5)) for _ in range(200)]


def word_count(bootstrap: str, classes: Path, text: Path) -> dict[str, str]:
    target = Target("any", bootstrap, None, 1)
    for topic in ("wc-text", "wc-counts"):
        create_topic(target, topic, partitions=4)
    run = jvm.run_java("StreamsWordCount", bootstrap, "wc", "wc-text", "wc-counts", str(text),
                       "60000", extra_cp=(classes,), timeout=150, check=False)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    out: dict[str, str] = {}
    for line in run.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        for key, value in re.findall(r"(\S+?)=(\S*)", rest):
            out[f"{kind}.{key}"] = value
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, str]]:
    jvm.require_kafka_jvm(javac=True)
    classes = jvm.compile_java_44(tmp_path_factory.mktemp("streams-java"), SOURCES)
    text = tmp_path_factory.mktemp("streams-text") / "lines.txt"
    text.write_text("\n".join(lines()) + "\n")
    out = {}
    broker = BrokerProcess(tmp_path_factory.mktemp("streams-kafkapy"),
                           {"offsets.topic.num.partitions": "1", **STREAMS_CONFIG}).start()
    try:
        out["kafkapy"] = word_count(broker.bootstrap, classes, text)
    finally:
        code = broker.stop()
    assert code == 0, broker.log_text()[-3000:]
    with ReferenceKafka(tmp_path_factory.mktemp("streams-kafka-4.4"), STREAMS_CONFIG) as kafka:
        out["kafka"] = word_count(kafka.bootstrap, classes, text)
    return out


def test_the_counts_are_the_words_of_the_input(runs) -> None:
    expected = Counter(w for line in lines() for w in line.split())
    got = {k.removeprefix("count."): int(v) for k, v in runs["kafkapy"].items()
           if k.startswith("count.")}
    assert got == dict(expected)


def test_both_instances_ran_tasks_then_one_took_over(runs) -> None:
    r = runs["kafkapy"]
    assert (r["instances.first"], r["instances.second"]) == ("RUNNING", "NOT_RUNNING")
    assert int(r["tasks.first"]) > 0 and int(r["tasks.second"]) > 0
    assert int(r["tasks.first"]) + int(r["tasks.second"]) == 8  # 2 subtopologies x 4 partitions


def test_the_same_as_apache_kafka(runs) -> None:
    assert runs["kafkapy"] == runs["kafka"]
