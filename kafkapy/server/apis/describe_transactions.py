"""DescribeTransactions (key 65), version 0.

The state of each transactional id this broker coordinates (``kafka-transactions.sh
describe``): producer id and epoch, state name (Empty, Ongoing, PrepareCommit, ...), timeout,
start time (-1 when no transaction has started) and the partitions of the ongoing transaction.
Per id: TRANSACTIONAL_ID_NOT_FOUND (unknown or expiring), NOT_COORDINATOR (another broker
coordinates it), COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST for an empty id.

Authorization: DESCRIBE on each transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
only the partitions of topics the principal may DESCRIBE are listed.
"""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.coordinator.txn.coordinator import DescribedTxn
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TOPIC, authorized_names, transactional_id_error

UTC = datetime.UTC


def _state(ctx, txn_id: str):
    R = ctx.R
    got: DescribedTxn | ErrorCode | None = transactional_id_error(ctx, txn_id, DESCRIBE)
    if got is None:
        got = ctx.broker.txn.coordinator.describe(txn_id)
    if isinstance(got, ErrorCode):  # Kafka leaves the other fields at their zero defaults
        got = DescribedTxn(0, 0, None, 0, 0, frozenset(), error=got)
    visible = authorized_names(ctx, DESCRIBE, TOPIC, {t for t, _ in got.partitions})
    by_topic: dict[str, list[int]] = {}
    for topic, p in sorted(tp for tp in got.partitions if tp[0] in visible):
        by_topic.setdefault(topic, []).append(p)
    return build(
        R.TransactionState,
        error_code=got.error,
        transactional_id=txn_id,
        transaction_state=got.state.display_name if got.state is not None else "",
        transaction_timeout=datetime.timedelta(milliseconds=got.timeout_ms),
        transaction_start_time=datetime.datetime.fromtimestamp(got.start_ms / 1000, tz=UTC),
        producer_id=got.producer_id,
        producer_epoch=got.producer_epoch,
        topics=tuple(
            build(R.TopicData, topic=topic, partitions=tuple(ps)) for topic, ps in by_topic.items()
        ),
    )


@api("DescribeTransactions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    return build(
        ctx.R.DescribeTransactionsResponse,
        throttle_time=THROTTLE_NONE,
        transaction_states=tuple(_state(ctx, txn_id) for txn_id in request.transactional_ids),
    )
