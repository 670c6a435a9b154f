"""Log directories taken offline by an I/O error (Kafka's LogDirFailureChannel).

Any I/O error while a log directory is written or read (a full disk, a failing device: appends,
segment rolls, index and checkpoint writes, fsync) takes the whole directory offline until the
broker restarts: every partition in it answers KAFKA_STORAGE_ERROR from then on, nothing more is
written there (no checkpoints, no clean-shutdown marker, so the next start recovers it), and the
broker reacts (server/log_manager/log_dir_failures.py: leadership moves in a cluster, or the broker
stops when no log directory is left, as Kafka does).

``fail`` is safe from any thread (flushes and the cleaner run in worker threads); it returns True
only for the first failure of a directory, and calls the listeners then, once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class LogDirFailure:
    log_dir: Path
    what: str  # what was being done, e.g. "appending records to orders-0"
    error: OSError

    @property
    def reason(self) -> str:
        return self.error.strerror or str(self.error)


class LogDirFailureChannel:
    def __init__(self) -> None:
        self._offline: dict[Path, LogDirFailure] = {}
        self._lock = threading.Lock()
        self.listeners: list[Callable[[LogDirFailure], None]] = []

    def is_offline(self, log_dir: Path) -> bool:
        return log_dir in self._offline

    @property
    def offline(self) -> dict[Path, LogDirFailure]:
        return dict(self._offline)

    def fail(self, log_dir: Path, what: str, error: OSError) -> bool:
        """Take ``log_dir`` offline; True if it was online until now."""
        failure = LogDirFailure(Path(log_dir), what, error)
        with self._lock:
            if failure.log_dir in self._offline:
                return False
            self._offline[failure.log_dir] = failure
        for listener in list(self.listeners):
            listener(failure)
        return True
