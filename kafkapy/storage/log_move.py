"""Moving a partition's log between the broker's log directories (AlterReplicaLogDirs), the
storage half of Kafka's ReplicaAlterLogDirsThread and LogManager.replaceCurrentWithFutureLog.

Kafka copies into a "future" log (``<topic>-<partition>.<uuid>-future``) with a fetcher thread
while the current log keeps serving, then swaps them. kafkapy's move is simpler and has the same
guarantees: it runs on the broker's event loop, where every append happens, so nothing is
appended while the log is copied and no acknowledged record can be missed:

1. the partition directory is copied to ``<dest>/<topic>-<partition>.<uuid>-future`` (``.deleted``
   files left out) and every copied file and the directory are fsynced;
2. the current directory is renamed ``<topic>-<partition>.<uuid>-delete``;
3. the future directory is renamed ``<topic>-<partition>`` and the log reopened there; the same
   :class:`PartitionLog` object takes the reopened segments, so everything holding it (fetch
   sessions, coordinators) keeps working; its offsets and producer state stay as they were;
4. the old directory is removed.

A crash between 1 and 2 leaves a future log beside the current one: it is incomplete and removed
at the next start. A crash between 2 and 3 leaves a future log with no current one: the copy is
complete (2 happens only after it was fsynced), so the next start promotes it
(:func:`settle_future_logs`). The old segments are not closed: a flush running in a worker thread
may still hold them, and their files are released when the last reference goes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from kafkapy.storage.log import PartitionLog, partition_dir_name

FUTURE_SUFFIX = "-future"
DELETE_SUFFIX = "-delete"


def future_dir_name(topic: str, partition: int) -> str:
    return f"{partition_dir_name(topic, partition)}.{uuid.uuid4().hex}{FUTURE_SUFFIX}"


def parse_future_dir(name: str) -> tuple[str, int] | None:
    """``<topic>-<partition>.<uuid>-future`` -> (topic, partition); None for other names."""
    if not name.endswith(FUTURE_SUFFIX):
        return None
    stem, dot, _uid = name[: -len(FUTURE_SUFFIX)].rpartition(".")
    topic, sep, part = stem.rpartition("-")
    if not dot or not sep or not topic or not part.isdigit():
        return None
    return topic, int(part)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_synced(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.deleted"))
    for root, _dirs, files in os.walk(dst):
        for name in files:
            _fsync_path(Path(root) / name)
    _fsync_path(dst)
    _fsync_path(dst.parent)


def move_log(plog: PartitionLog, dest_dir: Path) -> None:
    """Move ``plog``'s files into log directory ``dest_dir`` and reopen them there (on the
    thread that appends to the log; see the module docstring). Raises OSError on an I/O error,
    leaving the current log as it was when the copy failed."""
    src = plog.directory
    src_parent = src.parent
    future = dest_dir / future_dir_name(plog.topic, plog.partition)
    try:
        _copy_synced(src, future)
    except OSError:
        shutil.rmtree(future, ignore_errors=True)
        raise
    doomed = src_parent / f"{src.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}"
    src.rename(doomed)
    _fsync_path(src_parent)
    final = dest_dir / partition_dir_name(plog.topic, plog.partition)
    future.rename(final)
    _fsync_path(dest_dir)
    fresh = PartitionLog.open(
        dest_dir,
        plog.topic,
        plog.partition,
        plog.topic_id,
        plog.config,
        recover=False,
        recovery_point=plog.recovery_point,
        log_start_offset=plog.log_start_offset,
    )
    plog.directory = fresh.directory
    plog.segments = fresh.segments
    plog._bases = fresh._bases  # the same class's state, moved whole
    plog.epoch_cache = fresh.epoch_cache
    plog.pending_deletes = []  # their files went with the old directory
    plog.stamp += 1  # fetch sessions read the partition again
    shutil.rmtree(doomed, ignore_errors=True)


def settle_future_logs(log_dir: Path, current: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """At startup, after every directory's current logs are known: remove the future logs of
    partitions that have a current log (an interrupted copy), rename the others into place (a
    move interrupted after its copy was complete). Returns the partitions renamed."""
    promoted = []
    for child in sorted(log_dir.iterdir()):
        tp = parse_future_dir(child.name) if child.is_dir() else None
        if tp is None:
            continue
        if tp in current:
            shutil.rmtree(child, ignore_errors=True)
            continue
        child.rename(log_dir / partition_dir_name(*tp))
        promoted.append(tp)
    return promoted
