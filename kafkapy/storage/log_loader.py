"""Loading a partition log's segments from its directory, and recovery (Kafka's LogLoader).

``load_segments`` is what PartitionLog.open (storage/log.py) runs for a directory that exists:

1. Temporary files (``*.tmp``) are removed and what a crash interrupted is completed or rolled
   back (``finish_interrupted_operations``): ``.deleted`` and ``.cleaned`` files go, a
   ``.log.swap`` (a cleaned segment written completely) replaces the segments it covers.
2. Index files without their ``.log`` are removed.
3. Every segment is opened. With ``recover`` (an unclean shutdown) each segment holding offsets
   at or after the recovery point is recovered: every batch validated, a torn or corrupt tail
   truncated, the indexes rebuilt. The other segments are trusted, and their indexes are not
   read now (Kafka's LazyIndex, storage/segment.py): a segment is only checked for its index
   files (missing ones are rebuilt by recovering it) and its transaction index; the last one
   (the active segment) is loaded, its indexes checked against the log, and recovered when
   they or its last batches are corrupt. An older segment whose index is found corrupt on
   first use has it rebuilt then.
   A segment truncated by recovery ends the log: the segments after it are deleted, as Kafka
   drops everything after a corrupt batch.

``load_log`` then sets the log's offsets from the segments (log end: the end of the last one;
log start: the one checkpointed, within the segments), truncates its leader-epoch cache to them
and rebuilds its producer state (from a snapshot, replaying the batches after it; the ``.txnindex``
of each recovered segment is rebuilt on the way), as Kafka's LogLoader.load does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kafkapy.protocol.record_batch import CorruptRecordError, iter_batches
from kafkapy.storage.index import CorruptIndexError
from kafkapy.storage.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    SWAP_SUFFIX,
    LogSegment,
    segment_name,
)

if TYPE_CHECKING:
    from kafkapy.storage.log import PartitionLog

INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")


@dataclass
class LoadedSegments:
    segments: list[LogSegment] = field(default_factory=list)  # in offset order; may be empty
    recovered: list[LogSegment] = field(default_factory=list)  # their txn indexes need a replay


def segment_bases(directory: Path) -> list[int]:
    """Base offsets of the segments (``%020d.log`` files) in ``directory``, in order."""
    bases = []
    for p in directory.glob("*.log"):
        stem = p.stem
        if len(stem) == 20 and stem.isdigit():
            bases.append(int(stem))
    return sorted(bases)


def _scan_next_offset(data: bytes, base: int) -> int:
    """Offset after the last whole batch of ``data`` (``base`` if none)."""
    next_offset = base
    try:
        for _, h in iter_batches(data):
            next_offset = h.next_offset
    except CorruptRecordError:
        pass
    return next_offset


def finish_interrupted_operations(directory: Path) -> None:
    """Complete or roll back what a crash interrupted (Kafka's LogLoader rules):
    ``.deleted`` files are removed, ``.cleaned`` files (an unfinished cleaning) are dropped,
    a ``.log.swap`` (a cleaned segment written completely) replaces the segments whose
    offsets it covers and becomes a segment; its indexes are rebuilt (the ``.txnindex`` by
    the producer-state replay, as for any recovered segment)."""
    d = directory
    for stray in d.glob("*" + DELETED_SUFFIX):
        stray.unlink(missing_ok=True)
    for stray in d.glob("*" + CLEANED_SUFFIX):
        stray.unlink(missing_ok=True)
    for x in INDEX_SUFFIXES:
        for stray in d.glob(f"*{x}.swap"):
            stray.unlink(missing_ok=True)
    for swap in sorted(d.glob("*.log" + SWAP_SUFFIX)):
        stem = swap.name[:20]
        if not stem.isdigit():
            swap.unlink()
            continue
        base = int(stem)
        next_offset = _scan_next_offset(swap.read_bytes(), base)
        for other in segment_bases(d):
            if other == base or base <= other < next_offset:
                for suffix in (".log", *INDEX_SUFFIXES):
                    (d / segment_name(other, suffix)).unlink(missing_ok=True)
        for suffix in INDEX_SUFFIXES:
            (d / segment_name(base, suffix)).unlink(missing_ok=True)
        os.replace(swap, d / segment_name(base, ".log"))


def load_segments(
    directory: Path,
    open_segment: Callable[[int], LogSegment],
    *,
    recover: bool,
    recovery_point: int,
) -> LoadedSegments:
    """Open the segments of ``directory`` (``open_segment(base_offset)`` opens one), recovering
    those that need it; see the module docstring."""
    for stray in directory.glob("*.tmp"):
        stray.unlink()
    finish_interrupted_operations(directory)
    bases = segment_bases(directory)
    known = set(bases)
    for p in list(directory.glob("*.index")) + list(directory.glob("*.timeindex")):
        if p.stem.isdigit() and int(p.stem) not in known:
            p.unlink()  # orphan index without its log
    loaded = LoadedSegments()
    for i, base in enumerate(bases):
        seg = open_segment(base)
        loaded.segments.append(seg)
        last = i + 1 == len(bases)
        covers_unflushed = last or bases[i + 1] > recovery_point
        truncated = 0
        if recover and covers_unflushed:
            truncated, _ = seg.recover()
            loaded.recovered.append(seg)
        else:
            try:
                if last:
                    seg.load()  # the active segment: its next offset is the log end offset
                else:
                    seg.sanity_check()  # its indexes are read on first use
            except (CorruptIndexError, CorruptRecordError):
                truncated, _ = seg.recover()
                loaded.recovered.append(seg)
        if truncated and i + 1 < len(bases):
            for later in bases[i + 1 :]:  # Kafka drops everything after a corrupt batch
                open_segment(later).delete()
            break
    return loaded


def load_log(
    log: PartitionLog, *, recover: bool, recovery_point: int, log_start_offset: int
) -> None:
    """Load the segments of ``log``'s existing directory into it and set its offsets, epoch
    cache and producer state; see the module docstring."""
    loaded = load_segments(
        log.directory,
        lambda base: log._new_segment(base, create=False),
        recover=recover,
        recovery_point=recovery_point,
    )
    segments = loaded.segments
    if not segments:
        segments.append(log._new_segment(max(log_start_offset, 0), create=True))
    log.segments = segments
    log._bases = [s.base_offset for s in segments]
    log.log_end_offset = segments[-1].next_offset
    log.log_start_offset = min(max(log_start_offset, segments[0].base_offset), log.log_end_offset)
    log.high_watermark = log.log_end_offset
    log.epoch_cache.truncate_from_end(log.log_end_offset)
    log.epoch_cache.truncate_from_start(log.log_start_offset)
    log._load_producer_state(loaded.recovered)
    if recover:
        log.flush()
    log.recovery_point = log.log_end_offset
    log.take_producer_snapshot(sync=False)
