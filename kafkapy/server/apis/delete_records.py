"""DeleteRecords (key 21), versions 0-2.

Moves a partition's log start offset (its low watermark) forward to the requested offset; -1
means the high watermark. Whole segments below it are deleted. An offset beyond the high
watermark is OFFSET_OUT_OF_RANGE; a missing partition UNKNOWN_TOPIC_OR_PARTITION. The answer is
the new low watermark, which Fetch and ListOffsets honour from then on.

Authorization: DELETE on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..partition_lookup import lookup
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DELETE, TOPIC, authorized_names

HIGH_WATERMARK = -1


@api("DeleteRecords")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    topics = []
    may_delete = authorized_names(ctx, DELETE, TOPIC, (t.name for t in request.topics))
    for t in request.topics:
        parts = []
        for p in t.partitions:
            low, error = -1, ErrorCode.topic_authorization_failed
            if t.name in may_delete:
                ref = lookup(ctx.broker, t.name, p.partition_index)
                error = ref.error
            if error == ErrorCode.none:
                plog = ref.log
                target = plog.high_watermark if p.offset == HIGH_WATERMARK else p.offset
                if target < 0 or target > plog.high_watermark:
                    error = ErrorCode.offset_out_of_range
                else:
                    low = plog.delete_records_before(target)
            parts.append(
                build(
                    R.DeleteRecordsPartitionResult,
                    partition_index=p.partition_index,
                    low_watermark=low,
                    error_code=error,
                )
            )
        topics.append(build(R.DeleteRecordsTopicResult, name=t.name, partitions=tuple(parts)))
    return build(R.DeleteRecordsResponse, throttle_time=THROTTLE_NONE, topics=tuple(topics))
