"""The share-partition manager (Kafka's SharePartitionManager): the share-partitions this broker
leads, the share sessions, and the reads of the logs behind them.

Each (share group, topic id, partition) fetched here gets a ``SharePartition`` on first use: its
durable state when ``__share_group_state`` has one, else a start offset chosen by the group's
``share.auto.offset.reset`` (``earliest``: the log start offset, ``latest``: the high watermark,
``by_duration:<ISO-8601 duration>``: the first record at or after now minus the duration). Reads
go up to the high watermark (``share.isolation.level=read_committed``: the last stable offset, and
records of aborted transactions are archived instead of delivered). Every change that matters
(acquisitions, acknowledgements, releases, expired locks) is written to the share coordinator's
log before the answer (``state_log``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.coordinator.share.partition import Batch, Limits, SharePartition
from kafkapy.coordinator.share.sessions import ShareSessionCache
from kafkapy.protocol.batch_header import iter_batches

from .state_log import ShareStateLog, StateKey, encode_value

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.share")

READ_MAX_BYTES = 1 << 20
_DURATION = re.compile(
    r"^by_duration:P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)


def duration_ms(value: str) -> int | None:
    m = _DURATION.match(value)
    if m is None:
        return None
    d, h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return int(((d * 24 + h) * 60 + mi) * 60_000 + s * 1000)


@dataclass(slots=True)
class FetchedPartition:
    records: bytes
    acquired: list[tuple[int, int, int]]


class SharePartitionManager:
    def __init__(self, broker: Broker, share_groups: Any) -> None:
        self.broker = broker
        self.groups = share_groups  # kafkapy.coordinator.share.groups.ShareGroups
        raw = broker.config.raw
        self.sessions = ShareSessionCache(int(raw.get("group.share.max.share.sessions", 2000)))
        self.partitions: dict[StateKey, SharePartition] = {}
        self.state_log = ShareStateLog(broker)
        self._stored: dict[StateKey, dict[str, Any]] | None = None
        self._load_lock = trio.Lock()
        share_groups.on_delete.append(self.drop_group)
        share_groups.on_member_removed.append(self.release_member)

    # -- settings ------------------------------------------------------------------------------
    def limits(self, group_id: str) -> Limits:
        s = self.groups.settings(group_id)
        return Limits(s.record_lock_duration_ms, s.delivery_count_limit,
                      s.partition_max_record_locks)

    def lock_duration_ms(self, group_id: str) -> int:
        return int(self.groups.settings(group_id).record_lock_duration_ms)

    def notify(self, group_id: str) -> None:
        """Records of the group's share-partitions may have become available: wake its waiting
        ShareFetches (they watch ``wake_key(group_id)`` beside their partitions)."""
        self.broker.appended.notify(wake_key(group_id))

    # -- loading -------------------------------------------------------------------------------
    async def ensure_loaded(self) -> None:
        if self._stored is not None:
            return
        async with self._load_lock:
            if self._stored is None:
                self._stored = await trio.to_thread.run_sync(self.state_log.read_all)
                if self._stored:
                    log.info("loaded share-partition states=%d", len(self._stored))

    def partition(self, group_id: str, info: Any, p: int, now_ms: int) -> SharePartition | None:
        """The share-partition, created (and its initial state written) on first use; None if
        this broker does not have the partition's log."""
        key = (group_id, info.topic_id, p)
        sp = self.partitions.get(key)
        plog = self.broker.topics.log(info.name, p)
        if plog is None:
            return None
        if sp is None:
            stored = (self._stored or {}).pop(key, None)
            if stored is not None:
                sp = SharePartition.restore(
                    int(stored["start_offset"]), [tuple(r) for r in stored["runs"]]
                )
                sp.state_epoch = int(stored.get("state_epoch", 0))
            else:
                sp = SharePartition(self._initial_offset(group_id, plog, now_ms))
            self.partitions[key] = sp
            self.persist(key, sp, now_ms)
        sp.move_start(plog.log_start_offset)
        return sp

    def _initial_offset(self, group_id: str, plog: Any, now_ms: int) -> int:
        reset = self.groups.settings(group_id).auto_offset_reset
        if reset == "earliest":
            return int(plog.log_start_offset)
        back = duration_ms(reset)
        if back is not None:
            found = plog.offset_for_timestamp(now_ms - back)
            return int(found[0]) if found is not None else int(plog.high_watermark)
        return int(plog.high_watermark)

    def persist(self, key: StateKey, sp: SharePartition, now_ms: int) -> bool:
        start, runs = sp.snapshot()
        return self.state_log.write(key, encode_value(sp.state_epoch, start, runs), now_ms)

    # -- reading -------------------------------------------------------------------------------
    def read(
        self, group_id: str, info: Any, p: int, sp: SharePartition, member_id: str,
        max_records: int, max_bytes: int, now_ms: int, *, record_limit: bool = False,
    ) -> FetchedPartition:
        """Acquire for the member what is available and return the batches holding it."""
        plog = self.broker.topics.log(info.name, p)
        limits = self.limits(group_id)
        sp.expire_locks(now_ms, limits)
        if plog is None:
            return FetchedPartition(b"", [])
        committed = self.groups.settings(group_id).isolation_level == "read_committed"
        bound = plog.last_stable_offset if committed else plog.high_watermark
        if not sp.has_available(bound, limits):
            return FetchedPartition(b"", [])
        offset = sp.next_fetch_offset()
        if offset >= bound:
            return FetchedPartition(b"", [])
        data = plog.read_bytes(offset, max(min(max_bytes, READ_MAX_BYTES), 1), max_offset=bound)
        aborted = self._aborted(plog, offset, bound) if committed else []
        batches: list[Batch] = []
        spans: list[tuple[int, int, int, int]] = []  # (base, last, pos, size)
        for pos, h in iter_batches(data):
            skip = h.is_control or (
                h.is_transactional and _in_aborted(aborted, h.producer_id, h.base_offset)
            )
            batches.append(Batch(h.base_offset, h.last_offset, skip))
            spans.append((h.base_offset, h.last_offset, pos, h.size))
        acquired = sp.acquire(member_id, batches, max_records, now_ms, limits,
                              record_limit=record_limit)
        if not acquired:
            return FetchedPartition(b"", [])
        parts = [
            data[pos : pos + size]
            for base, last, pos, size in spans
            if any(first <= last and base <= end for first, end, _ in acquired)
        ]
        return FetchedPartition(b"".join(parts), acquired)

    @staticmethod
    def _aborted(plog: Any, start: int, end: int) -> list[tuple[int, int, int]]:
        """(producer id, first offset, last offset) of the aborted transactions overlapping the
        read."""
        return [
            (t.producer_id, t.first_offset, t.last_offset)
            for t in plog.collect_aborted_txns(start, end)
        ]

    # -- the admin APIs (Describe/Alter/DeleteShareGroupOffsets) --------------------------------
    def group_states(self, group_id: str) -> dict[StateKey, SharePartition]:
        """Every share-partition of the group with a state (loaded ones restored first)."""
        for key in [k for k in (self._stored or {}) if k[0] == group_id]:
            stored = self._stored.pop(key)  # type: ignore[union-attr]
            sp = SharePartition.restore(
                int(stored["start_offset"]), [tuple(r) for r in stored["runs"]]
            )
            sp.state_epoch = int(stored.get("state_epoch", 0))
            self.partitions[key] = sp
        return {k: sp for k, sp in self.partitions.items() if k[0] == group_id}

    def reset_start(self, key: StateKey, start_offset: int, now_ms: int) -> bool:
        """AlterShareGroupOffsets: the share-partition starts again at ``start_offset`` with
        nothing in flight (a new state epoch)."""
        old = self.group_states(key[0]).get(key)
        sp = SharePartition(start_offset)
        sp.state_epoch = (old.state_epoch + 1) if old is not None else 0
        self.partitions[key] = sp
        return self.persist(key, sp, now_ms)

    def delete_state(self, key: StateKey, now_ms: int) -> bool:
        """DeleteShareGroupOffsets: forget the share-partition (a tombstone)."""
        self.group_states(key[0])
        self.partitions.pop(key, None)
        return self.state_log.write(key, None, now_ms)

    # -- releasing -----------------------------------------------------------------------------
    def release_member(self, group_id: str, member_id: str) -> None:
        """A member left (or its share session closed): release what it holds."""
        limits = self.limits(group_id)
        released = False
        for key, sp in self.partitions.items():
            if key[0] == group_id and sp.release_member(member_id, limits):
                self.persist(key, sp, _now())
                released = True
        if released:
            self.notify(group_id)

    def drop_group(self, group_id: str) -> None:
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]
            self.state_log.write(key, None, _now())
        for key in [k for k in (self._stored or {}) if k[0] == group_id]:
            del self._stored[key]  # type: ignore[union-attr]
            self.state_log.write(key, None, _now())

    def next_deadline(self, keys: list[StateKey]) -> int | None:
        deadlines = [
            d for k in keys if (sp := self.partitions.get(k)) is not None
            and (d := sp.next_deadline()) is not None
        ]
        return min(deadlines) if deadlines else None


def wake_key(group_id: str) -> tuple[str, str]:
    return ("__share_group__", group_id)


def _in_aborted(aborted: list[tuple[int, int, int]], producer_id: int, offset: int) -> bool:
    return any(pid == producer_id and first <= offset <= last for pid, first, last in aborted)


def _now() -> int:
    from kafkapy.clock import now_ms

    return now_ms()

