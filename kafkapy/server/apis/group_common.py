"""Helpers shared by the group APIs (not an API itself): the group service, client identity,
millisecond conversions, the topic-existence filter Kafka applies before the coordinator, and the
group authorization check (READ for membership and commits, DESCRIBE to look, DELETE to delete:
GROUP_AUTHORIZATION_FAILED otherwise, before anything else about the group is examined)."""

from __future__ import annotations

import datetime
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..authorization import GROUP, READ, AclOperation, authorize

_MS = datetime.timedelta(milliseconds=1)


def service(ctx: Any) -> Any:
    return ctx.broker.groups


def coordinator(ctx: Any) -> Any:
    return ctx.broker.groups.coordinator


def now_ms() -> int:
    from ..broker import now_ms as _now

    return _now()


def ms(value: datetime.timedelta | int | None, default: int = -1) -> int:
    if value is None:
        return default
    if isinstance(value, datetime.timedelta):
        return value // _MS
    return int(value)


def client_host(ctx: Any) -> str:
    """As Kafka reports it (InetAddress.toString): "/127.0.0.1"."""
    host = ctx.peer.rsplit(":", 1)[0] if ":" in ctx.peer else ctx.peer
    return "/" + host.strip("[]")


def client_id(ctx: Any) -> str:
    return ctx.header.client_id or ""


def partition_exists(ctx: Any, topic: str, partition: int) -> bool:
    info = ctx.broker.topics.get(topic)
    return info is not None and partition in info.partitions


UNKNOWN_TOPIC = ErrorCode.unknown_topic_or_partition
GROUP_DENIED = ErrorCode.group_authorization_failed
TOPIC_DENIED = ErrorCode.topic_authorization_failed


def group_denied(ctx: Any, group_id: str, operation: AclOperation = READ) -> bool:
    """True when the request may not perform ``operation`` on the group."""
    return not authorize(ctx, operation, GROUP, group_id)
