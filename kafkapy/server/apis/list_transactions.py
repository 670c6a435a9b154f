"""ListTransactions (key 66), versions 0-2.

The transactional ids this broker coordinates (an admin client asks every broker), with their
producer id and state name, filtered by state names, producer ids and (v1) by running longer
than ``duration_filter`` ms; unknown state names are echoed in ``unknown_state_filters``.
COORDINATOR_LOAD_IN_PROGRESS while a __transaction_state partition is loading. Only the ids
the principal may DESCRIBE are listed (authorization). v2 (KIP-1152) adds
``transactional_id_pattern``: when set and not empty, only the ids the whole pattern matches are
listed (Kafka matches with RE2; Python's ``re`` reads the same syntax for the patterns clients
send); a pattern that does not compile answers INVALID_REGULAR_EXPRESSION "Transaction ID pattern
`P` is not a valid regular expression: ...", as Kafka's TransactionStateManager.
"""

from __future__ import annotations

import re
from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..error_response import RequestError
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, TRANSACTIONAL_ID, authorized_names


def id_pattern(request: Any) -> re.Pattern[str] | None:
    """v2: the compiled transactional id pattern, None when absent or empty."""
    pattern = getattr(request, "transactional_id_pattern", None)
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise RequestError(
            ErrorCode.invalid_regular_expression,
            f"Transaction ID pattern `{pattern}` is not a valid regular expression: {e}.",
        ) from None


@api("ListTransactions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    pattern = id_pattern(request)
    error, txns, unknown = ctx.broker.txn.coordinator.list_transactions(
        {int(p) for p in request.producer_id_filters},
        set(request.state_filters),
        int(getattr(request, "duration_filter", -1)),
        now_ms(),
    )
    visible = authorized_names(ctx, DESCRIBE, TRANSACTIONAL_ID, (t.transactional_id for t in txns))
    txns = [t for t in txns if t.transactional_id in visible]
    if pattern is not None:
        txns = [t for t in txns if pattern.fullmatch(t.transactional_id)]
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
