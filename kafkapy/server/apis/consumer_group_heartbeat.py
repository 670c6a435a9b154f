"""ConsumerGroupHeartbeat (key 68), versions 0-1: the consumer protocol of KIP-848.

One request joins (member epoch 0), heartbeats, reconciles and leaves (epoch -1; -2 for a static
member that will come back). The coordinator (kafkapy.coordinator.group.modern) bumps the group
epoch when membership or subscriptions change, computes the target assignment with the group's
server-side assignor ("uniform" by default, "range"; group.consumer.assignors), and moves each
member towards it, revoking before assigning. The answer carries the member epoch, the heartbeat
interval (group.consumer.heartbeat.interval.ms) and, when it changed or the request was a full
one, the member's assignment as topic ids and partitions. From v1 the client generates the
member id (empty: INVALID_REQUEST) and may subscribe by regular expression (subscribed_topic_regex,
matched against whole topic names, internal topics excluded).

Online migration (group.consumer.migration.policy, default bidirectional): joining a classic
group of the 'consumer' protocol type with members converts it into a consumer group whose classic
members keep their assignment and the classic protocol; when the last member of the consumer
protocol leaves (or is fenced) and the rest use the classic protocol, the group becomes classic
again and rebalances.

Errors: INVALID_REQUEST (the request's own rules, with Kafka's messages), UNSUPPORTED_ASSIGNOR,
INVALID_REGULAR_EXPRESSION, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (no
such group for epoch != 0, or a classic group that cannot be upgraded), UNKNOWN_MEMBER_ID,
FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
COORDINATOR_NOT_AVAILABLE (the records could not be written). ZooKeeper mode: the answer waits
until the group's records reached the ISR of its __consumer_offsets partition
(offsets.commit.timeout.ms), else COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR alone, as Kafka
answers a failed write (group_service).

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.clock import now_ms
from kafkapy.coordinator.group.modern import HeartbeatRequest

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from .group_common import GROUP_DENIED, client_host, client_id, group_denied, ms, service


@api("ConsumerGroupHeartbeat")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if group_denied(ctx, request.group_id):
        return build(
            R.ConsumerGroupHeartbeatResponse, throttle_time=THROTTLE_NONE, error_code=GROUP_DENIED,
            error_message=None, member_id=None, member_epoch=0,
            heartbeat_interval=datetime.timedelta(0), assignment=None,
        )
    svc = service(ctx)
    owned: dict[Any, set[int]] | None = None
    if request.topic_partitions is not None:
        owned = {}
        for tp in request.topic_partitions:
            owned.setdefault(tp.topic_id, set()).update(tp.partitions)
    names = request.subscribed_topic_names
    r = HeartbeatRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=ms(request.rebalance_timeout),
        subscribed_topic_names=None if names is None else tuple(names),
        subscribed_topic_regex=getattr(request, "subscribed_topic_regex", None),
        server_assignor=request.server_assignor,
        owned=owned,
        client_id=client_id(ctx),
        client_host=client_host(ctx),
        version=ctx.version,
    )
    result = svc.coordinator.consumer_group_heartbeat(r, now_ms())
    svc.kick()
    if result.error == 0:
        err = await svc.replicated(request.group_id)
        if err:
            return build(
                R.ConsumerGroupHeartbeatResponse,
                throttle_time=THROTTLE_NONE,
                error_code=err,
                error_message=None,
                member_id=None,
                member_epoch=0,
                heartbeat_interval=datetime.timedelta(0),
                assignment=None,
            )
    assignment = None
    if result.assignment is not None:
        assignment = build(
            R.Assignment,
            topic_partitions=tuple(
                build(R.TopicPartitions, topic_id=t, partitions=tuple(sorted(ps)))
                for t, ps in sorted(result.assignment.items(), key=lambda kv: str(kv[0]))
                if ps
            ),
        )
    return build(
        R.ConsumerGroupHeartbeatResponse,
        throttle_time=THROTTLE_NONE,
        error_code=result.error,
        error_message=result.message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval=datetime.timedelta(milliseconds=result.heartbeat_interval_ms),
        assignment=assignment,
    )
