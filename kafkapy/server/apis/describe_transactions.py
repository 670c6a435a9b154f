"""DescribeTransactions (key 65), version 0.

The state of each transactional id this broker coordinates (``kafka-transactions.sh
describe``): producer id and epoch, state name (Empty, Ongoing, PrepareCommit, ...), timeout,
start time (-1 when no transaction has started) and the partitions of the ongoing transaction.
Per id: TRANSACTIONAL_ID_NOT_FOUND (unknown or expiring), NOT_COORDINATOR (another broker
coordinates it), COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST for an empty id.
"""

from __future__ import annotations

import datetime

from kafkapy.coordinator.txn.coordinator import DescribedTxn
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..responses import THROTTLE_NONE, build

UTC = datetime.UTC


def _state(R, txn_id: str, got):
    if isinstance(got, ErrorCode):
        got, error = None, got
    else:
        error = ErrorCode.none
    assert got is None or isinstance(got, DescribedTxn)
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(got.partitions if got else ()):
        by_topic.setdefault(topic, []).append(p)
    return build(
        R.TransactionState,
        error_code=error,
        transactional_id=txn_id,
        transaction_state=got.state.display_name if got else "",
        transaction_timeout=datetime.timedelta(milliseconds=got.timeout_ms if got else 0),
        transaction_start_time=datetime.datetime.fromtimestamp(
            (got.start_ms if got else -1) / 1000, tz=UTC
        ),
        producer_id=got.producer_id if got else -1,
        producer_epoch=got.producer_epoch if got else -1,
        topics=tuple(
            build(R.TopicData, topic=topic, partitions=tuple(ps)) for topic, ps in by_topic.items()
        ),
    )


@api("DescribeTransactions")
async def handle(ctx, request):
    coordinator = ctx.broker.txn.coordinator
    return build(
        ctx.R.DescribeTransactionsResponse,
        throttle_time=THROTTLE_NONE,
        transaction_states=tuple(
            _state(ctx.R, txn_id, coordinator.describe(txn_id))
            for txn_id in request.transactional_ids
        ),
    )
