"""AlterClientQuotas (key 49), versions 0-1.

Each entry (an entity and its ops) is validated and applied on its own, all its ops or none,
with Kafka's rules and error codes (INVALID_REQUEST unless noted):
- the entity must not be empty; entity types are ``user``, ``client-id`` and ``ip`` (a repeated
  type keeps its last name, as Kafka's request conversion does); a name may be null (the default
  entity) but not empty; ``user`` may be combined with ``client-id``, ``ip`` stands alone; an ip
  must be an IPv4 or IPv6 address (Kafka would also accept a resolvable host name);
- quota keys: ``producer_byte_rate`` and ``consumer_byte_rate`` (integral, LONG),
  ``request_percentage`` and ``controller_mutation_rate`` (DOUBLE) for user/client-id entities,
  ``connection_creation_rate`` (integral INT, >= 0) for ip entities; a value for an integral key
  must be integral (within 1e-6); removing a key is never checked.
Unless validate_only, the entity's config znode (/config/users/.., /config/clients/..,
/config/ips/..; see kafkapy.metadata.client_quotas) is rewritten with a change notification.
The new quotas apply on this broker at once (server/quota_enforcement.py) and on the others when
they see the notification.

Authorization: ALTER_CONFIGS on the cluster (else CLUSTER_AUTHORIZATION_FAILED on every entry).
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any

from kafkapy.metadata import client_quotas as cq
from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER_CONFIGS, CLUSTER_DENIED_MESSAGE, authorize_cluster

log = logging.getLogger("kafkapy.quotas")

INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1
EPSILON = 1e-6


@dataclass(frozen=True, slots=True)
class QuotaKey:
    type: str  # Kafka's ConfigDef type: LONG, INT or DOUBLE
    min: float | None = None


USER_CLIENT_KEYS = {
    "producer_byte_rate": QuotaKey("LONG"),
    "consumer_byte_rate": QuotaKey("LONG"),
    "request_percentage": QuotaKey("DOUBLE"),
    "controller_mutation_rate": QuotaKey("DOUBLE"),
}
IP_KEYS = {"connection_creation_rate": QuotaKey("INT", 0)}
QUOTA_KEYS = {**USER_CLIENT_KEYS, **IP_KEYS}


class QuotaError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> QuotaError:
    return QuotaError(ErrorCode.invalid_request, message)


def validate_entity(components) -> cq.Entity:
    """The entity of an alteration as a type -> name map; QuotaError when Kafka refuses it."""
    if not components:
        raise _invalid("Invalid empty client quota entity")
    entity: cq.Entity = {}
    for c in components:
        entity[c.entity_type] = c.entity_name
    for kind, name in entity.items():
        if kind not in cq.ENTITY_TYPES:
            raise _invalid(f"Unhandled client quota entity type: {kind}")
        if name is not None and name == "":
            raise _invalid(f"Empty {kind} not supported")
    if cq.IP in entity:
        if len(entity) > 1:
            raise _invalid(
                "Invalid quota entity combination: an ip entity cannot be combined with a user "
                "or client-id entity"
            )
        ip = entity[cq.IP]
        if ip is not None:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                raise _invalid(f"{ip} is not a valid IP or resolvable host.") from None
    return entity


def quota_value(key: str, spec: QuotaKey, value: float) -> str:
    """The stored string for ``value``; QuotaError when it does not fit the key's type."""
    if spec.min is not None and value < spec.min:
        raise _invalid(f"Invalid value {value} for configuration {key}: must be >= {spec.min:g}")
    if spec.type == "DOUBLE":
        return repr(float(value))
    limit = LONG_MAX if spec.type == "LONG" else INT_MAX
    if not -limit - 1 <= value <= limit:
        raise _invalid(f"Configuration {key} is too large for a {spec.type} value")
    integral = int(value + EPSILON)
    if abs(integral - value) > EPSILON:
        raise _invalid(f"Configuration {key} must be a {spec.type} value")
    return str(integral)


def apply_ops(entity: cq.Entity, current: dict[str, str], ops) -> dict[str, str]:
    """The entity's configs after ``ops``; QuotaError on an invalid key or value."""
    keys = IP_KEYS if cq.IP in entity else USER_CLIENT_KEYS
    props = dict(current)
    for op in ops:
        if op.remove:
            props.pop(op.key, None)
            continue
        spec = keys.get(op.key)
        if spec is None:
            raise _invalid(f"Invalid configuration key {op.key}")
        props[op.key] = quota_value(op.key, spec, op.value)
    return props


@api("AlterClientQuotas")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    store = ctx.broker.cluster.store
    entries = []
    denied = not authorize_cluster(ctx, ALTER_CONFIGS)
    for entry in request.entries:
        code, message = ErrorCode.none, None
        try:
            if denied:
                raise QuotaError(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
            entity = validate_entity(entry.entity)
            props = apply_ops(entity, cq.read(store, entity), entry.ops)
            if not request.validate_only:
                cq.write(store, entity, props)
                ctx.broker.client_quotas.apply(entity, props)
                log.info("client quotas altered entity=%s configs=%s", entity, props)
        except QuotaError as e:
            code, message = e.code, e.message
        entries.append(
            build(
                R.EntryData,
                error_code=code,
                error_message=message,
                entity=tuple(
                    build(R.EntityData, entity_type=c.entity_type, entity_name=c.entity_name)
                    for c in entry.entity
                ),
            )
        )
    return build(R.AlterClientQuotasResponse, throttle_time=THROTTLE_NONE, entries=tuple(entries))
