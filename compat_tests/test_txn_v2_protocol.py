"""Transactions version 2 (KIP-890 part 2) at the protocol level against a real broker: a raw
client plays a 4.x transactional producer. Produce v12 adds the partition to the transaction
without AddPartitionsToTxn (Produce v11 is only verified, and refused), EndTxn v5 bumps the
epoch and answers it, a late write of the finished transaction (its old epoch) is refused so no
transaction is left hanging on the partition, a version 2 marker must carry an epoch above the
data of the transaction it closes, an abort needs no started transaction, and ApiVersions
reports transaction.version 2 finalized. Every test here passes against an Apache Kafka 4.4
broker too (run by hand with compat_tests/reference/kafka_broker.py's ReferenceKafka)."""

from __future__ import annotations

import datetime
import time

import pytest

from compat_tests.rawclient import RawClient
from compat_tests.txn_raw import create_topic, list_latest, req, txn_batch
from kafkapy.protocol.errors import ErrorCode as E

TXN = "tv2-raw"
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from kafkapy.testing import BrokerProcess

    proc = BrokerProcess(tmp_path_factory.mktemp("tv2-protocol"), {}).start()
    yield proc
    code = proc.stop()
    assert code == 0, proc.log_text()[-3000:]


def retry(call, retriable=(E.coordinator_not_available, E.coordinator_load_in_progress,
                           E.not_coordinator, E.concurrent_transactions)):
    deadline = time.monotonic() + 20
    while True:
        resp = call()
        if resp.error_code not in retriable or time.monotonic() > deadline:
            return resp
        time.sleep(0.1)


def init(c: RawClient, txn: str) -> tuple[int, int]:
    F = req(10, 4)
    retry(lambda: c.request(F.FindCoordinatorRequest(key_type=1, coordinator_keys=(txn,)))
          .coordinators[0])
    Q = req(22, 5)
    resp = retry(lambda: c.request(Q.InitProducerIdRequest(
        transactional_id=txn, transaction_timeout=datetime.timedelta(seconds=60),
        producer_id=-1, producer_epoch=-1)))
    assert resp.error_code == 0, resp
    return resp.producer_id, resp.producer_epoch


def produce(c: RawClient, version: int, topic: str, partition: int, data: bytes, txn: str):
    Q = req(0, version)
    resp = c.request(Q.ProduceRequest(
        transactional_id=txn, acks=-1, timeout=datetime.timedelta(seconds=10),
        topic_data=(Q.TopicProduceData(name=topic, partition_data=(
            Q.PartitionProduceData(index=partition, records=data),)),)))
    return resp.responses[0].partition_responses[0]


def produce_first(c: RawClient, version: int, topic: str, partition: int, data: bytes, txn: str):
    """Produce once the new topic's leader takes writes (Kafka elects it asynchronously)."""
    deadline = time.monotonic() + 20
    while True:
        p = produce(c, version, topic, partition, data, txn)
        if p.error_code not in (E.not_leader_or_follower, E.unknown_topic_or_partition,
                                E.not_enough_replicas) or time.monotonic() > deadline:
            return p
        time.sleep(0.1)


def end(c: RawClient, version: int, txn: str, pid: int, epoch: int, commit: bool):
    Q = req(26, version)
    return retry(lambda: c.request(Q.EndTxnRequest(
        transactional_id=txn, producer_id=pid, producer_epoch=epoch, committed=commit)))


def state(c: RawClient, txn: str):
    Q = req(65, 0)
    return c.request(Q.DescribeTransactionsRequest(transactional_ids=(txn,))).transaction_states[0]


def wait_state(c: RawClient, txn: str, want: str):
    deadline = time.monotonic() + 10
    while (got := state(c, txn)).transaction_state != want and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got.transaction_state == want, got
    return got


