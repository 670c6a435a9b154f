"""FindCoordinator (key 10), versions 0-6.

The coordinator of a key is the leader of partition abs(hashCode(key)) % partitions of an
internal topic: key type 0 (GROUP) a group id over __consumer_offsets, key type 1 (TRANSACTION)
a transactional id over __transaction_state. The topic is created on the first lookup (as Kafka
does) and, being created synchronously here, answered at once when its leader is known (in
ZooKeeper mode the controller elects leaders shortly after: COORDINATOR_NOT_AVAILABLE until
then, and clients retry). Other key types: INVALID_REQUEST. v0-3 carry one key and a top-level
answer (error message from v1); v4+ carry a batch of coordinator_keys and one answer per key.

Authorization first, as Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the
transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata.names import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from kafkapy.protocol.errors import ErrorCode

from ..live_brokers import live_brokers
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, authorize, transactional_id_error
from ..security.authorization import GROUP as GROUP_RESOURCE

GROUP, TRANSACTION = 0, 1
_TOPICS = {GROUP: OFFSETS_TOPIC, TRANSACTION: TRANSACTION_STATE_TOPIC}


def _lookup(ctx, key: str, key_type: int) -> tuple[int, str | None, int, str, int]:
    """(error, message, node id, host, port) for one key."""
    broker = ctx.broker
    if key_type == GROUP and not authorize(ctx, DESCRIBE, GROUP_RESOURCE, key):
        return ErrorCode.group_authorization_failed, None, -1, "", -1
    if key_type == TRANSACTION:
        denied = transactional_id_error(ctx, key, DESCRIBE)
        if denied is not None:
            return denied, None, -1, "", -1
    if key_type not in _TOPICS:
        return ErrorCode.invalid_request, f"Unknown coordinator type: {key_type}", -1, "", -1
    svc = broker.groups if key_type == GROUP else broker.txn
    if not svc.ensure_topic():
        return ErrorCode.coordinator_not_available, None, -1, "", -1
    info = broker.topics.get(_TOPICS[key_type])
    partition = svc.coordinator.partition_for(key)
    state = info.states.get(partition) if info else None
    if state is None or state.leader < 0:
        return ErrorCode.coordinator_not_available, None, -1, "", -1
    listener = ctx.session.listener_name  # answer with the endpoint of the client's listener
    if state.leader == broker.broker_id:
        endpoint = broker.endpoint(listener)
    else:
        other = live_brokers(broker).get(state.leader)
        endpoint = other.endpoint(listener) if other is not None else None
    if endpoint is None:
        return ErrorCode.coordinator_not_available, None, -1, "", -1
    return ErrorCode.none, None, state.leader, endpoint.host, endpoint.port


@api("FindCoordinator")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    key_type = getattr(request, "key_type", GROUP)
    if ctx.version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            err, msg, node, host, port = _lookup(ctx, key, key_type)
            coordinators.append(
                build(
                    R.Coordinator,
                    key=key,
                    node_id=node,
                    host=host,
                    port=port,
                    error_code=err,
                    error_message=msg,
                )
            )
        return build(
            R.FindCoordinatorResponse, throttle_time=THROTTLE_NONE, coordinators=tuple(coordinators)
        )
    err, msg, node, host, port = _lookup(ctx, request.key, key_type)
    return build(
        R.FindCoordinatorResponse,
        throttle_time=THROTTLE_NONE,
        error_code=err,
        error_message=msg,
        node_id=node,
        host=host,
        port=port,
    )
