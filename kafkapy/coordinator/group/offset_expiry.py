"""Offset expiry (KIP-211, sans-io): every offsets.retention.check.interval.ms, committed offsets
older than offsets.retention.minutes are tombstoned, and groups left with nothing are removed.

When an offset's clock starts depends on the group, as in Kafka: an explicit expire timestamp
(OffsetCommit v1) wins; in an empty classic group, from the time the group became empty; in a
Stable classic group of the 'consumer' protocol type, only offsets of topics no member subscribes
to expire, from their commit; other non-empty classic groups keep their offsets; a group without
a protocol type (simple consumers, admin clients) from the commit. In a consumer group, offsets
of topics no member subscribes to expire from their commit, and an empty consumer group whose
offsets all expired is removed. Partitions with a pending transactional commit keep their offset,
and their group, until the transaction ends (Kafka's rule).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from . import consumer_records as crec
from . import records as rec
from .classic import GroupState, OffsetAndMetadata
from .consumer import ConsumerGroup
from .state import CoordinatorState, Group, Records
from .streams.model import StreamsGroup

S = GroupState
log = logging.getLogger("kafkapy.coordinator.group")

RETENTION_TIMER = ("retention",)


@dataclass(slots=True)
class OffsetExpiry:
    state: CoordinatorState
    drop_group: Callable[[Group, int], None]

    def ensure_timer(self, now_ms: int) -> None:
        if RETENTION_TIMER not in self.state.timers:
            self._schedule(now_ms)

    def _schedule(self, now_ms: int) -> None:
        self.state.timers.schedule(
            RETENTION_TIMER,
            now_ms + self.state.config.offsets_retention_check_interval_ms,
            self._on_retention_check,
        )

    def _on_retention_check(self, now_ms: int) -> None:
        self.expire_offsets(now_ms)
        self._schedule(now_ms)

    def _expire_consumer_offsets(self, group: ConsumerGroup, now_ms: int) -> int:
        """Offsets of topics no member subscribes to expire offsets.retention.minutes after their
        commit (Kafka's consumer-group rule); an empty group with no offsets left is removed."""
        subscribed = group.subscribed_topic_names(self.state.regex_topics)
        unstable = self.state.txn_offsets.unstable(group.group_id)
        expired = []
        for (topic, partition), om in group.offsets.items():
            if topic in subscribed or (topic, partition) in unstable:
                continue
            if om.expire_timestamp >= 0:
                gone = now_ms >= om.expire_timestamp
            else:
                gone = now_ms - om.commit_timestamp >= self.state.config.offsets_retention_ms
            if gone:
                expired.append((topic, partition))
        records: Records = [(rec.offset_key(group.group_id, t, p), None) for t, p in expired]
        drop = group.is_empty() and len(expired) == len(group.offsets) and not unstable
        if drop:
            records += crec.group_tombstones(group)
        if not records or self.state.append(group.group_id, records, now_ms):
            return 0
        for tp in expired:
            group.offsets.pop(tp, None)
        if drop:
            log.info("removed empty consumer group=%s", group.group_id)
            self.drop_group(group, now_ms)
        return len(expired)

    def _expire_streams_offsets(self, group: StreamsGroup, now_ms: int) -> int:
        """A streams group's offsets: as a consumer group's, the source topics of a group with
        members counting as subscribed (Kafka's StreamsGroup.isSubscribedToTopic)."""
        unstable = self.state.txn_offsets.unstable(group.group_id)
        expired = []
        for (topic, partition), om in group.offsets.items():
            if group.is_subscribed_to(topic) or (topic, partition) in unstable:
                continue
            if om.expire_timestamp >= 0:
                gone = now_ms >= om.expire_timestamp
            else:
                gone = now_ms - om.commit_timestamp >= self.state.config.offsets_retention_ms
            if gone:
                expired.append((topic, partition))
        records: Records = [(rec.offset_key(group.group_id, t, p), None) for t, p in expired]
        if not records or self.state.append(group.group_id, records, now_ms):
            return 0
        for tp in expired:
            group.offsets.pop(tp, None)
        if group.is_empty() and not group.offsets and not unstable:
            self.drop_group(group, now_ms)
        return len(expired)

    def expire_offsets(self, now_ms: int) -> int:
        """Remove expired offsets (tombstones) and then groups left empty; return how many
        offsets expired."""
        state = self.state
        retention = state.config.offsets_retention_ms
        total = 0
        for group in list(state.groups.values()):
            if not state.owns(group.group_id):
                continue
            if isinstance(group, ConsumerGroup):
                total += self._expire_consumer_offsets(group, now_ms)
                continue
            if isinstance(group, StreamsGroup):
                total += self._expire_streams_offsets(group, now_ms)
                continue
            subscribed: set[str] | None = None
            base: Callable[[OffsetAndMetadata], int]
            if group.protocol_type is not None:
                if group.is_in(S.EMPTY):
                    state_ts = group.state_timestamp

                    def base(om: OffsetAndMetadata, ts: int = state_ts) -> int:
                        return ts if ts >= 0 else om.commit_timestamp
                elif group.protocol_type == "consumer" and group.is_in(S.STABLE):
                    subscribed = group.subscribed_topics()
                    if subscribed is None:
                        continue

                    def base(om: OffsetAndMetadata) -> int:
                        return om.commit_timestamp
                else:
                    continue
            else:

                def base(om: OffsetAndMetadata) -> int:
                    return om.commit_timestamp

            unstable = state.txn_offsets.unstable(group.group_id)
            expired = []
            for (topic, partition), om in group.offsets.items():
                if (subscribed is not None and topic in subscribed) or (
                    topic,
                    partition,
                ) in unstable:
                    continue
                if om.expire_timestamp >= 0:
                    gone = now_ms >= om.expire_timestamp
                else:
                    gone = now_ms - base(om) >= retention
                if gone:
                    expired.append((topic, partition))
            records: Records = [(rec.offset_key(group.group_id, t, p), None) for t, p in expired]
            drop = group.is_in(S.EMPTY) and not group.members and len(expired) == len(group.offsets)
            drop = drop and not group.pending_members and not unstable
            if drop:
                records.append((rec.group_key(group.group_id), None))
            if not records or state.append(group.group_id, records, now_ms):
                continue
            for tp in expired:
                group.offsets.pop(tp, None)
            total += len(expired)
            if expired:
                log.info("expired offsets group=%s count=%d", group.group_id, len(expired))
            if drop:
                log.info("removed empty group=%s", group.group_id)
                self.drop_group(group, now_ms)
        return total
