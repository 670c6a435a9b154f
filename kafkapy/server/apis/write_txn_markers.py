"""WriteTxnMarkers (key 27), versions 1-2 (v0 was removed in Kafka 4.0).

Sent by a transaction coordinator to the leaders of a transaction's partitions (and by
``kafka-transactions.sh abort``): for each marker, a commit or abort control batch is appended
to every partition named, with acks=all semantics, and ``__consumer_offsets`` partitions
complete the transaction's offset commits (server/coordinator/txn_markers.py, shared with the
in-process marker sender). The answer groups the per-partition errors by producer id, as Kafka's
does (two markers of one producer in one request share one entry).

v2 (KIP-1228) gives each marker its transaction version: a marker of a transactions version 2
transaction (KIP-890 part 2) must carry an epoch above the data of the transaction it closes
(the coordinator bumped it when the transaction ended), else INVALID_PRODUCER_EPOCH.

Authorization: ALTER or CLUSTER_ACTION on the cluster (brokers, admin tools), else the request's
error response with CLUSTER_AUTHORIZATION_FAILED on every marker's partitions, as Kafka.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..coordinator.txn_markers import TxnMarker, write_txn_markers
from ..error_response import RequestError
from ..registry import api
from ..request_context import RequestContext
from ..responses import build
from ..security.authorization import (
    ALTER,
    CLUSTER_ACTION,
    CLUSTER_DENIED_MESSAGE,
    authorize_cluster,
)


@api("WriteTxnMarkers")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not (authorize_cluster(ctx, ALTER) or authorize_cluster(ctx, CLUSTER_ACTION)):
        raise RequestError(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
    markers = [
        TxnMarker(
            producer_id=m.producer_id,
            producer_epoch=m.producer_epoch,
            coordinator_epoch=m.coordinator_epoch,
            committed=bool(m.transaction_result),
            partitions=[(t.name, int(p)) for t in m.topics for p in t.partition_indexes],
            transaction_version=int(getattr(m, "transaction_version", 0)),
        )
        for m in request.markers
    ]
    results = await write_txn_markers(ctx.broker, markers) if markers else []
    by_producer: dict[int, dict[str, dict[int, ErrorCode]]] = {}
    for marker, errors in zip(markers, results, strict=True):
        topics = by_producer.setdefault(marker.producer_id, {})
        for (topic, partition), err in errors.items():
            topics.setdefault(topic, {})[partition] = err
    return build(
        R.WriteTxnMarkersResponse,
        markers=tuple(
            build(
                R.WritableTxnMarkerResult,
                producer_id=pid,
                topics=tuple(
                    build(
                        R.WritableTxnMarkerTopicResult,
                        name=topic,
                        partitions=tuple(
                            build(
                                R.WritableTxnMarkerPartitionResult,
                                partition_index=p,
                                error_code=err,
                            )
                            for p, err in parts.items()
                        ),
                    )
                    for topic, parts in topics.items()
                ),
            )
            for pid, topics in by_producer.items()
        ),
    )
