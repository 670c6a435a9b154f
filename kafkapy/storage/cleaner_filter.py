"""What the log cleaner makes of one batch (Kafka's Cleaner.cleanInto filter), sans-io.

A batch comes out unchanged, rewritten with fewer records (offsets, producer fields and last
offset delta kept; compressed again with its codec), as an empty shell (a producer's last
batch, kept for its epoch and sequence), or not at all:

- records of aborted transactions go, whatever their keys (storage/cleaner_txn.py);
- a record stays if it is past the offset map's end or the latest for its key; keyless records
  go; a tombstone stays until its batch's delete horizon (stamped now + delete.retention.ms the
  first time, KIP-534) has passed;
- a marker stays while its transaction has data; then it is stamped with a delete horizon and
  goes once that has passed (kept empty when it is its producer's last entry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.protocol.record_batch import (
    BatchHeader,
    Record,
    decode_records,
    encode_batch,
    encode_empty_batch,
)

if TYPE_CHECKING:
    from kafkapy.storage.cleaner import CleanTask, OffsetMap


def _is_last_of_producer(task: CleanTask, h: BatchHeader) -> bool:
    """Kafka's isBatchLastRecordOfProducer: the batch holding an active producer's last data
    offset, or, for a producer whose last entry is a marker, its marker of that epoch."""
    if h.producer_id < 0:
        return False
    last = task.active_producers.get(h.producer_id)
    if last is None:
        return False
    last_data, epoch = last
    if last_data >= 0:
        return h.last_offset == last_data
    return h.is_control and h.producer_epoch == epoch


def _note_horizon(task: CleanTask, horizon: int) -> None:
    """Remember the earliest delete horizon written, so the log is cleaned again then."""
    cur = task.min_delete_horizon
    task.min_delete_horizon = horizon if cur is None else min(cur, horizon)


def _rewrite(h: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    return encode_batch(
        records,
        base_offset=h.base_offset,
        codec=h.codec,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        timestamp_type=h.timestamp_type,
        is_transactional=h.is_transactional,
        is_control=h.is_control,
        partition_leader_epoch=h.partition_leader_epoch,
        keep_offsets=True,
        last_offset_delta=h.last_offset_delta,
        delete_horizon_ms=horizon,
    )


def filter_batch(task: CleanTask, h: BatchHeader, data: bytes, omap: OffsetMap) -> bytes | None:
    """The batch as it is kept (unchanged bytes, rewritten, empty) or None if dropped."""
    stats = task.stats
    txns = task.txns
    assert stats is not None and txns is not None
    now = task.now_ms
    if h.is_control:
        can_discard = txns.on_control_batch(h, data)
        horizon = h.delete_horizon_ms
        discard = can_discard and horizon is not None and horizon <= now
    else:
        can_discard = discard = txns.on_batch(h)
    if h.records_count == 0 or discard:
        return encode_empty_batch(h) if _is_last_of_producer(task, h) else None
    if h.is_control:
        if not can_discard or h.delete_horizon_ms is not None:
            return data
        # a marker whose transaction has no data left: give it a delete horizon
        horizon = now + task.config.delete_retention_ms
        _note_horizon(task, horizon)
        return _rewrite(h, decode_records(data), horizon)
    horizon = h.delete_horizon_ms
    retain_deletes = horizon is None or now < horizon
    records = decode_records(data)
    stats.records_read += len(records)
    kept = []
    tombstones = False
    for r in records:
        if r.offset > omap.latest_offset:
            keep = True
        elif r.key is None:
            keep = False
        else:
            keep = r.offset >= omap.get(r.key) and (r.value is not None or retain_deletes)
            if not keep and r.value is None and r.offset >= omap.get(r.key):
                stats.tombstones_removed += 1
        if keep:
            kept.append(r)
            tombstones = tombstones or r.value is None
    stats.records_kept += len(kept)
    if tombstones and horizon is None:
        horizon = now + task.config.delete_retention_ms
    if tombstones and horizon is not None:
        _note_horizon(task, horizon)
    if len(kept) == len(records) and (not tombstones or h.delete_horizon_ms is not None):
        return data
    if not kept:
        return encode_empty_batch(h) if _is_last_of_producer(task, h) else None
    return _rewrite(h, kept, horizon if tombstones else None)
