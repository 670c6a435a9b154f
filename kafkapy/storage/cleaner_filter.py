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

Records are looked at once, by the record scanner (protocol/record_scan.py: offset and
timestamp deltas, key, null value, where each record lies), not decoded into Record objects; a
rewritten batch copies the kept records' bytes (only their timestamp deltas are written again,
against the first kept record's timestamp, as Kafka's rebuilt batches have it). A batch that
gets its first delete horizon is encoded afresh (its timestamps become relative to the
horizon, KIP-534).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.protocol.record_batch import (
    DEFAULT_MAX_DECOMPRESSED,
    LOG_APPEND_TIME,
    BatchHeader,
    CorruptRecordError,
    Record,
    decode_records,
    encode_batch,
    encode_empty_batch,
    encode_varint,
    pack_batch,
    records_section,
)
from kafkapy.protocol.record_scan import ScannedRecord, scan_records

if TYPE_CHECKING:
    from kafkapy.storage.cleaner_pass import CleanTask, OffsetMap


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


def _kept_fields(h: BatchHeader) -> dict:
    """What a rewritten batch keeps of the original's header."""
    return dict(
        base_offset=h.base_offset,
        last_offset_delta=h.last_offset_delta,
        codec=h.codec,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        timestamp_type=h.timestamp_type,
        is_transactional=h.is_transactional,
        is_control=h.is_control,
        partition_leader_epoch=h.partition_leader_epoch,
    )


def _rewrite(h: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    return encode_batch(records, keep_offsets=True, delete_horizon_ms=horizon, **_kept_fields(h))


def scan_batch(h: BatchHeader, data: bytes) -> tuple[object, int, list[ScannedRecord]]:
    """(the records section, where it starts, its records' scans); ValueError if corrupt."""
    b, pos, end = records_section(data, 0, h, DEFAULT_MAX_DECOMPRESSED)
    return b, pos, scan_records(b, pos, end, h.records_count)


def _rewrite_raw(
    h: BatchHeader, b, kept: list[tuple[int, ScannedRecord]], keep_horizon: bool
) -> bytes:
    """The batch with only the ``kept`` records ((start, scan) each), their bytes copied (offset
    deltas kept). With ``keep_horizon`` the batch keeps its delete horizon (its base timestamp:
    the deltas stay); otherwise the base timestamp becomes the first kept record's, so only the
    timestamp deltas that change are written again."""
    base_ts = h.base_timestamp
    new_base = base_ts if keep_horizon else base_ts + kept[0][1][1]
    log_append = h.timestamp_type == LOG_APPEND_TIME
    max_ts = h.max_timestamp if log_append else max(base_ts + rec[1] for _s, rec in kept)
    parts = []
    for start, (_off, ts_delta, _key, _null, attr, body, end) in kept:
        delta = base_ts + ts_delta - new_base
        if delta == ts_delta:
            parts.append(bytes(b[start:end]))
        else:
            head = bytes((b[attr],)) + encode_varint(delta)
            rest = bytes(b[body:end])
            parts.append(encode_varint(len(head) + len(rest)) + head + rest)
    return pack_batch(
        b"".join(parts),
        len(kept),
        base_timestamp=new_base,
        max_timestamp=max_ts,
        delete_horizon=keep_horizon,
        **_kept_fields(h),
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
    try:
        b, start, scanned = scan_batch(h, data)
    except ValueError as e:
        raise CorruptRecordError(f"batch at offset {h.base_offset}: {e}") from None
    stats.records_read += len(scanned)
    base = h.base_offset
    latest = omap.latest_offset
    get = omap.entries.get
    slot_key = omap.slot_key
    kept: list[tuple[int, ScannedRecord]] = []
    tombstones = False
    for rec in scanned:
        offset = base + rec[0]
        key = rec[2]
        if offset > latest:
            keep = True
        elif key is None:
            keep = False
        else:
            newest = offset >= get(key if len(key) <= 16 else slot_key(key), -1)
            keep = newest and (not rec[3] or retain_deletes)
            if not keep and rec[3] and newest:
                stats.tombstones_removed += 1
        if keep:
            kept.append((start, rec))
            tombstones = tombstones or rec[3]
        start = rec[6]
    stats.records_kept += len(kept)
    if tombstones and horizon is None:
        horizon = now + task.config.delete_retention_ms
    if tombstones and horizon is not None:
        _note_horizon(task, horizon)
    if len(kept) == len(scanned) and (not tombstones or h.delete_horizon_ms is not None):
        return data
    if not kept:
        return encode_empty_batch(h) if _is_last_of_producer(task, h) else None
    if tombstones and h.delete_horizon_ms is None:  # the first horizon: encoded afresh
        offsets = {base + rec[0] for _s, rec in kept}
        return _rewrite(h, [r for r in decode_records(data) if r.offset in offsets], horizon)
    return _rewrite_raw(h, b, kept, keep_horizon=tombstones)
