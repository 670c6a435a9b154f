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
