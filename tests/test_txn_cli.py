"""kafka-transactions.sh pieces without a broker: Kafka's table layout and the hand decoder of
DescribeTransactions (which must read the -1 start time of an id without a transaction)."""

from __future__ import annotations

import datetime
import io

from kio.schema.describe_transactions.v0 import response as dr
from kio.serial import entity_writer

from kafkapy.cli.transactions_client import decode_describe_transactions, pretty_table
from kafkapy.protocol.errors import ErrorCode


def test_table_pads_each_column_and_ends_cells_with_tabs():
    assert pretty_table(["A", "Longer"], [["xyz", "1"]]) == "A  \tLonger\t\nxyz\t1     \t\n"
    assert pretty_table(["Only"], []) == "Only\t\n"


def test_describe_transactions_decoder():
    utc = datetime.UTC
    body = dr.DescribeTransactionsResponse(
        throttle_time=datetime.timedelta(0),
        transaction_states=(
            dr.TransactionState(
                error_code=ErrorCode.none,
                transactional_id="app",
                transaction_state="Ongoing",
                transaction_timeout=datetime.timedelta(seconds=60),
                transaction_start_time=datetime.datetime.fromtimestamp(1700000000.123, tz=utc),
                producer_id=7,
                producer_epoch=2,
                topics=(
                    dr.TopicData(topic="a", partitions=(0, 3)),
                    dr.TopicData(topic="b", partitions=(1,)),
                ),
            ),
            dr.TransactionState(
                error_code=ErrorCode.none,
                transactional_id="idle",
                transaction_state="Empty",
                transaction_timeout=datetime.timedelta(seconds=5),
                transaction_start_time=datetime.datetime.fromtimestamp(-0.001, tz=utc),
                producer_id=8,
                producer_epoch=0,
                topics=(),
            ),
        ),
    )
    buf = io.BytesIO()
    entity_writer(type(body))(buf, body)
    app, idle = decode_describe_transactions(b"head" + buf.getvalue(), 4)
    assert app == {
        "error_code": 0,
        "transactional_id": "app",
        "state": "Ongoing",
        "timeout_ms": 60_000,
        "start_ms": 1_700_000_000_123,
        "producer_id": 7,
        "producer_epoch": 2,
        "partitions": [("a", 0), ("a", 3), ("b", 1)],
    }
    assert (idle["state"], idle["start_ms"], idle["partitions"]) == ("Empty", -1, [])


class _LoadingCoordinatorCluster:
    """A cluster in which an open transaction on t-0 belongs to "app", whose coordinator
    answers DescribeTransactions with an error other than TRANSACTIONAL_ID_NOT_FOUND (it is
    being moved: a race no test broker reproduces on demand)."""

    def partitions(self, topics):
        return {("t", 0): (0, [0])}

    def describe_producers(self, tps, broker_id):
        from types import SimpleNamespace

        old = SimpleNamespace(
            producer_id=5,
            producer_epoch=0,
            coordinator_epoch=0,
            current_txn_start_offset=3,
            last_timestamp=0,
        )
        return {("t", 0): [old]}

    def list_transactions(self, producer_ids=None, duration_ms=-1):
        from types import SimpleNamespace

        return {0: [SimpleNamespace(producer_id=5, transactional_id="app")]}

    def describe_transaction(self, transactional_id):
        from kafkapy.cli.transactions_client import fail

        raise fail("Failed to describe transaction state of transactional-id `app`", 15)


def test_find_hanging_fails_rather_than_guess_when_a_coordinator_cannot_answer():
    """Only TRANSACTIONAL_ID_NOT_FOUND makes an open transaction hanging (Kafka's tool);
    another error must not list it, which would invite aborting a live transaction."""
    import argparse

    import pytest

    from kafkapy.cli.common import CliError
    from kafkapy.cli.transactions import cmd_find_hanging

    opts = argparse.Namespace(topic="t", partition=0, broker_id=None, max_transaction_timeout=1)
    with pytest.raises(CliError) as e:
        cmd_find_hanging(_LoadingCoordinatorCluster(), opts)
    assert str(e.value) == (
        "Failed to describe 1 transactions: The coordinator is not available.. Enable debug "
        "logging for additional detail."
    )
