"""The delivery state of one share-partition (sans-io): Kafka's SharePartition.

A share group consumes a topic-partition between two offsets: the share-partition start offset
(SPSO, below it every record is acknowledged or archived) and end offset (SPEO, the next offset
never acquired yet). Between them every offset has a state: AVAILABLE, ACQUIRED (by one member,
with an acquisition lock that ends at ``deadline``), ACKNOWLEDGED or ARCHIVED, and a delivery
count. At most ``share.partition.max.record.locks`` offsets are in flight (SPEO - SPSO); new
records are acquired only below that bound.

Acquiring delivers AVAILABLE in-flight records again and new records from the log (each
acquisition counts as a delivery; control batches are archived without delivery). A lock that
expires, or a RELEASE, makes the record AVAILABLE again, unless it reached
``share.delivery.count.limit`` deliveries: then it is ARCHIVED (a poison record is not delivered
forever). ACCEPT acknowledges, REJECT and GAP archive, RENEW extends the lock. Only the member
holding a record's lock may acknowledge it (else INVALID_RECORD_STATE); offsets below the start
offset are done already and are ignored, as Kafka does. The start offset moves past every
leading acknowledged or archived offset.

``snapshot()``/``restore()`` give the state the share coordinator keeps durable: acquired
records are kept as AVAILABLE (a restart ends every lock) with their delivery counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

# record states, as Kafka's RecordState ids
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4
# acknowledge types (ShareFetch/ShareAcknowledge AcknowledgeTypes)
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
DONE = (ACKNOWLEDGED, ARCHIVED)


@dataclass(slots=True)
class InFlight:
    state: int
    delivery_count: int = 0
    member_id: str | None = None
    deadline: int = 0


@dataclass(frozen=True, slots=True)
class Batch:
    """A batch of the log read: its offsets and whether it is a control batch."""

    base_offset: int
    last_offset: int
    control: bool = False


@dataclass(frozen=True, slots=True)
class Limits:
    lock_duration_ms: int
    delivery_count_limit: int
    max_record_locks: int


Acquired = tuple[int, int, int]  # first offset, last offset, delivery count


class SharePartition:
    def __init__(self, start_offset: int) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.records: dict[int, InFlight] = {}
        self.state_epoch = 0

    # -- time ----------------------------------------------------------------------------------
    def expire_locks(self, now_ms: int, limits: Limits) -> bool:
        """End every lock due by ``now_ms``; True if some record changed."""
        changed = False
        for rec in self.records.values():
            if rec.state == ACQUIRED and rec.deadline <= now_ms:
                self._release(rec, limits)
                changed = True
        if changed:
            self._advance()
        return changed

    def next_deadline(self) -> int | None:
        deadlines = [r.deadline for r in self.records.values() if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    # -- acquiring -----------------------------------------------------------------------------
    def move_start(self, log_start_offset: int) -> None:
        """Records deleted from the log (retention) are gone from the share-partition too."""
        if log_start_offset > self.start_offset:
            for off in range(self.start_offset, min(log_start_offset, self.end_offset)):
                self.records.pop(off, None)
            self.start_offset = log_start_offset
            self.end_offset = max(self.end_offset, log_start_offset)
            self._advance()

    def next_fetch_offset(self) -> int:
        available = [o for o, r in self.records.items() if r.state == AVAILABLE]
        return min(available) if available else self.end_offset

    def has_available(self, high_watermark: int, limits: Limits) -> bool:
        if any(r.state == AVAILABLE for r in self.records.values()):
            return True
        room = self.end_offset - self.start_offset < limits.max_record_locks
        return room and self.end_offset < high_watermark

    def acquire(
        self,
        member_id: str,
        batches: Iterable[Batch],
        max_records: int,
        now_ms: int,
        limits: Limits,
        *,
        record_limit: bool = False,
    ) -> list[Acquired]:
        """Acquire for ``member_id`` the available records of ``batches`` (consecutive batches of
        the log read from ``next_fetch_offset()``), up to ``max_records`` (whole batches unless
        ``record_limit``); the acquired ranges with their delivery counts."""
        got: list[int] = []
        deadline = now_ms + limits.lock_duration_ms
        for b in batches:
            if len(got) >= max_records:
                break
            for off in range(max(b.base_offset, self.start_offset), b.last_offset + 1):
                if record_limit and len(got) >= max_records:
                    break
                if off < self.end_offset:
                    rec = self.records.get(off)
                    if rec is None or rec.state != AVAILABLE or b.control:
                        continue
                else:
                    if self.end_offset - self.start_offset >= limits.max_record_locks:
                        break
                    for gap in range(self.end_offset, off):  # offsets the log does not have
                        self.records[gap] = InFlight(ARCHIVED)
                    self.end_offset = off + 1
                    if b.control:
                        self.records[off] = InFlight(ARCHIVED)
                        continue
                    rec = self.records[off] = InFlight(AVAILABLE)
                rec.state = ACQUIRED
                rec.delivery_count += 1
                rec.member_id = member_id
                rec.deadline = deadline
                got.append(off)
        self._advance()
        return self._ranges(got)

    def _ranges(self, offsets: list[int]) -> list[Acquired]:
        out: list[Acquired] = []
        for off in offsets:
            count = self.records[off].delivery_count
            if out and out[-1][1] == off - 1 and out[-1][2] == count:
                out[-1] = (out[-1][0], off, count)
            else:
                out.append((off, off, count))
        return out

    # -- acknowledging -------------------------------------------------------------------------
    def acknowledge(
        self,
        member_id: str,
        batches: Iterable[tuple[int, int, tuple[int, ...]]],
        now_ms: int,
        limits: Limits,
    ) -> tuple[int, str | None]:
        """Apply (first offset, last offset, types) acknowledgements of ``member_id``, all or
        none: (error, message)."""
        todo: list[tuple[int, int]] = []
        for first, last, types in batches:
            if last < first or (len(types) != 1 and len(types) != last - first + 1):
                return E.invalid_request, "Invalid acknowledgement batch."
            for i, off in enumerate(range(first, last + 1)):
                kind = types[0] if len(types) == 1 else types[i]
                if kind not in (GAP, ACCEPT, RELEASE, REJECT, RENEW):
                    return E.invalid_request, f"Invalid acknowledge type: {kind}"
                if off < self.start_offset:
                    continue  # already acknowledged or archived: Kafka answers NONE for it
                rec = self.records.get(off)
                if rec is None or rec.state != ACQUIRED or rec.member_id != member_id:
                    return (
                        E.invalid_record_state,
                        f"The record with offset {off} is not acquired by member {member_id}.",
                    )
                todo.append((off, kind))
        for off, kind in todo:
            rec = self.records[off]
            if kind == ACCEPT:
                rec.state, rec.member_id = ACKNOWLEDGED, None
            elif kind in (REJECT, GAP):
                rec.state, rec.member_id = ARCHIVED, None
            elif kind == RELEASE:
                self._release(rec, limits)
            else:  # RENEW
                rec.deadline = now_ms + limits.lock_duration_ms
        self._advance()
        return E.none, None

    def release_member(self, member_id: str, limits: Limits) -> bool:
        """The member's share session closed or it left: its records are released."""
        changed = False
        for rec in self.records.values():
            if rec.state == ACQUIRED and rec.member_id == member_id:
                self._release(rec, limits)
                changed = True
        if changed:
            self._advance()
        return changed

    def _release(self, rec: InFlight, limits: Limits) -> None:
        rec.member_id = None
        rec.state = ARCHIVED if rec.delivery_count >= limits.delivery_count_limit else AVAILABLE

    def _advance(self) -> None:
        while self.start_offset < self.end_offset:
            rec = self.records.get(self.start_offset)
            if rec is not None and rec.state not in DONE:
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    # -- durability ----------------------------------------------------------------------------
    def snapshot(self) -> tuple[int, list[tuple[int, int, int, int]]]:
        """(start offset, [(first, last, state, delivery count)]) of the in-flight records, an
        acquired record counted as AVAILABLE."""
        runs: list[tuple[int, int, int, int]] = []
        for off in range(self.start_offset, self.end_offset):
            rec = self.records.get(off)
            if rec is None:
                continue
            state = AVAILABLE if rec.state == ACQUIRED else rec.state
            if runs and runs[-1][1] == off - 1 and runs[-1][2:] == (state, rec.delivery_count):
                runs[-1] = (runs[-1][0], off, state, rec.delivery_count)
            else:
                runs.append((off, off, state, rec.delivery_count))
        return self.start_offset, runs

    @classmethod
    def restore(
        cls, start_offset: int, runs: Iterable[tuple[int, int, int, int]]
    ) -> SharePartition:
        sp = cls(start_offset)
        for first, last, state, count in runs:
            for off in range(max(first, start_offset), last + 1):
                sp.records[off] = InFlight(state, count)
                sp.end_offset = max(sp.end_offset, off + 1)
        for off in range(start_offset, sp.end_offset):
            sp.records.setdefault(off, InFlight(ARCHIVED))
        sp._advance()
        return sp

    def lag(self, high_watermark: int) -> int:
        """Records not yet acknowledged or archived (Kafka's share-partition lag)."""
        done = sum(1 for r in self.records.values() if r.state in DONE)
        return max(high_watermark - self.start_offset - done, 0)
