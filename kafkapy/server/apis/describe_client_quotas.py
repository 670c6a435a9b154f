"""DescribeClientQuotas (key 48), versions 0-1.

Describes the quota entities stored under /config/users, /config/clients and /config/ips (see
kafkapy.metadata.client_quotas) that match a filter, with their quota values as doubles. Each
filter component names an entity type (``user``, ``client-id``, ``ip``) and a match type:
0 exact (the entity has that type with exactly that name), 1 default (the entity has that type's
default entity), 2 any (the entity has that type, default or named). Every component must match;
with ``strict`` the entity must also have no other types (so strict with no components matches
nothing, and non-strict with no components matches everything). Only quota keys are reported
(SCRAM credentials stored on users are not), and entities without any quota are left out.
Filter errors are Kafka's, for the whole request (entries null): an empty entity type, a type
given twice, a match string with match type default or any, or none with exact, and an ip
component combined with a user or client-id one give INVALID_REQUEST; an unknown entity type or
match type gives UNSUPPORTED_VERSION.

Authorization: DESCRIBE_CONFIGS on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from kafkapy.metadata import client_quotas as cq
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import CLUSTER_DENIED_MESSAGE, DESCRIBE_CONFIGS, authorize_cluster
from .alter_client_quotas import QUOTA_KEYS, QuotaError

EXACT, DEFAULT, ANY = 0, 1, 2
_ANY = object()  # "any name" in a parsed filter


def parse_filter(components) -> dict[str, object]:
    """entity type -> wanted name (None: the default entity, _ANY: any)."""
    wanted: dict[str, object] = {}
    for c in components:
        kind = c.entity_type
        if not kind:
            raise QuotaError(ErrorCode.invalid_request, "Invalid empty entity type.")
        if kind in wanted:
            raise QuotaError(
                ErrorCode.invalid_request, f"Entity type {kind} appears more than once."
            )
        if kind not in cq.ENTITY_TYPES:
            raise QuotaError(ErrorCode.unsupported_version, f"Unsupported entity type {kind}")
        if c.match_type == EXACT:
            if c.match is None:
                raise QuotaError(
                    ErrorCode.invalid_request, "Match type exact needs a match string."
                )
            wanted[kind] = c.match
        elif c.match_type in (DEFAULT, ANY):
            if c.match is not None:
                raise QuotaError(
                    ErrorCode.invalid_request,
                    f"Match type {'default' if c.match_type == DEFAULT else 'any'} takes no "
                    "match string.",
                )
            wanted[kind] = None if c.match_type == DEFAULT else _ANY
        else:
            raise QuotaError(
                ErrorCode.unsupported_version, f"Unsupported match type {c.match_type}"
            )
    if cq.IP in wanted and (cq.USER in wanted or cq.CLIENT_ID in wanted):
        raise QuotaError(
            ErrorCode.invalid_request,
            "Invalid entity filter component combination: an ip component cannot be used with a "
            "user or client-id component.",
        )
    return wanted


def matches(entity: cq.Entity, wanted: dict[str, object], strict: bool) -> bool:
    if strict and len(entity) != len(wanted):
        return False
    for kind, name in wanted.items():
        if kind not in entity:
            return False
        if name is not _ANY and entity[kind] != name:
            return False
    return True


def quota_values(configs: dict[str, str]) -> list[tuple[str, float]]:
    out = []
    for key, value in sorted(configs.items()):
        if key not in QUOTA_KEYS:
            continue
        try:
            out.append((key, float(value)))
        except ValueError:
            continue
    return out


def describe(store, components, strict: bool) -> list[tuple[cq.Entity, list[tuple[str, float]]]]:
    wanted = parse_filter(components)
    found = []
    for entity, configs in cq.all_entities(store):
        if not matches(entity, wanted, strict):
            continue
        values = quota_values(configs)
        if values:
            found.append((entity, values))
    return found


@api("DescribeClientQuotas")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not authorize_cluster(ctx, DESCRIBE_CONFIGS):
        return build(R.DescribeClientQuotasResponse, throttle_time=THROTTLE_NONE,
                     error_code=ErrorCode.cluster_authorization_failed,
                     error_message=CLUSTER_DENIED_MESSAGE, entries=None)
    try:
        found = describe(ctx.broker.cluster.store, request.components, request.strict)
    except QuotaError as e:
        return build(
            R.DescribeClientQuotasResponse,
            throttle_time=THROTTLE_NONE,
            error_code=e.code,
            error_message=e.message,
            entries=None,
        )
    entries = tuple(
        build(
            R.EntryData,
            entity=tuple(
                build(R.EntityData, entity_type=kind, entity_name=entity[kind])
                for kind in cq.ENTITY_TYPES
                if kind in entity
            ),
            values=tuple(build(R.ValueData, key=k, value=v) for k, v in values),
        )
        for entity, values in found
    )
    return build(
        R.DescribeClientQuotasResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        error_message=None,
        entries=entries,
    )
