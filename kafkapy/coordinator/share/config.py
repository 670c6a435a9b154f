"""A share group's effective settings: the group's own configs (``share.*`` GROUP config
overrides) over the broker's ``group.share.*`` defaults, as Kafka's GroupConfigManager resolves
them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShareSettings:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = 200
    record_lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    partition_max_record_locks: int = 2_000
    auto_offset_reset: str = "latest"  # "earliest", "latest" or "by_duration:<ISO-8601>"
    isolation_level: str = "read_uncommitted"
    renew_acknowledge_enable: bool = True
