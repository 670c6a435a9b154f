"""EndTxn (key 26), versions 0-5.

Commit or abort the producer's transaction: PrepareCommit/PrepareAbort is written to
__transaction_state (acks=all) and answered; the markers then go to every partition of the
transaction (and the group offsets committed in it become visible or are dropped), after which
CompleteCommit/CompleteAbort is written. A retried EndTxn of a finished transaction with the same
result is answered NONE; while its markers are still being written CONCURRENT_TRANSACTIONS;
ending with the other result, or with no transaction (Empty), INVALID_TXN_STATE.
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS as for the other transaction APIs.

v5 is transactions version 2 (KIP-890 part 2; coordinator/txn/end_txn_v2.py): every
PrepareCommit/PrepareAbort bumps the producer epoch and the answer carries the producer id and
epoch the client continues with (a new producer id with epoch 0 when the epoch was exhausted;
-1/-1 with an error); an abort needs no started transaction. v0-4 are served as before (version
1 protocol).
Authorization: WRITE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.coordinator.txn.metadata import TV_0, TV_2
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import transactional_id_error

TRANSACTIONS_V2_FROM_VERSION = 5


@api("EndTxn")
async def handle(ctx: RequestContext, request: Any) -> Any:
    err = transactional_id_error(ctx, request.transactional_id)
    producer_id, producer_epoch = -1, -1
    if err is None:
        err, producer_id, producer_epoch = await ctx.broker.txn.end_txn(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            bool(request.committed),
            TV_2 if ctx.version >= TRANSACTIONS_V2_FROM_VERSION else TV_0,
        )
    if ctx.version < 2 and err == ErrorCode.producer_fenced:
        err = ErrorCode.invalid_producer_epoch
    return build(
        ctx.R.EndTxnResponse,
        throttle_time=THROTTLE_NONE,
        error_code=err,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
    )
