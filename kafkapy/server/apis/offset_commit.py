"""OffsetCommit (key 8), versions 2-10.

Commits offsets (with their metadata string, and the leader epoch from v6) for a group; each is
appended to __consumer_offsets before the answer, so an acknowledged commit survives a crash.
Members of a classic group commit with their generation and member id (ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (v7+), REBALANCE_IN_PROGRESS while the group awaits its
assignment); simple consumers and admin clients commit with generation -1 and no member id to an
empty or new group (the empty group id included, as Kafka 3.9's ZooKeeper-mode coordinator
allows). A group that does not exist with generation >= 0 is ILLEGAL_GENERATION
(GROUP_ID_NOT_FOUND from v9). Per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic or partition
that does not exist, OFFSET_METADATA_TOO_LARGE above offset.metadata.max.bytes. Members of a
consumer-protocol (KIP-848) group commit with their member epoch as the generation: v9 only
(UNSUPPORTED_VERSION before), UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH for another epoch. v2-4
retention_time (-1: broker default) sets an explicit expiry. ZooKeeper mode: the answer waits
until the commit reached the ISR of its __consumer_offsets partition (offsets.commit.timeout.ms);
if not, COORDINATOR_NOT_AVAILABLE (timeout, too small an ISR) or NOT_COORDINATOR (leadership
moved) for each partition that was committed (group_service).

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED on every partition), and READ
on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions, before existence is checked).

From v10 (KIP-848's topic ids) topics are named by id in the request and the response: each id is
resolved to its topic once; an unknown id is UNKNOWN_TOPIC_ID on its partitions (after the group's
authorization, before the topics'), as Kafka's KafkaApis resolves them.
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import (
    GROUP_DENIED,
    by_id_response,
    group_denied,
    ms,
    named_topics,
    partition_errors,
    replicated_results,
    requested_offsets,
    service,
)

TOPIC_IDS_FROM = 10


@api("OffsetCommit")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    svc = service(ctx)
    by_id = ctx.version >= TOPIC_IDS_FROM
    names, topics = named_topics(ctx, request.topics, by_id)
    offsets, errors = requested_offsets(ctx, request.group_id, topics)
    if offsets:
        results = svc.coordinator.commit_offsets(
            request.group_id,
            request.generation_id_or_member_epoch,
            request.member_id,
            getattr(request, "group_instance_id", None),
            offsets,
            now_ms(),
            retention_ms=ms(getattr(request, "retention_time", None)),
            api_version=ctx.version,
        )
        errors.update(await replicated_results(svc, request.group_id, results))
    if by_id:
        unknown_error = (
            GROUP_DENIED
            if None in names and group_denied(ctx, request.group_id)
            else ErrorCode.unknown_topic_id
        )
        answer = by_id_response(
            R.OffsetCommitResponseTopic, R.OffsetCommitResponsePartition, request.topics, names,
            errors, unknown_error,
        )
    else:
        answer = partition_errors(
            R.OffsetCommitResponseTopic, R.OffsetCommitResponsePartition, request.topics, errors
        )
    return build(R.OffsetCommitResponse, throttle_time=THROTTLE_NONE, topics=answer)
