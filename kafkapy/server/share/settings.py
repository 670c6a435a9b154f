"""A share group's effective settings (kafka's GroupConfigManager for share groups): its
``share.*`` GROUP config overrides over the broker's ``group.share.*`` configs, read again at most
once a second per group so config changes apply to running groups."""

from __future__ import annotations

import time
from typing import Any

from kafkapy.coordinator.share.config import ShareSettings

from ..config.config_definitions import definitions
from ..config.group_configs import default_value
from ..config.log_configs import broker_layers

_TTL_S = 1.0


class ShareSettingsSource:
    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self._cache: dict[str, tuple[float, ShareSettings]] = {}

    def __call__(self, group_id: str) -> ShareSettings:
        now = time.monotonic()
        hit = self._cache.get(group_id)
        if hit is not None and now - hit[0] < _TTL_S:
            return hit[1]
        settings = self._read(group_id)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[group_id] = (now, settings)
        return settings

    def _read(self, group_id: str) -> ShareSettings:
        broker_configs = broker_layers(self.broker).merged()
        cluster = getattr(self.broker, "cluster", None)
        overrides = cluster.group_configs(group_id) if cluster is not None else {}
        table = definitions("group")

        def value(name: str) -> str:
            if name in overrides:
                return str(overrides[name])
            return str(default_value(broker_configs, table[name]))

        def number(name: str) -> int:
            try:
                return int(value(name))
            except ValueError:
                return int(table[name].default or 0)

        return ShareSettings(
            session_timeout_ms=number("share.session.timeout.ms"),
            heartbeat_interval_ms=number("share.heartbeat.interval.ms"),
            max_size=int(broker_configs.get("group.share.max.size", 200)),
            record_lock_duration_ms=number("share.record.lock.duration.ms"),
            delivery_count_limit=number("share.delivery.count.limit"),
            partition_max_record_locks=number("share.partition.max.record.locks"),
            auto_offset_reset=value("share.auto.offset.reset"),
            isolation_level=value("share.isolation.level"),
            renew_acknowledge_enable=value("share.renew.acknowledge.enable").lower() == "true",
        )
