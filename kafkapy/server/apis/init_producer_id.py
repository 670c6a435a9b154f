"""InitProducerId (key 22), versions 0-5.

For an idempotent producer (no transactional id) a fresh producer id with epoch 0 is allocated
from the block claimed in the metadata store, as Kafka does whether or not the client passed its
previous id and epoch. Transactions are not implemented: a transactional id gets
COORDINATOR_NOT_AVAILABLE (kafkapy serves no transaction coordinator, and FindCoordinator for
transactions is not advertised).

Authorization: WRITE on the transactional id when there is one (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs IDEMPOTENT_WRITE on the
cluster or WRITE on some topic (else CLUSTER_AUTHORIZATION_FAILED), as Kafka 3.x.
"""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode

from ..authorization import (
    IDEMPOTENT_WRITE,
    TOPIC,
    WRITE,
    authorize_by_resource_type,
    authorize_cluster,
    transactional_id_error,
)
from ..registry import api
from ..responses import THROTTLE_NONE, build


@api("InitProducerId")
async def handle(ctx, request):
    R = ctx.R
    if request.transactional_id is not None:
        denied = transactional_id_error(ctx, request.transactional_id)
    elif authorize_cluster(ctx, IDEMPOTENT_WRITE) or authorize_by_resource_type(ctx, WRITE, TOPIC):
        denied = None
    else:
        denied = ErrorCode.cluster_authorization_failed
    if denied is not None:
        return build(R.InitProducerIdResponse, throttle_time=THROTTLE_NONE, error_code=denied,
                     producer_id=-1, producer_epoch=-1)
    if request.transactional_id is not None:
        return build(
            R.InitProducerIdResponse,
            throttle_time=THROTTLE_NONE,
            error_code=ErrorCode.coordinator_not_available,
            producer_id=-1,
            producer_epoch=-1,
        )
    pid = ctx.broker.producer_ids.allocate()
    return build(
        R.InitProducerIdResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        producer_id=pid,
        producer_epoch=0,
    )
