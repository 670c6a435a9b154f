"""AddOffsetsToTxn (key 25), versions 0-4.

A transactional producer about to commit a group's offsets in its transaction
(send_offsets_to_transaction) adds the group's __consumer_offsets partition to the transaction,
so that the markers also complete the offsets (the group's partition is
abs(hashCode(group id)) % offsets.topic.num.partitions). Errors as AddPartitionsToTxn v0-3:
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2),
CONCURRENT_TRANSACTIONS, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS; COORDINATOR_NOT_AVAILABLE
when __consumer_offsets cannot be created.

Authorization first: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then
READ on the group (GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata.names import OFFSETS_TOPIC
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import GROUP, READ, authorize, transactional_id_error


@api("AddOffsetsToTxn")
async def handle(ctx: RequestContext, request: Any) -> Any:
    broker = ctx.broker
    denied = transactional_id_error(ctx, request.transactional_id)
    if denied is None and not authorize(ctx, READ, GROUP, request.group_id):
        denied = ErrorCode.group_authorization_failed
    if denied is not None:
        err = denied
    elif not broker.groups.ensure_topic():
        err = ErrorCode.coordinator_not_available
    else:
        partition = broker.groups.coordinator.partition_for(request.group_id)
        err = await broker.txn.add_partitions(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            [(OFFSETS_TOPIC, partition)],
        )
    if ctx.version < 2 and err == ErrorCode.producer_fenced:
        err = ErrorCode.invalid_producer_epoch
    return build(ctx.R.AddOffsetsToTxnResponse, throttle_time=THROTTLE_NONE, error_code=err)
