"""Kafka's error table: codes, names, retriability (kio's ErrorCode, generated from Kafka's own)."""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "error_name"]


def error_name(code: int) -> str:
    """Kafka's upper-case name for an error code, e.g. 3 -> UNKNOWN_TOPIC_OR_PARTITION."""
    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        return f"UNKNOWN_ERROR_CODE_{code}"
