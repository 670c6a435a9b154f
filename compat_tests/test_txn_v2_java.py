"""Apache Kafka's 4.4 Java producer with transactions version 2 (KIP-890 part 2) against
kafkapy: it sees transaction.version 2 finalized, sends no AddPartitionsToTxn/AddOffsetsToTxn
(Produce v12 and TxnOffsetCommit v5 add the partitions), and the coordinator bumps the producer
epoch once per commit and per abort (EndTxn v5 answers the bumped epoch, which the producer then
uses). A read_committed consumer sees exactly the committed records; the offsets committed in a
transaction become the group's; a fenced zombie cannot write. java/TxnV2Client.java is compiled
with javac and run with the 4.4 client; against an Apache Kafka 4.4 broker it prints the same
lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

from .txn_clients import BROKER

SOURCE = Path(__file__).with_name("java") / "TxnV2Client.java"


@pytest.fixture(scope="module")
def java_output(tmp_path_factory) -> dict[str, dict[str, str]]:
    jvm.require_kafka_jvm(javac=True)
    classes = jvm.compile_java(tmp_path_factory.mktemp("txn-v2-java"), SOURCE.parent)
    broker = BrokerProcess(tmp_path_factory.mktemp("txn-v2-broker"), BROKER).start()
    try:
        run = jvm.run_java("TxnV2Client", broker.bootstrap, extra_cp=(classes,), timeout=240,
                           check=False, client="4.4")
    finally:
        code = broker.stop()
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert code == 0, broker.log_text()[-3000:]
    return {
        line.split(" ", 1)[0]: dict(re.findall(r"(\S+?)=(\S*)", line))
        for line in run.stdout.splitlines()
    }


def test_the_client_sees_transaction_version_2_finalized(java_output):
    assert java_output["features"] == {"transaction_version": "2"}


def test_the_epoch_is_bumped_once_per_commit_and_abort(java_output):
    # InitProducerId: 0; three commits, one abort, one commit with offsets
    assert java_output["epochs"] == {"values": "0,1,2,3,4,5"}


def test_read_committed_sees_exactly_the_committed_records(java_output):
    assert java_output["read"] == {"committed": "c0,c1,c2,d0,d1,d2,last"}


def test_offsets_committed_in_the_transaction(java_output):
    assert java_output["offsets"] == {"tv2-group": "7"}


def test_a_fenced_zombie_cannot_write(java_output):
    # its first write after the fence asks the coordinator to add the partition, which answers
    # PRODUCER_FENCED, mapped for producers to INVALID_PRODUCER_EPOCH: Apache Kafka 4.4 gives the
    # same TxnV2Client output line for line (run against the reference broker)
    assert java_output["zombie"]["fenced"] == "InvalidProducerEpochException"
    assert java_output["zombie_read"]["committed"] == "fresh,zombie-1"
