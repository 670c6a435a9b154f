"""Apache Kafka's Java client (3.9, ../shared/jvm) through the transactional paths against
kafkapy: commit and abort with read_committed/read_uncommitted consumers, consume-transform-
produce with sendOffsetsToTransaction, a zombie fenced with ProducerFencedException, and the
Admin API behind kafka-transactions.sh (describeTransactions, also of an id without a
transaction, listTransactions, describeProducers). java/TxnClient.java is compiled with javac
and run once; skipped with the reason when the jars or a JDK are missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkapy.testing import BrokerProcess

from .test_txn_partitions import _kafka_jars
from .txn_clients import BROKER

SOURCE = Path(__file__).with_name("java") / "TxnClient.java"


@pytest.fixture(scope="module")
def java_output(tmp_path_factory) -> dict[str, dict[str, str]]:
    jars = _kafka_jars()
    if jars is None or shutil.which("javac") is None:
        pytest.skip("Kafka's Java client jars or javac are not available here")
    import pyspark  # its jars directory holds the client's dependencies (slf4j, lz4, ...)

    cp = f"{jars}/*:{Path(pyspark.__file__).parent / 'jars'}/*"
    classes = tmp_path_factory.mktemp("txn-java")
    built = subprocess.run(
        ["javac", "-d", str(classes), "-cp", cp, str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert built.returncode == 0, built.stderr
    broker = BrokerProcess(tmp_path_factory.mktemp("txn-java-broker"), BROKER).start()
    try:
        run = subprocess.run(
            ["java", "-cp", f"{classes}:{cp}", "TxnClient", broker.bootstrap],
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        code = broker.stop()
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert code == 0, broker.log_text()[-3000:]
    return {
        line.split(" ", 1)[0]: dict(re.findall(r"(\S+?)=(\S*)", line))
        for line in run.stdout.splitlines()
    }


def test_commit_and_abort(java_output):
    assert java_output["read"] == {
        "committed": "j0,j1,j2,jlast",
        "uncommitted": "j0,j1,j2,dropped,jlast",
    }


def test_consume_transform_produce(java_output):
    assert java_output["ctp"] == {
        "processed": "20",
        "out": "20",
        "distinct": "20",
        "committed": "20",
    }


def test_zombie_fenced(java_output):
    assert java_output["zombie"] == {"fenced": "ProducerFencedException", "committed": "fresh"}


def test_admin_describe_list_and_producers(java_output):
    assert java_output["describe"] == {
        "app": "CompleteCommit",
        "app_start": "true",
        "empty": "Empty",
        "empty_start": "false",  # a -1 start time: no transaction yet
        "epoch": "0",
    }
    assert java_output["list"]["ids"] == "j-app,j-ctp-app,j-empty,j-plain,j-z"
    assert java_output["producers"] == {"count": "1", "open": "0"}
