"""Kafka's Uuid conventions: topic ids and cluster ids as URL-safe base64 without padding.

A Kafka Uuid is 128 bits (most significant 64 bits first); its string form is the 16 big-endian
bytes in URL-safe base64 with the ``==`` padding removed (22 characters). Random ids come from a
version-4 random UUID, redrawn while they are reserved (the zero uuid, the metadata topic id
``(0, 1)``) or their string form starts with '-' (it would look like a command line option).
"""

from __future__ import annotations

import base64
import binascii
import uuid

ZERO_UUID = uuid.UUID(int=0)
#: Kafka's Uuid.METADATA_TOPIC_ID (most=0, least=1)
METADATA_TOPIC_ID = uuid.UUID(int=1)
#: Kafka's Uuid.ONE_UUID
ONE_UUID = uuid.UUID(int=1)
RESERVED = frozenset({ZERO_UUID, METADATA_TOPIC_ID, ONE_UUID})


def uuid_to_base64(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): 22-char URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")


def base64_to_uuid(s: str) -> uuid.UUID:
    """Kafka's Uuid.fromString(); ValueError unless ``s`` encodes exactly 16 bytes."""
    if not isinstance(s, str) or len(s) > 24:
        raise ValueError(f"invalid Kafka uuid string: {s!r}")
    try:
        raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"invalid Kafka uuid string: {s!r}") from e
    if len(raw) != 16:
        raise ValueError(f"Kafka uuid string must encode 16 bytes, got {len(raw)}: {s!r}")
    return uuid.UUID(bytes=raw)


def random_uuid() -> uuid.UUID:
    """Kafka's Uuid.randomUuid(): never reserved, never rendered with a leading '-'."""
    while True:
        u = uuid.uuid4()
        if u not in RESERVED and not uuid_to_base64(u).startswith("-"):
            return u


def random_cluster_id() -> str:
    """A new cluster id, as Kafka generates it: a random Uuid in its base64 string form."""
    return uuid_to_base64(random_uuid())
