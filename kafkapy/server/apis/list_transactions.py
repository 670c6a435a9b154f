"""ListTransactions (key 66), versions 0-1.

The transactional ids this broker coordinates (an admin client asks every broker), with their
producer id and state name, filtered by state names, producer ids and (v1) by running longer
than ``duration_filter`` ms; unknown state names are echoed in ``unknown_state_filters``.
COORDINATOR_LOAD_IN_PROGRESS while a __transaction_state partition is loading. Only the ids
the principal may DESCRIBE are listed (authorization).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TRANSACTIONAL_ID, authorized_names


@api("ListTransactions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    error, txns, unknown = ctx.broker.txn.coordinator.list_transactions(
        {int(p) for p in request.producer_id_filters},
        set(request.state_filters),
        int(getattr(request, "duration_filter", -1)),
        now_ms(),
    )
    visible = authorized_names(ctx, DESCRIBE, TRANSACTIONAL_ID, (t.transactional_id for t in txns))
    txns = [t for t in txns if t.transactional_id in visible]
    return build(
        R.ListTransactionsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=error,
        unknown_state_filters=tuple(unknown),
        transaction_states=tuple(
            build(
                R.TransactionState,
                transactional_id=t.transactional_id,
                producer_id=t.producer_id,
                transaction_state=t.state.display_name,
            )
            for t in txns
        ),
    )
