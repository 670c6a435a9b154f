"""Kafka's error table: codes, names, retriability (kio's ErrorCode, generated from Kafka's own,
with the codes Kafka 4.4 added after the pinned kio release joined to it by
:func:`add_newer_error_codes`)."""

from __future__ import annotations

from kio.schema.errors import ErrorCode
from kio.static.primitive import i16

__all__ = ["ErrorCode", "add_newer_error_codes", "error_name"]

# Kafka 4.4's org.apache.kafka.common.protocol.Errors beyond kio's table: name -> (code, retriable)
NEWER_ERROR_CODES: dict[str, tuple[int, bool]] = {
    "group_deletion_failed": (134, False),
    "streams_topology_description_update_failed": (135, False),
    "controller_id_not_registered": (136, False),
}


def add_newer_error_codes() -> None:
    """Make Kafka 4.4's newer codes members of kio's ErrorCode (idempotent), so responses that
    carry them decode and encode like any other. A kio release that has them makes this a
    no-op."""
    members = ErrorCode._value2member_map_
    for name, (code, retriable) in NEWER_ERROR_CODES.items():
        if code in members:
            continue
        member = int.__new__(ErrorCode, code)
        member._value_ = i16(code)
        member._name_ = name
        member.retriable = retriable  # type: ignore[misc]
        member.__objclass__ = ErrorCode  # type: ignore[attr-defined]
        members[code] = member
        ErrorCode._member_map_[name] = member
        ErrorCode._member_names_.append(name)
        type.__setattr__(ErrorCode, name, member)


def error_name(code: int) -> str:
    """Kafka's upper-case name for an error code, e.g. 3 -> UNKNOWN_TOPIC_OR_PARTITION."""
    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        return f"UNKNOWN_ERROR_CODE_{code}"
