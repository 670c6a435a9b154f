"""All partition logs of a broker across its log directories: meta.properties, loading and
recovery at startup, offset checkpoints, the clean-shutdown marker, and log directories going
offline after an I/O error (Kafka's LogManager.handleLogDirFailure): the directory's logs are
marked offline, nothing is written there any more (checkpoints, the clean-shutdown marker: the
next start recovers it), new partitions go to the online directories. The failure is logged
once, in one line; the broker's reaction is server/log_manager/log_dir_failures.py."""

from __future__ import annotations

import logging
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from kafkapy.storage.checkpoints import (
    CLEAN_SHUTDOWN_MARKER,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES,
    RECOVERY_POINT_CHECKPOINT,
    read_offset_checkpoint,
    read_properties,
    write_atomic,
    write_offset_checkpoint,
    write_properties,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import InconsistentClusterIdError, KafkaStorageError
from kafkapy.storage.log import PartitionLog, partition_dir_name
from kafkapy.storage.log_dir_failure import LogDirFailure, LogDirFailureChannel
from kafkapy.storage.log_move import FutureLog, copy_to_future, finish_move, settle_future_logs

log = logging.getLogger("kafkapy.storage")


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``<topic>-<partition>`` -> (topic, partition); None for other entries."""
    if name.endswith(("-delete", "-future", "-stray")):
        return None
    topic, sep, part = name.rpartition("-")
    if not sep or not topic or not part.isdigit():
        return None
    return topic, int(part)


class LogManager:
    """Owns every PartitionLog; one instance per broker."""

    def __init__(self, log_dirs: list[Path], default_config: LogConfig) -> None:
        if not log_dirs:
            raise ValueError("at least one log directory is required")
        self.log_dirs = [Path(d) for d in log_dirs]
        self.default_config = default_config
        self.logs: dict[tuple[str, int], PartitionLog] = {}
        self._dir_of: dict[tuple[str, int], Path] = {}
        self.moving: set[tuple[str, int]] = set()  # partitions AlterReplicaLogDirs is moving
        self.had_clean_shutdown: dict[Path, bool] = {}
        self.failures = LogDirFailureChannel()
        self.failures.listeners.append(self._take_offline)
        # logs are added and removed on the broker's thread; a failure or a checkpoint may
        # look at them from a worker thread
        self._lock = threading.Lock()
        # new logs whose partition.metadata is still to be written, and the hook that tells the
        # broker's background flusher (PartitionLog.flush_metadata_file)
        self.metadata_pending: list[PartitionLog] = []
        self.on_metadata_pending: Callable[[], None] = lambda: None

    # ---- log directory failures ----------------------------------------------------------

    @property
    def online_dirs(self) -> list[Path]:
        return [d for d in self.log_dirs if not self.failures.is_offline(d)]

    def is_online(self, d: Path) -> bool:
        return not self.failures.is_offline(d)

    def partitions_in(self, d: Path) -> list[tuple[str, int]]:
        with self._lock:
            return sorted(tp for tp, ld in self._dir_of.items() if ld == d)

    def fail_dir(self, d: Path, what: str, error: OSError) -> None:
        """An I/O error in ``d`` (any thread): take it offline (once)."""
        self.failures.fail(d, what, error)

    def _attach(self, tp: tuple[str, int], plog: PartitionLog, d: Path) -> None:
        plog.on_io_error = self.fail_dir
        with self._lock:
            self.logs[tp] = plog
            self._dir_of[tp] = d

    def _take_offline(self, failure: LogDirFailure) -> None:
        d = failure.log_dir
        with self._lock:
            tps = sorted(tp for tp, ld in self._dir_of.items() if ld == d)
            for tp in tps:
                self.logs[tp].offline = True
        left = self.online_dirs
        log.error(
            "log directory offline dir=%s error=%r while %s: its %d partitions are offline on "
            "this broker%s",
            d,
            failure.reason,
            failure.what,
            len(tps),
            "" if left else "; no online log directory is left: the broker stops",
        )

    # ---- startup / shutdown --------------------------------------------------------------

    def _check_meta(self, d: Path, broker_id: int, cluster_id: str) -> None:
        path = d / META_PROPERTIES
        if not path.exists():
            props = {"version": "0", "broker.id": str(broker_id), "cluster.id": cluster_id}
            write_properties(path, props)
            return
        props = read_properties(path)
        stored_cluster = props.get("cluster.id")
        if stored_cluster is not None and stored_cluster != cluster_id:
            raise InconsistentClusterIdError(
                f"{path}: cluster.id {stored_cluster} does not match {cluster_id}"
            )
        stored_id = props.get("broker.id", props.get("node.id"))
        if stored_id is not None and int(stored_id) != broker_id:
            raise InconsistentClusterIdError(
                f"{path}: broker.id {stored_id} does not match {broker_id}"
            )

    def startup(self, broker_id: int, cluster_id: str) -> None:
        """Validate meta.properties, load (recovering after an unclean stop) every partition."""
        all_starts: dict[tuple[str, int], int] = {}
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
            self._check_meta(d, broker_id, cluster_id)
            marker = d / CLEAN_SHUTDOWN_MARKER
            clean = marker.exists()
            self.had_clean_shutdown[d] = clean
            recovery = read_offset_checkpoint(d / RECOVERY_POINT_CHECKPOINT)
            starts = read_offset_checkpoint(d / LOG_START_OFFSET_CHECKPOINT)
            for child in sorted(d.iterdir()):
                if not child.is_dir():
                    continue
                if child.name.endswith("-delete"):
                    shutil.rmtree(child, ignore_errors=True)
                    continue
                tp = parse_partition_dir(child.name)
                if tp is None:
                    continue
                plog = PartitionLog.open(
                    d,
                    tp[0],
                    tp[1],
                    None,
                    self.default_config,
                    recover=not clean,
                    recovery_point=recovery.get(tp, 0),
                    log_start_offset=starts.get(tp, 0),
                )
                self._attach(tp, plog, d)
            all_starts.update(starts)
            marker.unlink(missing_ok=True)
        for d in self.log_dirs:  # moves between log dirs interrupted by a stop (log_move.py)
            for tp in settle_future_logs(d, set(self.logs)):
                log.warning("completing the move of %s-%d into %s interrupted by a stop", *tp, d)
                plog = PartitionLog.open(d, tp[0], tp[1], None, self.default_config,
                                         recover=True, log_start_offset=all_starts.get(tp, 0))
                self._attach(tp, plog, d)

    def _write_checkpoint(self, d: Path, name: str, offsets: dict[tuple[str, int], int]) -> None:
        """A checkpoint of an online dir; an I/O error takes the dir offline."""
        if not self.is_online(d):
            return
        try:
            write_offset_checkpoint(d / name, offsets)
        except OSError as e:
            self.fail_dir(d, f"writing {name}", e)

    def recovery_points(self) -> dict[Path, dict[tuple[str, int], int]]:
        """Every online dir's recovery points (a snapshot to write from any thread)."""
        with self._lock:
            out: dict[Path, dict[tuple[str, int], int]] = {d: {} for d in self.online_dirs}
            for tp, d in self._dir_of.items():
                if d in out:
                    out[d][tp] = self.logs[tp].recovery_point
        return out

    def write_recovery_points(self, snapshot: dict[Path, dict[tuple[str, int], int]]) -> None:
        for d, recovery in snapshot.items():
            self._write_checkpoint(d, RECOVERY_POINT_CHECKPOINT, recovery)

    def checkpoint_recovery_points(self) -> None:
        self.write_recovery_points(self.recovery_points())

    def checkpoint(self) -> None:
        """Write recovery-point and log-start-offset checkpoints of every online log dir."""
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()

    def flush_all(self) -> None:
        for plog in self.online_logs():
            try:
                plog.flush()
            except KafkaStorageError:
                pass  # its directory went offline (logged once)

    def shutdown(self) -> None:
        """Flush, checkpoint, close every log, then write the clean-shutdown marker of every
        online dir (an offline one is recovered at the next start)."""
        self.flush_all()
        self.checkpoint()
        for plog in self.logs.values():
            try:
                plog.close()
            except OSError:
                pass
        for d in self.online_dirs:
            try:
                write_atomic(d / CLEAN_SHUTDOWN_MARKER, "")
            except OSError as e:
                self.fail_dir(d, "writing the clean-shutdown marker", e)
        with self._lock:
            self.logs.clear()
            self._dir_of.clear()

    def online_logs(self) -> list[PartitionLog]:
        return [plog for plog in self.logs.values() if not plog.offline]

    # ---- retention -----------------------------------------------------------------------

    def delete_old_segments(self, now_ms: int) -> int:
        """One retention pass over every log (Kafka's cleanupLogs); checkpoints the log start
        offsets when a segment went. Logs being cleaned are skipped this time."""
        deleted = 0
        for plog in self.online_logs():
            if plog.cleaning:
                continue
            try:
                deleted += plog.delete_old_segments(now_ms)
            except KafkaStorageError:
                continue  # its directory went offline (logged once)
        if deleted:
            self.checkpoint_log_start_offsets()
        return deleted

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        """Forget, on every log, producers idle for ``expiration_ms`` without an open
        transaction (producer.id.expiration.ms); returns how many."""
        return sum(
            len(plog.producer_state.remove_expired(now_ms, expiration_ms))
            for plog in self.online_logs()
        )

    def purge_deleted_files(self, now_ms: int) -> int:
        """Remove ``.deleted`` segment files whose file.delete.delay.ms has passed."""
        removed = 0
        for plog in self.online_logs():
            try:
                removed += plog.purge_deleted_files(now_ms)
            except KafkaStorageError:
                continue
        return removed

    def checkpoint_log_start_offsets(self) -> None:
        for d in self.log_dirs:
            tps = self.partitions_in(d)
            starts = {tp: self.logs[tp].log_start_offset for tp in tps}
            self._write_checkpoint(d, LOG_START_OFFSET_CHECKPOINT, starts)

    # ---- partitions ----------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get((topic, partition))

    def all_logs(self) -> list[PartitionLog]:
        return list(self.logs.values())

    def _pick_dir(self) -> Path:
        online = self.online_dirs
        if not online:
            raise KafkaStorageError("no online log directory is left")
        if len(online) == 1:
            return online[0]
        counts = {d: 0 for d in online}
        for d in self._dir_of.values():
            if d in counts:
                counts[d] += 1
        return min(online, key=lambda d: counts[d])

    def create_log(
        self,
        topic: str,
        partition: int,
        topic_id: uuid.UUID | None,
        config: LogConfig | None = None,
    ) -> PartitionLog:
        """Return the partition's log, creating an empty one if needed (idempotent)."""
        tp = (topic, partition)
        existing = self.logs.get(tp)
        if existing is not None:
            if config is not None:
                existing.update_config(config)
            return existing
        d = self._pick_dir()
        try:
            plog = PartitionLog.open(
                d, topic, partition, topic_id, config or self.default_config, recover=False
            )
        except OSError as e:
            self.fail_dir(d, f"creating {topic}-{partition}", e)
            raise KafkaStorageError(f"cannot create {topic}-{partition} in {d}: {e}") from e
        self._attach(tp, plog, d)
        if plog.metadata_pending is not None:
            self.metadata_pending.append(plog)
            self.on_metadata_pending()
        return plog

    def flush_pending_metadata(self, logs: list[PartitionLog]) -> None:
        """Write the partition.metadata files of new logs (a worker thread; see
        PartitionLog.flush_metadata_file). A log deleted meanwhile has abandoned its file; an
        I/O error takes the log's directory offline (and is logged there)."""
        for plog in logs:
            try:
                plog.flush_metadata_file()
            except KafkaStorageError:
                pass

    def log_dir_of(self, topic: str, partition: int) -> Path | None:
        with self._lock:
            return self._dir_of.get((topic, partition))

    def copy_to_future(self, topic: str, partition: int, dest: Path) -> FutureLog | None:
        """Step 1 of a move (storage/log_move.py), safe in a worker thread: the partition's
        files copied into a future log under ``dest``; None when the log is there already."""
        tp = (topic, partition)
        plog = self.logs[tp]
        if self._dir_of[tp] == dest:
            return None
        try:
            return copy_to_future(plog, dest)
        except OSError as e:
            self.fail_dir(dest, f"copying {topic}-{partition} to {dest}", e)
            raise KafkaStorageError(f"cannot move {topic}-{partition} to {dest}: {e}") from e

    def finish_move(self, topic: str, partition: int, future: FutureLog) -> None:
        """Step 2 of a move, on the thread that appends to the log: catch up and swap."""
        tp = (topic, partition)
        plog = self.logs[tp]
        src, dest = self._dir_of[tp], future.directory.parent
        try:
            finish_move(plog, future)
        except OSError as e:
            failed = dest if plog.directory.parent == src else src  # the copy, or the swap
            self.fail_dir(failed, f"moving {topic}-{partition} to {dest}", e)
            raise KafkaStorageError(f"cannot move {topic}-{partition} to {dest}: {e}") from e
        with self._lock:
            self._dir_of[tp] = dest

    def delete_log(self, topic: str, partition: int) -> None:
        """Close the log, rename its directory to ``<tp>.<uuid>-delete``, then remove it."""
        tp = (topic, partition)
        with self._lock:
            plog = self.logs.pop(tp, None)
            d = self._dir_of.pop(tp, None)
        if plog is None or d is None:
            return
        plog.abandon_metadata_file()
        if plog.offline or not self.is_online(d):
            return  # nothing is written to a failed directory
        plog.close()
        src = d / partition_dir_name(topic, partition)
        dst = d / f"{partition_dir_name(topic, partition)}.{uuid.uuid4().hex}-delete"
        src.rename(dst)
        shutil.rmtree(dst, ignore_errors=True)
