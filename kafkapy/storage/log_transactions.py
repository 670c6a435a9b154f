"""The transactional side of a partition log (mixed into PartitionLog): markers, the last
stable offset, the aborted-transaction indexes, read_committed reads and producer snapshots.

- *Markers*: ``append_end_txn_marker`` appends a commit/abort control batch as the leader (the
  coordinator's WriteTxnMarkers), after checking its producer epoch and coordinator epoch.
  Every appended control batch — leader, follower or recovery — closes the producer's open
  transaction; an aborted one is recorded in the ``.txnindex`` of the segment the marker went
  to, with the LSO of that moment (Kafka's UnifiedLog.append and LogSegment.updateTxnIndex).
- *Last stable offset*: the first unstable offset (earliest open transaction, or closed one
  whose marker is not yet below the high watermark) bounded by the high watermark, never below
  the log start offset. read_committed fetches and ListOffsets stop there.
- *Aborted transactions of a fetch*: the index entries overlapping [fetch offset, end of the
  data returned), searched from the fetch offset's segment onward (UnifiedLog
  .collectAbortedTransactions).
- *Producer snapshots* (storage/producer_snapshot.py): written when a segment rolls (named by
  the new segment's base offset) and when the log closes (at the log end); opening a log loads
  the latest snapshot at or below where replay must start and replays the batches after it.
  Segments recovered after a crash get their ``.txnindex`` rebuilt by that replay, so the
  replay starts at or before the first of them. Snapshots above the log end (after truncation)
  and strays without a segment are removed (Kafka's removeStraySnapshots); a segment's
  snapshot goes with it when retention deletes it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kafkapy.protocol.control_batch import EndTxnMarker, encode_end_txn_marker, marker_of_batch
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    CorruptRecordError,
    RecordBatchError,
    assign_offsets_in_place,
    parse_batch_header,
)
from kafkapy.storage.io_guard import storage_io
from kafkapy.storage.producer_snapshot import (
    CorruptSnapshotError,
    list_snapshots,
    read_snapshot,
    snapshot_name,
    write_snapshot,
)
from kafkapy.storage.txn_index import AbortedTxn

if TYPE_CHECKING:
    from kafkapy.storage.log import AppendResult, PartitionLog
    from kafkapy.storage.log_read import FetchData
    from kafkapy.storage.segment import LogSegment

log = logging.getLogger("kafkapy.storage.txn")


def _marker(batch) -> EndTxnMarker | None:
    """The marker of a control batch; an unreadable one ends nothing (logged)."""
    try:
        return marker_of_batch(batch)
    except RecordBatchError as e:
        log.warning("ignoring unreadable control batch error=%s", e)
        return None


class TransactionalLog:
    """Methods PartitionLog gets for transactions; see the module docstring."""

    # ---- markers -------------------------------------------------------------------------

    @storage_io("appending a transaction marker to")
    def append_end_txn_marker(
        self: PartitionLog,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        committed: bool,
        *,
        leader_epoch: int,
        now_ms: int,
        transaction_version: int = 0,
    ) -> AppendResult:
        """Append a commit/abort marker as the leader. InvalidProducerEpochError for an older
        producer epoch (under transactions version 2, one not above the open transaction's),
        TransactionCoordinatorFencedError for an older coordinator epoch."""
        self.producer_state.check_marker(
            producer_id, producer_epoch, coordinator_epoch, transaction_version
        )
        buf = encode_end_txn_marker(
            producer_id, producer_epoch, coordinator_epoch, committed, now_ms
        )
        headers = [parse_batch_header(buf)]
        append_time = now_ms if self.config.log_append_time else None
        first = self.log_end_offset
        next_offset = assign_offsets_in_place(buf, headers, first, leader_epoch, append_time)
        return self._append(buf, headers, first, next_offset, leader_epoch, append_time, now_ms)

    def _apply_transactional_batch(
        self: PartitionLog, seg: LogSegment, h: BatchHeader, offset: int, buf, pos: int
    ) -> None:
        """A transactional batch was appended at ``offset`` (at ``pos`` of ``buf``) in
        ``seg``: a data batch may open its producer's transaction; a control batch closes it,
        recording an abort in the segment's transaction index."""
        self.has_transactions = True
        state = self.producer_state
        if not h.is_control:
            state.update(h, offset)
            return
        self._end_transaction(seg, h, offset, memoryview(buf)[pos : pos + h.size], index=True)

    def _end_transaction(
        self: PartitionLog, seg: LogSegment, h: BatchHeader, offset: int, batch, *, index: bool
    ) -> None:
        """Apply the control batch ``batch`` at ``offset``: close its producer's transaction,
        recording an abort in ``seg``'s transaction index when ``index``."""
        state = self.producer_state
        completed = state.update_marker(h, offset, _marker(batch))
        if completed is None:
            return
        if completed.aborted and index:
            seg.txn_index.append(
                AbortedTxn(
                    completed.producer_id,
                    completed.first_offset,
                    completed.last_offset,
                    state.last_stable_offset_of(completed),
                )
            )
        state.complete_txn(completed)

    # ---- stability -----------------------------------------------------------------------

    @property
    def last_stable_offset(self: PartitionLog) -> int:
        hw = self.high_watermark
        if not self.has_transactions:
            return hw
        first = self.producer_state.first_unstable_offset(hw)
        if first is None:
            return hw
        return min(max(first, self.log_start_offset), hw)

    # ---- read_committed ------------------------------------------------------------------

    def collect_aborted_txns(
        self: PartitionLog, fetch_offset: int, upper_bound: int
    ) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound)."""
        out: list[AbortedTxn] = []
        for seg in self.segments[self._segment_at(fetch_offset) :]:
            found, complete = seg.txn_index.collect(fetch_offset, upper_bound)
            out += found
            if complete:
                break
        return out

    def read_committed(
        self: PartitionLog, offset: int, max_bytes: int, *, min_one_batch: bool = True
    ) -> tuple[FetchData, list[AbortedTxn]]:
        """``read`` bounded by the last stable offset, with the aborted transactions that
        overlap the batches returned."""
        data = self.read(
            offset, max_bytes, max_offset=self.last_stable_offset, min_one_batch=min_one_batch
        )
        if not data.regions:
            return data, []
        region = data.regions[-1]
        upper = self._offset_after(offset, region.fileno, region.position + region.length)
        return data, self.collect_aborted_txns(offset, upper)

    def _offset_after(self: PartitionLog, offset: int, fileno: int, end_position: int) -> int:
        """The first offset after the batches ending at ``end_position`` of the segment read
        from (the one holding ``offset`` or a later one)."""
        first = self._segment_at(offset)
        for i, seg in enumerate(self.segments[first:], first):
            if seg.fd != fileno:
                continue
            if end_position + BATCH_HEADER_SIZE <= seg.size:
                head = os.pread(seg.fd, BATCH_HEADER_SIZE, end_position)
                return parse_batch_header(head).base_offset
            if i + 1 < len(self.segments):
                return self.segments[i + 1].base_offset
            break
        return self.log_end_offset

    # ---- producer snapshots --------------------------------------------------------------

    def take_producer_snapshot(self: PartitionLog, *, sync: bool) -> Path | None:
        """Snapshot the producer state as of the log end offset (unless one exists there)."""
        offset = self.log_end_offset
        if offset <= 0:
            return None
        path = self.directory / snapshot_name(offset)
        if path.exists():
            return None
        return write_snapshot(
            self.directory, offset, list(self.producer_state.producers.values()), sync=sync
        )

    def _snapshot_for_deleted_segment(self: PartitionLog, seg: LogSegment) -> list[Path]:
        """Rename the snapshot named by a deleted segment's base offset; returns it."""
        path = self.directory / snapshot_name(seg.base_offset)
        target = path.with_name(path.name + ".deleted")
        try:
            os.replace(path, target)
        except FileNotFoundError:
            return []
        return [target]

    def _remove_stray_snapshots(self: PartitionLog) -> None:
        """Delete snapshots above the log end, and those matching no segment except the largest
        one when it lies beyond the last segment's base (the one a clean shutdown wrote)."""
        bases = set(self._bases)
        last_base = self._bases[-1] if self._bases else 0
        strays = []
        for snap in list_snapshots(self.directory):
            if snap.offset > self.log_end_offset:
                snap.path.unlink(missing_ok=True)
            elif snap.offset not in bases:
                strays.append(snap)
        keep = strays[-1] if strays and strays[-1].offset > last_base else None
        for snap in strays:
            if snap is not keep:
                snap.path.unlink(missing_ok=True)

    def _load_producer_state(self: PartitionLog, rebuild: Iterable[LogSegment] = ()) -> None:
        """Rebuild the producer state up to the log end: from the latest usable snapshot at or
        below the first segment in ``rebuild`` (whose transaction indexes are rebuilt on the
        way), else below the log end; from the log start when there is none."""
        rebuilt = list(rebuild)
        for seg in rebuilt:
            seg.txn_index.reset()
        self._remove_stray_snapshots()
        target = min((s.base_offset for s in rebuilt), default=self.log_end_offset)
        state = self.producer_state
        state.clear()
        start = self.log_start_offset
        for snap in reversed(list_snapshots(self.directory)):
            if snap.offset > target or snap.offset < self.log_start_offset:
                continue
            try:
                state.load_entries(read_snapshot(snap.path))
            except (CorruptSnapshotError, OSError) as e:
                log.warning("dropping producer snapshot path=%s error=%s", snap.path, e)
                snap.path.unlink(missing_ok=True)
                continue
            start = snap.offset
            break
        if start < self.log_end_offset:
            self._replay_producer_state(start, {id(s) for s in rebuilt})
        state.on_log_start_offset(self.log_start_offset)
        self.has_transactions = bool(state.ongoing or state.unreplicated)

    def _replay_producer_state(self: PartitionLog, start: int, rebuild: set[int]) -> None:
        """Apply every producer batch from ``start`` to the log end to the producer state."""
        state = self.producer_state
        for seg in self.segments[self._segment_at(start) :]:
            # a segment replayed from its start needs no index (nor reads it: storage/segment.py)
            first_pos = seg.offset_index.lookup(start)[1] if start > seg.base_offset else 0
            try:
                for pos, h in seg.iter_headers(first_pos):
                    if h.last_offset < start or h.producer_id < 0:
                        continue
                    if h.is_control:
                        batch = seg.read_batch(pos, h.size)
                        self._end_transaction(
                            seg, h, h.base_offset, batch, index=id(seg) in rebuild
                        )
                    else:
                        state.update(h, h.base_offset)
            except CorruptRecordError as e:  # recovery truncated torn tails already
                log.warning("producer state replay stopped segment=%s error=%s", seg.log_path, e)
                return

    def _delete_all_snapshots(self: PartitionLog) -> None:
        for snap in list_snapshots(self.directory):
            snap.path.unlink(missing_ok=True)
