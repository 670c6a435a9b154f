"""What users install is what is tested: a broker from a runtime-only install serves every codec.

The install is made by scripts/runtime_venv.py, the same script behind scripts/run-broker.sh and
the Docker image: ``pip install <checkout>`` into a fresh venv, no extras. It is cached under
~/.cache/kafkapy-tests/runtime-<hash of pyproject.toml, setup.py and the package sources>, so
it is rebuilt only when those change (seconds, with pip's cache). The broker runs as that venv's
``kafkapy server``; the clients (confluent-kafka and kafka-python, with kafka-python's codec
packages) come from the test environment. Before the codecs moved to cramjam, every compressed
batch closed the connection of a broker installed this way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition

from kafkapy.protocol.record_batch import iter_batches
from kafkapy.testing import BrokerProcess

ROOT = Path(__file__).resolve().parent.parent
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
TEST_ONLY = {"lz4", "zstandard", "python-snappy", "kafka-python", "pytest", "pyspark"}
RECORDS = 300

# Installed distributions that the kafkapy distribution does not pull in (pip and setuptools
# come with every venv), computed by the runtime venv's own interpreter.
CLOSURE_SCRIPT = """
import json, re
from importlib.metadata import distribution, distributions
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
installed = {norm(d.metadata["Name"]) for d in distributions()}
needed, todo = set(), ["kafkapy"]
while todo:
    name = todo.pop()
    if name in needed or name not in installed:
        continue
    needed.add(name)
    for req in distribution(name).requires or []:
        if "extra ==" not in req:
            todo.append(norm(re.split(r"[\\s<>=!~;\\[(]", req, maxsplit=1)[0]))
print(json.dumps({"extra": sorted(installed - needed - {"pip", "setuptools"}),
                  "needed": sorted(needed)}))
"""


@pytest.fixture(scope="module")
def runtime_install() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafkapy-tests"
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "runtime_venv.py"), "--keyed", str(cache)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return Path(out.stdout.strip())


@pytest.fixture(scope="module")
def runtime_broker(runtime_install, tmp_path_factory):
    proc = BrokerProcess(
        tmp_path_factory.mktemp("runtime-broker"),
        {"num.partitions": "1"},
        kafkapy=[str(runtime_install / "bin" / "kafkapy")],
    )
    proc.start()
    try:
        yield proc
    finally:
        code = proc.stop()
    log = proc.log_text()
    assert code == 0, log[-3000:]
    assert "Traceback" not in log and "level=error" not in log, log[-3000:]


@pytest.mark.timeout(900)  # a cold pip cache downloads the runtime dependencies
def test_runtime_install_holds_only_the_runtime_dependencies(runtime_install, tmp_path):
    # run from elsewhere: `python -c` in the checkout would import the checkout's kafkapy
    out = subprocess.run(
        [str(runtime_install / "bin" / "python"), "-c", CLOSURE_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    found = json.loads(out.stdout)
    assert found["extra"] == [], found
    assert "cramjam" in found["needed"] and not TEST_ONLY & set(found["needed"]), found
    where = subprocess.run(
        [str(runtime_install / "bin" / "python"), "-c", "import kafkapy; print(kafkapy.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert str(runtime_install) in where  # the installed copy, not this checkout


def produce_confluent(bootstrap: str, topic: str, codec: str) -> list[tuple]:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": codec,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 20,
        }
    )
    sent = [record(codec, "ck", i) for i in range(RECORDS)]
    errors = []
    for key, value, headers in sent:
        producer.produce(
            topic,
            key=key,
            value=value,
            headers=headers,
            on_delivery=lambda e, m: e and errors.append(e),
        )
    assert producer.flush(30) == 0 and not errors, errors
    return sent


def produce_kafka_python(bootstrap: str, topic: str, codec: str) -> list[tuple]:
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, compression_type=codec, acks="all", linger_ms=20
    )
    sent = [record(codec, "kp", i) for i in range(RECORDS)]
    futures = [producer.send(topic, key=k, value=v, headers=h) for k, v, h in sent]
    producer.flush(30)
    for f in futures:
        f.get(timeout=10)
    producer.close()
    return sent


def record(codec: str, client: str, i: int) -> tuple:
    key = f"{client}-{codec}-key-{i}".encode()
    value = (f"{client} {codec} record {i} " * (1 + i % 40)).encode() + bytes(range(i % 256))
    return key, value, [("client", client.encode()), ("n", str(i).encode())]


def fetch_confluent(bootstrap: str, topic: str, count: int) -> list[tuple]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"rt-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[tuple] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        got.append((msg.key(), msg.value(), msg.headers() or []))
    consumer.close()
    return got


def fetch_kafka_python(bootstrap: str, topic: str, count: int) -> list[tuple]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tp = KpTopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got: list[tuple] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        for recs in consumer.poll(timeout_ms=1000).values():
            got += [(r.key, r.value, list(r.headers)) for r in recs]
    consumer.close()
    return got


@pytest.mark.parametrize("codec", list(CODECS))
def test_runtime_broker_serves_every_codec(runtime_broker, codec):
    topic = f"runtime-{codec}"
    sent = produce_confluent(runtime_broker.bootstrap, topic, codec)
    sent += produce_kafka_python(runtime_broker.bootstrap, topic, codec)

    for fetch in (fetch_confluent, fetch_kafka_python):
        got = fetch(runtime_broker.bootstrap, topic, len(sent))
        assert len(got) == len(sent), (fetch.__name__, len(got))
        for g, s in zip(got, sent, strict=True):
            assert (g[0], g[1], [(k, bytes(v)) for k, v in g[2]]) == s, fetch.__name__

    # the clients did compress: every batch on disk carries the codec
    segment = runtime_broker.data_dir / "logs" / f"{topic}-0" / "00000000000000000000.log"
    codecs = {h.codec for _, h in iter_batches(segment.read_bytes())}
    assert codecs == {CODECS[codec]}, codecs
