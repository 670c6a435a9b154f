"""The 'consumer' embedded protocol of classic groups, read and written by the coordinator.

Clients of the classic protocol put a *Subscription* in their JoinGroup metadata (topics, user
data, and from v1 the partitions they own, v2 their generation, v3 their rack) and receive an
*Assignment* in SyncGroup (partitions by topic name, user data). The byte layout is described in
protocol_specs/consumer_offsets.json ("consumer_protocol") and encoded by ``records``.

The coordinator needs them when a classic group becomes a consumer group (each member's
subscription and current assignment), for classic members inside a consumer group (their
subscription, owned partitions and the assignment SyncGroup hands out), and when a consumer group
becomes classic again (each member's target assignment as bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import records as rec


class EmbeddedProtocolError(ValueError):
    """Bytes that are not a valid 'consumer' embedded protocol message."""


@dataclass(frozen=True, slots=True)
class Subscription:
    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: dict[str, set[int]] = field(default_factory=dict)
    generation_id: int = -1
    rack_id: str | None = None


def _by_topic(items: list[dict] | None) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for item in items or ():
        out.setdefault(item["topic"], set()).update(item["partitions"] or ())
    return out


def parse_subscription(data: bytes) -> Subscription:
    try:
        version, v = rec.decode_embedded("Subscription", data)
    except rec.RecordFormatError as e:
        raise EmbeddedProtocolError(f"malformed subscription: {e}") from None
    return Subscription(
        version,
        tuple(v["topics"] or ()),
        v["user_data"],
        _by_topic(v["owned_partitions"]),
        v["generation_id"] if v["generation_id"] is not None else -1,
        v["rack_id"],
    )


def parse_assignment(data: bytes) -> tuple[dict[str, set[int]], bytes | None]:
    """(partitions by topic, user data) of an Assignment."""
    try:
        _, v = rec.decode_embedded("Assignment", data)
    except rec.RecordFormatError as e:
        raise EmbeddedProtocolError(f"malformed assignment: {e}") from None
    return _by_topic(v["assigned_partitions"]), v["user_data"]


def encode_assignment(partitions: dict[str, set[int]], version: int) -> bytes:
    """An Assignment (no user data) in ``version`` (clamped to the highest known)."""
    return rec.encode_embedded(
        "Assignment",
        {
            "assigned_partitions": [
                {"topic": t, "partitions": sorted(ps)} for t, ps in sorted(partitions.items()) if ps
            ],
            "user_data": None,
        },
        version,
    )


def version_of(metadata: bytes) -> int:
    """The version header of a Subscription (0 when there is none)."""
    return int.from_bytes(metadata[:2], "big", signed=True) if len(metadata) >= 2 else 0
