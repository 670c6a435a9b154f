"""CreatePartitions (key 37), versions 0-3.

Raises a topic's partition count, with an optional explicit assignment for the new partitions.
Kafka's errors: INVALID_PARTITIONS for a count that does not grow the topic,
INVALID_REPLICA_ASSIGNMENT for a bad assignment, UNKNOWN_TOPIC_OR_PARTITION for a missing topic,
INVALID_REQUEST for a topic named twice. validate_only checks without changing anything.
In ZooKeeper mode the controller creates the new partitions' states; with timeout_ms > 0 the
answer waits for their leaders (REQUEST_TIMED_OUT for a topic still without), as in CreateTopics;
a timeout_ms of 0 or less is past the controller's deadline: every topic REQUEST_TIMED_OUT,
nothing grown.

Authorization: ALTER on each topic (else TOPIC_AUTHORIZATION_FAILED, after the duplicate check).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..controller_deadline import deadline_passed
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, TOPIC, authorized_names
from ..topics import TopicError


@api("CreatePartitions")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    registry = ctx.broker.topics
    counts = Counter(t.name for t in request.topics)
    may_alter = authorized_names(ctx, ALTER, TOPIC, counts)
    to_controller = [n for n, count in counts.items() if count == 1 and n in may_alter]
    if to_controller and deadline_passed(request.timeout):
        return build(R.CreatePartitionsResponse, throttle_time=THROTTLE_NONE, results=tuple(
            build(R.CreatePartitionsTopicResult, name=t.name,
                  error_code=ErrorCode.request_timed_out, error_message=None)
            for t in request.topics))
    results: list[Any] = []
    grown: dict[str, int] = {}  # topic -> index in results
    for t in request.topics:
        error, message = ErrorCode.none, None
        try:
            if counts[t.name] > 1:
                raise TopicError(ErrorCode.invalid_request, "Duplicate topic in request.")
            if t.name not in may_alter:
                raise TopicError(
                    ErrorCode.topic_authorization_failed, "The topic authorization is failed."
                )
            assignments = (
                [list(a.broker_ids) for a in t.assignments] if t.assignments is not None else None
            )
            registry.add_partitions(t.name, t.count, assignments, request.validate_only)
            if not request.validate_only:
                grown[t.name] = len(results)
        except TopicError as e:
            error, message = e.code, e.message
        results.append(
            build(
                R.CreatePartitionsTopicResult, name=t.name, error_code=error, error_message=message
            )
        )
    timeout = request.timeout.total_seconds()
    if grown and ctx.broker.replicas is not None and timeout > 0:
        for name in await registry.wait_for_leaders(grown, timeout):
            results[grown[name]] = dataclasses.replace(
                results[grown[name]], error_code=ErrorCode.request_timed_out, error_message=None
            )
    return build(R.CreatePartitionsResponse, throttle_time=THROTTLE_NONE, results=tuple(results))
