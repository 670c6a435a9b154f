"""Sans-io decisions of a follower about its own log (Kafka's AbstractFetcherThread rules).

* ``epoch_truncation``: after OffsetForLeaderEpoch, where to truncate a divergent tail (KIP-101 /
  KIP-279), and whether another round is needed.
* ``out_of_range``: the leader answered OFFSET_OUT_OF_RANGE; given the leader's earliest and
  latest offsets, truncate to the leader's end (an unclean election left this replica longer),
  restart the log empty at the leader's log start offset (it moved past this replica's end:
  retention or DeleteRecords), or just fetch again.
* ``restart_for_first_batch``: a log restarted at the leader's log start offset that falls inside
  a batch is restarted at that batch's base offset, so the whole batch can be appended.
* ``follower_log_start``: how far the leader's log start offset (in every Fetch response) moves
  this replica's own log start offset.

The server side (kafkapy.server.replication.replica_fetcher) asks the leader and applies these to
the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

UNDEFINED = -1


@dataclass(frozen=True, slots=True)
class Truncation:
    offset: int  # truncate the log to this offset (no-op at or beyond the log end offset)
    done: bool  # False: ask the leader again with this replica's (now older) latest epoch


def epoch_truncation(
    leader_epoch: int,
    leader_end: int,
    own_epoch: int,
    own_end: int,
    log_end: int,
    high_watermark: int,
) -> Truncation:
    """The leader said its largest epoch <= the one asked for is ``leader_epoch`` and ends at
    ``leader_end``; ``own_epoch``/``own_end`` is this replica's answer for ``leader_epoch``
    (its largest epoch <= it and where that ends; -1/-1 if it knows none)."""
    if leader_end == UNDEFINED:
        # the leader knows nothing that old: fall back to the high watermark
        return Truncation(min(high_watermark, log_end), True)
    if leader_epoch == UNDEFINED:
        return Truncation(min(leader_end, log_end), True)
    if own_epoch == UNDEFINED or own_end == UNDEFINED:
        # this replica has no epoch <= the leader's: safe to go to the leader's end offset
        return Truncation(min(leader_end, log_end), True)
    if own_epoch != leader_epoch:
        # this replica does not know the leader's epoch: cut back to the end of its largest
        # smaller epoch and ask again
        return Truncation(min(own_end, log_end), False)
    return Truncation(min(own_end, leader_end, log_end), True)


class OutOfRange(Enum):
    TRUNCATE = "truncate"  # truncate to the leader's log end offset
    RESET = "reset"  # truncate fully and start at the leader's log start offset
    RETRY = "retry"  # keep the log, fetch again from the log end offset


@dataclass(frozen=True, slots=True)
class OutOfRangeAction:
    kind: OutOfRange
    offset: int  # the next fetch offset


def out_of_range(replica_end: int, leader_end: int, leader_start: int | None) -> OutOfRangeAction:
    """Kafka's fetchOffsetAndTruncate. ``leader_start`` may be None when it was not asked for
    (it is only needed when the leader's end is not below this replica's)."""
    if leader_end < replica_end:
        return OutOfRangeAction(OutOfRange.TRUNCATE, leader_end)
    if leader_start is not None and leader_start > replica_end:
        return OutOfRangeAction(OutOfRange.RESET, leader_start)
    start = replica_end if leader_start is None else max(leader_start, replica_end)
    return OutOfRangeAction(OutOfRange.RETRY, start)


def restart_for_first_batch(
    log_start: int, log_end: int, batch_base: int, batch_last: int
) -> int | None:
    """Base offset to restart an empty log at, when the first fetched batch straddles its end
    (the leader's log start lies inside the batch); None when the batch can be appended."""
    if log_end == log_start and batch_base < log_end <= batch_last:
        return batch_base
    return None


def follower_log_start(leader_start: int, own_start: int, high_watermark: int) -> int | None:
    """The new log start offset of a follower, or None to keep its own. It follows the leader's
    but never passes the follower's high watermark (Kafka refuses that)."""
    new = min(leader_start, high_watermark)
    return new if new > own_start else None