def test_finalized_transaction_version(broker):
    with RawClient(broker.bootstrap) as c:
        for v, supported in ((3, []), (4, [("transaction.version", 0, 2)])):
            Q = req(18, v)
            resp = c.request(Q.ApiVersionsRequest(client_software_name="t",
                                                  client_software_version="1"))
            tv = "transaction.version"  # (Kafka 4.4 lists other features too)
            assert [(f.name, f.min_version, f.max_version)
                    for f in resp.supported_features if f.name == tv] == supported
            assert [(f.name, f.min_version_level, f.max_version_level)
                    for f in resp.finalized_features if f.name == tv] == [(tv, 2, 2)]
            assert resp.finalized_features_epoch >= 0
            ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
            assert ranges[26] == (0, 5) and ranges[27] == (1, 2)
            assert ranges[28][0] == 0 and ranges[28][1] >= 5  # (4.4: v6, topic ids)


def test_implicit_add_epoch_bump_and_no_hanging_transaction(broker):
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "tv2raw", partitions=2)
        pid, epoch = init(c, TXN)
        assert epoch == 0
        # Produce v11 only verifies: the partition was not added, the write is refused
        p = produce_first(c, 11, "tv2raw", 1, txn_batch(pid, 0, [b"v11"]), TXN)
        assert p.error_code == E.transaction_abortable
        # Produce v12 adds the partition itself
        p = produce_first(c, 12, "tv2raw", 0, txn_batch(pid, 0, [b"a"]), TXN)
        assert p.error_code == 0, p
        s = wait_state(c, TXN, "Ongoing")
        assert [(t.topic, tuple(t.partitions)) for t in s.topics] == [("tv2raw", (0,))]
        resp = end(c, 5, TXN, pid, 0, True)
        assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (0, pid, 1)
        s = wait_state(c, TXN, "CompleteCommit")
        assert s.producer_epoch == 1
        # a late write of the committed transaction (epoch 0) is refused: the coordinator
        # fences it, and the partition holds no transaction open
        p = produce(c, 12, "tv2raw", 0, txn_batch(pid, 1, [b"late"]), TXN)
        assert p.error_code == E.invalid_producer_epoch, p
        assert state(c, TXN).transaction_state == "CompleteCommit"
        assert list_latest(c, "tv2raw", READ_COMMITTED) == list_latest(
            c, "tv2raw", READ_UNCOMMITTED) == 2  # the record and the commit marker
        # a retried EndTxn is answered with the bumped epoch again
        resp = end(c, 5, TXN, pid, 0, True)
        assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (0, pid, 1)


def test_version_2_marker_must_be_above_the_data_epoch(broker):
    txn = TXN + "-marker"
    with RawClient(broker.bootstrap) as c:
        create_topic(c, "tv2mark")
        pid, epoch = init(c, txn)
        p = produce_first(c, 12, "tv2mark", 0, txn_batch(pid, 0, [b"x"], epoch=epoch), txn)
        assert p.error_code == 0, p
        Q = req(27, 2)

        def marker(tv: int):
            resp = c.request(Q.WriteTxnMarkersRequest(markers=(Q.WritableTxnMarker(
                producer_id=pid, producer_epoch=epoch, transaction_result=True,
                topics=(Q.WritableTxnMarkerTopic(name="tv2mark", partition_indexes=(0,)),),
                coordinator_epoch=0, transaction_version=tv),)))
            return resp.markers[0].topics[0].partitions[0].error_code

        # the data's own epoch cannot close a version 2 transaction (a stale coordinator)
        assert marker(2) == E.invalid_producer_epoch
        # the coordinator's abort carries the bumped epoch
        resp = end(c, 5, txn, pid, epoch, False)
        assert (resp.error_code, resp.producer_epoch) == (0, epoch + 1)
        wait_state(c, txn, "CompleteAbort")
        assert list_latest(c, "tv2mark", READ_COMMITTED) == 2


def test_abort_with_no_transaction_started(broker):
    txn = TXN + "-empty"
    with RawClient(broker.bootstrap) as c:
        pid, epoch = init(c, txn)
        resp = end(c, 4, txn, pid, epoch, False)  # version 1: no transaction to abort
        assert resp.error_code == E.invalid_txn_state
        resp = end(c, 5, txn, pid, epoch, False)
        assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (0, pid, epoch + 1)
        assert wait_state(c, txn, "CompleteAbort").producer_epoch == epoch + 1
        resp = end(c, 5, txn, pid, epoch + 1, True)  # nothing to commit
        assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (
            E.invalid_txn_state, -1, -1)
