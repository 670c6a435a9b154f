"""DeleteTopics (key 20), versions 1-6.

Deletes by name (v1-5 topic_names, v6 topics with a name) or by topic id (v6). The topic's znodes
go and its partition logs are removed. Unknown names get UNKNOWN_TOPIC_OR_PARTITION, unknown ids
UNKNOWN_TOPIC_ID; a request naming a topic by both name and id is INVALID_REQUEST.

Authorization: DELETE on each topic (else TOPIC_AUTHORIZATION_FAILED); a topic named by id
that the request may not DESCRIBE gets TOPIC_AUTHORIZATION_FAILED without its name.

A timeout_ms of 0 or less is past the controller's deadline (server/controller_deadline.py):
every topic is answered REQUEST_TIMED_OUT and none is deleted, as Kafka 4.4 does.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..controller_deadline import deadline_passed
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DELETE, DESCRIBE, TOPIC, authorized_names
from ..topics import TopicError

ZERO = uuid.UUID(int=0)


@api("DeleteTopics")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    registry = ctx.broker.topics
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(n, None) for n in request.topic_names]
    named = Counter(n for n, tid in wanted if n is not None and (tid is None or tid == ZERO))
    by_id = Counter(tid for n, tid in wanted if n is None and tid is not None and tid != ZERO)
    to_controller = [k for k, c in (named + by_id).items() if c == 1]
    if to_controller and deadline_passed(request.timeout):
        return build(R.DeleteTopicsResponse, throttle_time=THROTTLE_NONE, responses=tuple(
            build(R.DeletableTopicResult, name=name, topic_id=tid or ZERO,
                  error_code=ErrorCode.request_timed_out, error_message=None)
            for name, tid in wanted))
    results = []
    resolved = []
    for name, tid in wanted:
        error, message = ErrorCode.none, None
        has_id = tid is not None and tid != ZERO
        if name is not None and has_id:
            error, message = ErrorCode.invalid_request, "Topic name and id can't both be specified."
        elif has_id:
            info = registry.get_by_id(tid)
            if info is None:
                error = ErrorCode.unknown_topic_id
            else:
                name = info.name
        resolved.append((name, tid, has_id, error, message))
    names = [r[0] for r in resolved if r[0] is not None]
    may_describe = authorized_names(ctx, DESCRIBE, TOPIC, names)
    may_delete = authorized_names(ctx, DELETE, TOPIC, names)
    for name, tid, has_id, error, message in resolved:
        if error == ErrorCode.none and has_id and name not in may_describe:
            name, error = None, ErrorCode.topic_authorization_failed  # do not disclose the name
        elif error == ErrorCode.none and name not in may_delete:
            error = ErrorCode.topic_authorization_failed
        if error == ErrorCode.none:
            try:
                info = registry.delete(name or "")
                tid = info.topic_id
            except TopicError as e:
                error, message = e.code, e.message
        results.append(
            build(
                R.DeletableTopicResult,
                name=name,
                topic_id=tid or ZERO,
                error_code=error,
                error_message=message,
            )
        )
    return build(R.DeleteTopicsResponse, throttle_time=THROTTLE_NONE, responses=tuple(results))
