"""TxnOffsetCommit (key 28), versions 0-6.

A transactional producer commits a group's offsets inside its transaction
(``send_offsets_to_transaction``), after AddOffsetsToTxn added the group's __consumer_offsets
partition to it. The group coordinator (coordinator/group/txn_offsets.py):

- KIP-890: before the producer's first transactional write to that partition, asks the
  transaction coordinator whether the partition is in the transaction (as a partition leader
  does for Produce); PRODUCER_FENCED comes back as INVALID_PRODUCER_EPOCH, a partition not in the
  transaction as TRANSACTION_ABORTABLE (v4+) or INVALID_TXN_STATE, a coordinator it cannot reach
  as COORDINATOR_LOAD_IN_PROGRESS (clients retry without a lookup);
- KIP-447 (v3+): the consumer's generation id, member id and group instance id fence zombie
  instances of a consumer group (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID);
  a commit that names no member is allowed, as before v3;
- writes the offsets as a transactional batch of the producer on __consumer_offsets and answers
  once the ISR has it; they stay invisible (pending) until the transaction's marker: visible on
  commit, dropped on abort (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT
  meanwhile).

Per partition: UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist,
OFFSET_METADATA_TOO_LARGE; NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS (COORDINATOR_NOT_AVAILABLE
before v2, as Kafka answers clients older than 2.0), COORDINATOR_NOT_AVAILABLE when the write
did not reach the ISR. v5 is transactions version 2 (KIP-890 part 2): the client sent no
AddOffsetsToTxn, and the question to the transaction coordinator adds the group's partition to
the transaction instead of verifying it.

v6 (KIP-1319) names topics by id, in the request and the answer (an unknown id is
UNKNOWN_TOPIC_ID on its partitions, as OffsetCommit v10), and answers GROUP_ID_NOT_FOUND (a group
that does not exist, committed to with a generation) and STALE_MEMBER_EPOCH (a consumer group
member's stale epoch) where older versions answer ILLEGAL_GENERATION.

Authorization first, as Kafka: WRITE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition), READ on the group (else
GROUP_AUTHORIZATION_FAILED on every partition), READ on each topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.group.state import append_error_to_response_error
from kafkapy.metadata.names import OFFSETS_TOPIC
from kafkapy.protocol.errors import ErrorCode

from ..coordinator.txn_verification import (
    IMPLICIT_ADD_FROM_TXN_OFFSET_COMMIT_VERSION,
    TransactionalBatch,
    verify_partitions,
)
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import transactional_id_error
from .group_common import (
    GROUP_DENIED,
    by_id_response,
    group_denied,
    named_topics,
    partition_errors,
    replicated_results,
    requested_offsets,
    service,
)

TOPIC_IDS_FROM = 6  # KIP-1319


async def _verify(ctx, request, partition: int) -> tuple[object | None, ErrorCode]:
    """The KIP-890 guard for the producer's transactional write to the group's partition."""
    version = ctx.version

    def map_error(code: int) -> tuple[ErrorCode, str | None]:
        err = ErrorCode(code)
        if err == ErrorCode.producer_fenced:
            err = ErrorCode.invalid_producer_epoch
        elif err == ErrorCode.transaction_abortable and version < 4:
            err = ErrorCode.invalid_txn_state
        elif err == ErrorCode.network_exception:
            err = ErrorCode.coordinator_load_in_progress
        return ErrorCode(append_error_to_response_error(err)), None

    batch = TransactionalBatch(
        OFFSETS_TOPIC, partition, request.producer_id, request.producer_epoch, -1
    )
    guards, refused = await verify_partitions(
        ctx.broker,
        request.transactional_id,
        [batch],
        map_error,
        add=version >= IMPLICIT_ADD_FROM_TXN_OFFSET_COMMIT_VERSION,
    )
    tp = (OFFSETS_TOPIC, partition)
    if tp in refused:
        return None, refused[tp][0]
    return guards.get(tp), ErrorCode.none


@api("TxnOffsetCommit")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    svc = service(ctx)
    coordinator = svc.coordinator
    denied = transactional_id_error(ctx, request.transactional_id)
    by_id = ctx.version >= TOPIC_IDS_FROM
    names, topics = named_topics(ctx, request.topics, by_id)
    offsets, errors = requested_offsets(ctx, request.group_id, topics, denied)
    if offsets:
        group_id = request.group_id
        err = coordinator.state.group_error(group_id)
        guard = None
        if not err:
            guard, err = await _verify(ctx, request, coordinator.partition_for(group_id))
        if err:
            results = dict.fromkeys(offsets, err)
        else:
            results = coordinator.commit_txn_offsets(
                group_id,
                request.producer_id,
                request.producer_epoch,
                getattr(request, "generation_id", -1),
                getattr(request, "member_id", ""),
                getattr(request, "group_instance_id", None),
                offsets,
                now_ms(),
                verification_guard=guard,
                api_version=ctx.version,
            )
            results = await replicated_results(svc, group_id, results)
        errors.update(results)
    if ctx.version < 2:
        errors = {
            tp: ErrorCode.coordinator_not_available
            if e == ErrorCode.coordinator_load_in_progress
            else e
            for tp, e in errors.items()
        }
    if by_id:
        unknown_error = (
            denied
            if denied is not None
            else GROUP_DENIED
            if None in names and group_denied(ctx, request.group_id)
            else ErrorCode.unknown_topic_id
        )
        answer = by_id_response(
            R.TxnOffsetCommitResponseTopic, R.TxnOffsetCommitResponsePartition, request.topics,
            names, errors, unknown_error,
        )
    else:
        answer = partition_errors(
            R.TxnOffsetCommitResponseTopic, R.TxnOffsetCommitResponsePartition, request.topics,
            errors,
        )
    return build(R.TxnOffsetCommitResponse, throttle_time=THROTTLE_NONE, topics=answer)
