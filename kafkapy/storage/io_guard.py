"""The I/O guard of partition-log methods (Kafka's maybeHandleIOException).

A guarded method of an offline log refuses with KafkaStorageError; an OSError raised inside one
takes the log's directory offline (the log's ``io_failed``, storage/log_dir_failure.py) and
becomes KafkaStorageError. Both PartitionLog and its transactional methods use it.
``LogIOGuard`` (mixed into PartitionLog) is the state the guard reads and what it calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kafkapy.storage.errors import KafkaStorageError

F = TypeVar("F", bound=Callable[..., Any])


def storage_io(what: str) -> Callable[[F], F]:
    """Guard a method that touches a log's files; ``what`` names the operation in the log line."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.offline:
                raise self.offline_error()
            try:
                return method(self, *args, **kwargs)
            except OSError as e:
                raise self.io_failed(what, e) from e

        return guarded  # type: ignore[return-value]

    return wrap


class LogIOGuard:
    """A partition log's offline state and what an I/O error does to it (Kafka's
    LocalLog.maybeHandleIOException reporting to the LogDirFailureChannel)."""

    # the PartitionLog state it uses (set by PartitionLog.__init__)
    topic: str
    partition: int
    directory: Path
    stamp: int  # moves with every change fetchers see
    _offline: bool
    # the LogManager's handler: takes the log directory offline (storage/log_dir_failure.py)
    on_io_error: Callable[[Path, str, OSError], None] | None

    @property
    def offline(self) -> bool:
        return self._offline

    @offline.setter
    def offline(self, value: bool) -> None:
        if value != self._offline:
            self._offline = value
            self.stamp += 1

    def io_failed(self, what: str, error: OSError) -> KafkaStorageError:
        """An I/O error: this log (and its directory) go offline; the error to raise."""
        self.offline = True
        where = f"{self.topic}-{self.partition}"
        if self.on_io_error is not None:
            self.on_io_error(self.directory.parent, f"{what} {where}", error)
        return KafkaStorageError(
            f"Error while {what} {where} in dir {self.directory.parent}: "
            f"{error.strerror or error}"
        )

    def offline_error(self) -> KafkaStorageError:
        return KafkaStorageError(
            f"{self.topic}-{self.partition} is offline: log directory {self.directory.parent} "
            f"failed"
        )
