"""Per-partition log configuration (the topic-level log.* / segment.* settings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LogConfig:
    segment_bytes: int = 1073741824  # log.segment.bytes
    segment_ms: int = 604800000  # log.roll.ms (7 days)
    index_interval_bytes: int = 4096  # log.index.interval.bytes
    max_message_bytes: int = 1048588  # message.max.bytes
    message_timestamp_type: str = "CreateTime"  # or "LogAppendTime"
    flush_interval_messages: int = 2**63 - 1
    flush_interval_ms: int | None = None
    segment_index_bytes: int = 10485760

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"
