"""fsync of a partition log in two halves, so that the blocking half can run in a worker thread
(the broker's flush.messages / flush.ms flushes run off its event loop).

``PartitionLog.start_flush`` (on the thread that appends) takes what must reach the disk: the
log end offset at that moment (the recovery point once the flush is done) and duplicates of the
descriptors of every segment and index holding offsets past the current recovery point.
``FlushJob.run`` (any thread) fsyncs them and closes the duplicates; appends go on meanwhile,
into the same files, in order (fsync covers everything written before it, and perhaps more).
``PartitionLog.finish_flush`` (back on the appending thread) moves the recovery point, unless
the log was truncated meanwhile. Descriptors are duplicated so that a segment deleted or closed
meanwhile cannot close them under the flush.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kafkapy.storage import faults


@dataclass(slots=True)
class FlushJob:
    target: int  # the log end offset when the flush started: the recovery point after it
    generation: int  # the log's truncation count then (a truncation cancels the move)
    files: list[tuple[int, str]] = field(default_factory=list)  # (dup'ed fd, path)

    def run(self) -> None:
        """fsync every file (blocking; any thread), then close the duplicates."""
        try:
            for fd, path in self.files:
                if faults.ACTIVE:
                    faults.check_sync(path)
                os.fsync(fd)
        finally:
            self.close()

    def close(self) -> None:
        files, self.files = self.files, []
        for fd, _path in files:
            try:
                os.close(fd)
            except OSError:
                pass
