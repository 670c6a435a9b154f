"""InitProducerId (key 22), versions 0-5.

Without a transactional id (an idempotent producer) a fresh producer id with epoch 0 is
allocated from the block claimed in the metadata store, as Kafka does whether or not the client
passed its previous id and epoch.

With a transactional id the transaction coordinator answers (this broker must lead the id's
__transaction_state partition: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS otherwise): a new
id gets a producer id and epoch 0, a known one the same producer id with its epoch bumped, which
fences older instances (their requests get PRODUCER_FENCED, INVALID_PRODUCER_EPOCH before v4).
An id with a transaction in progress answers CONCURRENT_TRANSACTIONS after aborting an Ongoing
one (the client retries); a producer recovering from an error may pass its producer id and
epoch (v3+, KIP-360) to keep its id. INVALID_TRANSACTION_TIMEOUT above
transaction.max.timeout.ms (or not positive), INVALID_REQUEST for an empty id or a producer id
and epoch of which only one is -1. The answer follows the write of the new state to
__transaction_state (acks=all).

Authorization first: WRITE on the transactional id when there is one (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs IDEMPOTENT_WRITE on the
cluster or WRITE on some topic (else CLUSTER_AUTHORIZATION_FAILED), as Kafka 3.x.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import (
    IDEMPOTENT_WRITE,
    TOPIC,
    WRITE,
    authorize_by_resource_type,
    authorize_cluster,
    transactional_id_error,
)
from .group_common import ms


def _response(ctx, error: ErrorCode, producer_id: int = -1, epoch: int = -1):
    if ctx.version < 4 and error == ErrorCode.producer_fenced:
        error = ErrorCode.invalid_producer_epoch  # older clients do not know PRODUCER_FENCED
    return build(
        ctx.R.InitProducerIdResponse,
        throttle_time=THROTTLE_NONE,
        error_code=error,
        producer_id=producer_id,
        producer_epoch=epoch,
    )


@api("InitProducerId")
async def handle(ctx: RequestContext, request: Any) -> Any:
    if request.transactional_id is not None:
        denied = transactional_id_error(ctx, request.transactional_id)
    elif authorize_cluster(ctx, IDEMPOTENT_WRITE) or authorize_by_resource_type(ctx, WRITE, TOPIC):
        denied = None
    else:
        denied = ErrorCode.cluster_authorization_failed
    if denied is not None:
        return _response(ctx, denied)
    pid = getattr(request, "producer_id", -1)
    epoch = getattr(request, "producer_epoch", -1)
    if (pid == -1) != (epoch == -1):
        return _response(ctx, ErrorCode.invalid_request)
    if request.transactional_id is None:
        return _response(ctx, ErrorCode.none, ctx.broker.producer_ids.allocate(), 0)
    expected = None if pid == -1 else (int(pid), int(epoch))
    err, new_pid, new_epoch = await ctx.broker.txn.init_producer_id(
        request.transactional_id, ms(request.transaction_timeout), expected
    )
    return _response(ctx, err, new_pid, new_epoch)
