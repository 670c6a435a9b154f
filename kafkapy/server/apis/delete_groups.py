"""DeleteGroups (key 42), versions 0-3 (v3 adds a per-group error message, left null).

Deletes empty groups: tombstones for each committed offset and for the group metadata go to
__consumer_offsets, then the group is gone. Per group: GROUP_ID_NOT_FOUND (no such group),
NON_EMPTY_GROUP (it has members), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. The empty group id
is served as any other, as Kafka 3.9's ZooKeeper-mode coordinator does. ZooKeeper mode: the answer
waits until the tombstones reached the ISR of the group's __consumer_offsets partition
(offsets.commit.timeout.ms), else COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR (group_service).

A share group (KIP-932) without members is deleted with its share-partitions' state.

Authorization: DELETE on each group (else GROUP_AUTHORIZATION_FAILED for it).
"""

from __future__ import annotations

from typing import Any

from kafkapy.clock import now_ms

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DELETE, GROUP, authorized_names
from .group_common import GROUP_DENIED, service


@api("DeleteGroups")
async def handle(ctx: RequestContext, request: Any) -> Any:
    svc = service(ctx)
    names = list(dict.fromkeys(request.groups_names))
    allowed = authorized_names(ctx, DELETE, GROUP, names)
    share_results = {g: svc.coordinator.share.delete(g) for g in names if g in allowed}
    share_ids = {g for g, e in share_results.items() if e is not None}
    results = svc.coordinator.delete_groups(
        [g for g in names if g in allowed and g not in share_ids], now_ms()
    )
    results.update((g, share_results[g]) for g in share_ids)
    results.update((g, GROUP_DENIED) for g in names if g not in allowed)
    svc.kick()
    for g in names:
        if results[g] == 0 and g in allowed and g not in share_ids:
            results[g] = await svc.replicated(g)
    return build(
        ctx.R.DeleteGroupsResponse,
        throttle_time=THROTTLE_NONE,
        results=tuple(
            build(ctx.R.DeletableGroupResult, group_id=g, error_code=results[g]) for g in names
        ),
    )
