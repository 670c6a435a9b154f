"""Apache Kafka's Java client (4.4 and 3.9, from Maven Central: suites/jvm.py) through the
transactional paths against kafkapy: commit and abort with read_committed/read_uncommitted
consumers, consume-transform-produce with sendOffsetsToTransaction, a zombie fenced with
ProducerFencedException, and the Admin API behind kafka-transactions.sh (describeTransactions,
also of an id without a transaction, listTransactions, describeProducers).
java/TxnClient.java is compiled with javac and run once per client line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

from .txn_clients import BROKER

SOURCE = Path(__file__).with_name("java") / "TxnClient.java"


@pytest.fixture(scope="module", params=jvm.CLIENTS, ids=[f"java-{c}" for c in jvm.CLIENTS])
def java_output(request, tmp_path_factory) -> dict[str, dict[str, str]]:
    """TxnClient's lines, run once with each Kafka client line (4.4 and 3.9)."""
    jvm.require_kafka_jvm(javac=True)
    client = request.param
    classes = jvm.compile_java(tmp_path_factory.mktemp("txn-java"), SOURCE.parent)
    broker = BrokerProcess(tmp_path_factory.mktemp("txn-java-broker"), BROKER).start()
    try:
        run = jvm.run_java("TxnClient", broker.bootstrap, extra_cp=(classes,), timeout=240,
                           check=False, client=client)
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
