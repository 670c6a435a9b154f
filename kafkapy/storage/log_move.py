"""Moving a partition's log between the broker's log directories (AlterReplicaLogDirs), the
storage half of Kafka's ReplicaAlterLogDirsThread and LogManager.replaceCurrentWithFutureLog.

Kafka copies into a "future" log (``<topic>-<partition>.<uuid>-future``) with a fetcher thread
while the current log keeps serving, then swaps them. kafkapy does the same in two steps:

1. :func:`copy_to_future` (in a worker thread, while the event loop keeps appending and serving)
   copies the partition directory's files to ``<dest>/<topic>-<partition>.<uuid>-future``
   (``.deleted`` files left out), noting each file's identity (inode, size, mtime) as it was
   before its copy began;
2. :func:`finish_move` (on the event loop, where every append happens, so nothing is appended
   meanwhile) catches up: it copies again what changed since (the active segment's log, every
   index and state file, and a sealed segment's log only when the cleaner or retention replaced
   or removed it), removes what is gone, fsyncs every file and the directory, then swaps:

   a. the current directory is renamed ``<topic>-<partition>.<uuid>-delete``;
   b. the future directory is renamed ``<topic>-<partition>`` and the log reopened there; the
      same :class:`PartitionLog` object takes the reopened segments, so everything holding it
      (fetch sessions, coordinators) keeps working; its offsets and producer state stay as they
      were;
   c. the old directory is removed.

The pause of step 2 is the copy of what was written during step 1, not of the whole log. A crash
before 2a leaves a future log beside the current one: it is incomplete and removed at the next
start. A crash between 2a and 2b leaves a future log with no current one: the copy is complete
(2a happens only after it was fsynced), so the next start promotes it
(:func:`settle_future_logs`). The old segments are not closed: a flush running in a worker thread
may still hold them, and their files are released when the last reference goes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafkapy.storage.log import PartitionLog, partition_dir_name
from kafkapy.storage.segment import CLEANED_SUFFIX, SWAP_SUFFIX

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


_NOT_COPIED = (".deleted", CLEANED_SUFFIX, SWAP_SUFFIX)  # gone soon, or a cleaner's work file


def _copied_files(src: Path) -> list[Path]:
    return sorted(p for p in src.iterdir() if p.is_file() and not p.name.endswith(_NOT_COPIED))


def _identity(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass
class FutureLog:
    """A copy in progress: its directory and each copied file's identity before its copy."""

    directory: Path
    copied: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def copy_to_future(plog: PartitionLog, dest_dir: Path) -> FutureLog:
    """Step 1 (any thread): copy ``plog``'s files into a future directory under ``dest_dir``.
    Files that retention removes meanwhile are skipped. Raises OSError on an I/O error, having
    removed the partial copy."""
    future = FutureLog(dest_dir / future_dir_name(plog.topic, plog.partition))
    try:
        future.directory.mkdir()
        for path in _copied_files(plog.directory):
            try:
                before = _identity(path)
                shutil.copyfile(path, future.directory / path.name)
            except FileNotFoundError:
                continue  # deleted by retention while we copied: finish_move drops it
            future.copied[path.name] = before
    except OSError:
        shutil.rmtree(future.directory, ignore_errors=True)
        raise
    return future


def _catch_up(plog: PartitionLog, future: FutureLog) -> None:
    active = plog.segments[-1].log_path.name if plog.segments else None
    wanted = set()
    for path in _copied_files(plog.directory):
        wanted.add(path.name)
        unchanged = future.copied.get(path.name) == _identity(path)
        if unchanged and path.suffix == ".log" and path.name != active:
            continue  # a sealed segment's records: written once, before the copy began
        shutil.copyfile(path, future.directory / path.name)
    for path in future.directory.iterdir():
        if path.name not in wanted:
            path.unlink()
    for path in future.directory.iterdir():
        _fsync_path(path)
    _fsync_path(future.directory)
    _fsync_path(future.directory.parent)


def finish_move(plog: PartitionLog, future: FutureLog) -> None:
    """Step 2 (on the thread that appends to the log): catch the future log up and swap it in.
    Raises OSError on an I/O error; the current log stays as it was when the catch-up failed."""
    try:
        _catch_up(plog, future)
    except OSError:
        shutil.rmtree(future.directory, ignore_errors=True)
        raise
    dest_dir = future.directory.parent
    src = plog.directory
    src_parent = src.parent
    doomed = src_parent / f"{src.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}"
    src.rename(doomed)
    _fsync_path(src_parent)
    final = dest_dir / partition_dir_name(plog.topic, plog.partition)
    future.directory.rename(final)
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
