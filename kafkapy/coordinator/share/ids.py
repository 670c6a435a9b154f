"""Kafka's text form of a topic id (``Uuid.toString``: URL-safe base64 without padding), used in
the share coordinator's key "group:topicId:partition"."""

from __future__ import annotations

import base64
import uuid


def kafka_uuid_string(topic_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
