"""The group coordinator's settings (the broker's group.* and offsets.* configs, in milliseconds
and counts), one plain object every part of the coordinator reads."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class CoordinatorConfig:
    num_partitions: int = 50
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    initial_rebalance_delay_ms: int = 3000
    max_size: int = 2**31 - 1
    offsets_retention_ms: int = 10080 * 60_000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    new_member_join_timeout_ms: int = 300_000
    consumer_session_timeout_ms: int = 45_000
    consumer_heartbeat_interval_ms: int = 5_000
    consumer_assignors: tuple[str, ...] = ("uniform", "range")
    consumer_max_size: int = 2**31 - 1
    consumer_migration_policy: str = "bidirectional"  # disabled, upgrade, downgrade
    # streams groups (KIP-1071): the broker's group.streams.* configs
    streams_session_timeout_ms: int = 45_000
    streams_heartbeat_interval_ms: int = 5_000
    streams_num_standby_replicas: int = 0
    streams_max_size: int = 2**31 - 1
    streams_initial_rebalance_delay_ms: int = 3_000
    streams_assignment_interval_ms: int = 1_000
    # per group: its GROUP config overrides kafkapy applies (consumer.session.timeout.ms,
    # consumer.heartbeat.interval.ms, streams.*), set through IncrementalAlterConfigs
    group_overrides: dict[str, dict[str, int]] = field(default_factory=dict)

    def session_timeout_ms(self, group_id: str) -> int:
        """A consumer group member's session timeout: the group's config, else the broker's."""
        got = self.group_overrides.get(group_id, {})
        return got.get("consumer.session.timeout.ms", self.consumer_session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        """The heartbeat interval a consumer group member is told: the group's config, else the
        broker's."""
        got = self.group_overrides.get(group_id, {})
        return got.get("consumer.heartbeat.interval.ms", self.consumer_heartbeat_interval_ms)

    def streams_setting(self, group_id: str, name: str) -> int:
        """A streams group's setting ``name`` (its group config's name without "streams."): the
        group's config, else the broker's group.streams.* config."""
        got = self.group_overrides.get(group_id, {})
        return got.get("streams." + name, getattr(self, STREAMS_SETTINGS[name]))


# a streams group config (without "streams.") -> the CoordinatorConfig field of its broker default
STREAMS_SETTINGS = {
    "session.timeout.ms": "streams_session_timeout_ms",
    "heartbeat.interval.ms": "streams_heartbeat_interval_ms",
    "num.standby.replicas": "streams_num_standby_replicas",
    "initial.rebalance.delay.ms": "streams_initial_rebalance_delay_ms",
    "assignment.interval.ms": "streams_assignment_interval_ms",
}
