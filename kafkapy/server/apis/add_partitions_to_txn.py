"""AddPartitionsToTxn (key 24), versions 0-5.

v0-3 come from transactional producers: add the partitions to the producer's transaction
(Ongoing), written to __transaction_state before the answer; one error for every partition:
INVALID_PRODUCER_ID_MAPPING (unknown id or another producer id), PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before v2) for a stale epoch, CONCURRENT_TRANSACTIONS while the previous
transaction's markers are being written, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. A
partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION and fails the request: the others
get OPERATION_NOT_ATTEMPTED.

v4+ come from partition leaders and batch several transactions: with ``verify_only`` (KIP-890
part 1) nothing is added, each partition is answered NONE when it is in the producer's
transaction, TRANSACTION_ABORTABLE when it is not (else the producer errors above, or
CONCURRENT_TRANSACTIONS while the transaction is being completed); without it the partitions
are added as for v0-3, for a transactions version 2 client when the request is v5 (a partition
leader adding for a Produce v12+, KIP-890 part 2). One result per transaction.

Authorization, as Kafka: v0-3 need WRITE on the transactional id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition) and WRITE on each topic (else
TOPIC_AUTHORIZATION_FAILED, which fails the request as an unknown partition does; an internal
topic is always refused so: its partitions are added by AddOffsetsToTxn); v4+ come from brokers
and need CLUSTER_ACTION on the cluster (else CLUSTER_AUTHORIZATION_FAILED as the top-level
error).
"""

from __future__ import annotations

from typing import Any

import trio

from kafkapy.coordinator.txn.metadata import TV_0, TV_2
from kafkapy.metadata.names import INTERNAL_TOPICS
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import (
    CLUSTER_ACTION,
    TOPIC,
    WRITE,
    authorize_cluster,
    authorized_names,
    transactional_id_error,
)
from .group_common import partition_exists


def _partitions(topics) -> list[tuple[str, int]]:
    seen: dict[tuple[str, int], None] = {}
    for t in topics:
        for p in t.partitions:
            seen[(t.name, int(p))] = None
    return list(seen)


async def _one(ctx, txn_id: str, pid: int, epoch: int, verify_only: bool, tps) -> dict:
    """Per-partition errors of one transaction's part of the request."""
    if ctx.version < 4:  # from a client: WRITE on the id and on the topics
        denied = transactional_id_error(ctx, txn_id)
        if denied is not None:
            return dict.fromkeys(tps, denied)
        allowed = authorized_names(ctx, WRITE, TOPIC, {t for t, _ in tps} - INTERNAL_TOPICS)
    else:
        allowed = {t for t, _ in tps}
    failed = {}
    for tp in tps:
        if tp[0] not in allowed:
            failed[tp] = ErrorCode.topic_authorization_failed
        elif not partition_exists(ctx, *tp):
            failed[tp] = ErrorCode.unknown_topic_or_partition
    if failed:
        errors = dict.fromkeys(tps, ErrorCode.operation_not_attempted)
        errors.update(failed)
        return errors
    svc = ctx.broker.txn
    if verify_only:
        return svc.coordinator.verify_partitions(txn_id, pid, epoch, tps)
    tv = TV_2 if ctx.version >= 5 else TV_0  # v5 adds come from leaders for version 2 clients
    err = await svc.add_partitions(txn_id, pid, epoch, tps, tv)
    if ctx.version < 2 and err == ErrorCode.producer_fenced:
        err = ErrorCode.invalid_producer_epoch
    return dict.fromkeys(tps, err)


def _topic_results(R, errors: dict) -> tuple:
    by_topic: dict[str, list] = {}
    for (topic, p), err in errors.items():
        by_topic.setdefault(topic, []).append(
            build(R.AddPartitionsToTxnPartitionResult, partition_index=p, partition_error_code=err)
        )
    return tuple(
        build(R.AddPartitionsToTxnTopicResult, name=topic, results_by_partition=tuple(parts))
        for topic, parts in by_topic.items()
    )


@api("AddPartitionsToTxn")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if ctx.version < 4:
        errors = await _one(
            ctx,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            False,
            _partitions(request.v3_and_below_topics),
        )
        return build(
            R.AddPartitionsToTxnResponse,
            throttle_time=THROTTLE_NONE,
            results_by_topic_v3_and_below=_topic_results(R, errors),
        )
    if not authorize_cluster(ctx, CLUSTER_ACTION):  # v4+ come from brokers
        return build(
            R.AddPartitionsToTxnResponse,
            throttle_time=THROTTLE_NONE,
            error_code=ErrorCode.cluster_authorization_failed,
            results_by_transaction=(),
        )
    results: list = [None] * len(request.transactions)

    async def run(i: int, txn) -> None:
        errors = await _one(
            ctx,
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            txn.verify_only,
            _partitions(txn.topics),
        )
        results[i] = build(
            R.AddPartitionsToTxnResult,
            transactional_id=txn.transactional_id,
            topic_results=_topic_results(R, errors),
        )

    async with trio.open_nursery() as nursery:
        for i, txn in enumerate(request.transactions):
            nursery.start_soon(run, i, txn)
    return build(
        R.AddPartitionsToTxnResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        results_by_transaction=tuple(results),
    )
