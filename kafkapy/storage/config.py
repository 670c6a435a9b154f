"""Per-partition log configuration (the topic-level log.* / segment.* / cleanup settings).

A ``PartitionLog`` reads its config on every decision (roll, retention, cleaning, validation), so
replacing it with :meth:`PartitionLog.update_config` applies a change immediately.
"""

from __future__ import annotations

from dataclasses import dataclass

LONG_MAX = 2**63 - 1

# compression.type value -> record-batch codec id (None: keep the producer's codec)
COMPRESSION_CODECS: dict[str, int | None] = {
    "producer": None,
    "uncompressed": 0,
    "gzip": 1,
    "snappy": 2,
    "lz4": 3,
    "zstd": 4,
}


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
    # retention and cleaning
    cleanup_policy: tuple[str, ...] = ("delete",)
    retention_ms: int = 604800000  # -1: unlimited
    retention_bytes: int = -1  # -1: unlimited
    file_delete_delay_ms: int = 60000
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    # produce validation
    compression_type: str = "producer"
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = 3600000
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def target_codec(self) -> int | None:
        """Codec the broker stores batches with; None keeps the producer's."""
        return COMPRESSION_CODECS.get(self.compression_type)
