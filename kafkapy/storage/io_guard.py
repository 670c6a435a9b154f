"""The I/O guard of partition-log methods (Kafka's maybeHandleIOException).

A guarded method of an offline log refuses with KafkaStorageError; an OSError raised inside one
takes the log's directory offline (the log's ``io_failed``, storage/log_dir_failure.py) and
becomes KafkaStorageError. Both PartitionLog and its transactional methods use it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

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
