"""The log cleaner's own process: cleaning passes run away from the broker's event loop.

A cleaning pass is CPU work in Python (scanning records, the offset map, writing the cleaned
segments); in a worker thread of the broker it shares the GIL with the event loop, and produce
requests slowed to about a third while a compacted topic was being cleaned. As Kafka's cleaner
threads write ``.cleaned`` segments that the log then swaps in, the pass here runs in a child
process (storage/cleaner_pass.py: a CleanJob and the segments' duplicated descriptors go there,
a CleanResult comes back); the broker selects the log before and swaps the result in after, on
its own thread (storage/cleaner.py), so the log is only ever changed by the broker.

The process starts with the first pass (a broker that never cleans never has one), runs at a
lower CPU priority (nice 10: when it competes with the broker for a core it gets about a tenth
of it, and all of an idle one), keeps its I/O under ``log.cleaner.io.max.bytes.per.second``
and exits when the broker closes its pipe (or dies: the pipe closes with it). If it dies, the
pass fails (the partition is retried at the next pass) and the next pass starts a new one.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Any

import trio

from kafkapy.storage.cleaner import CleanerAborted
from kafkapy.storage.cleaner_pass import CleanJob, CleanResult, CleanTask, apply_result, job_of
from kafkapy.storage.io_throttle import CHECK_INTERVAL_S

log = logging.getLogger("kafkapy.cleaner")

NICE = 10


class CleanerProcessDied(CleanerAborted):
    """The cleaner process ended in the middle of a pass (not the partition's fault: it is
    cleaned again at a later pass)."""


def _main(conn: Connection) -> None:
    """The child: run the jobs it is sent until its pipe closes."""
    with contextlib.suppress(OSError):
        os.nice(NICE)
    from kafkapy.storage.cleaner_pass import run_job

    while True:
        try:
            job: CleanJob = conn.recv()
        except (EOFError, OSError):
            return
        fds = [recv_handle(conn) for _ in job.segments]
        try:
            reply: tuple[str, Any] = ("ok", run_job(job, fds))
        except BaseException as e:
            reply = ("error", e)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        try:
            try:
                conn.send(reply)
            except (TypeError, AttributeError, ValueError) as e:  # an exception that won't pickle
                error = reply[1]
                conn.send(("error", RuntimeError(f"{type(error).__name__}: {error} ({e})")))
        except OSError:  # the broker is gone
            return


class CleanerProcess:
    """The broker's side: one child, one pass at a time."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Connection | None = None
        self.passes = 0

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _ensure(self) -> Connection:
        if self._proc is None or not self._proc.is_alive():
            self.close()
            ctx = mp.get_context("spawn")
            ours, theirs = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=_main, args=(theirs,), name="kafkapy-cleaner", daemon=True)
            proc.start()
            theirs.close()
            self._proc, self._conn = proc, ours
            log.info("log cleaner process started pid=%d", proc.pid)
        assert self._conn is not None
        return self._conn

    async def prepare(
        self,
        task: CleanTask,
        dedupe_buffer_size: int,
        io_max_bytes_per_second: float,
        io_check_interval_s: float = CHECK_INTERVAL_S,
    ) -> CleanResult:
        """Run the pass of ``task`` in the cleaner process; its result is applied to the task
        (ready for LogCleaner.commit). The child's exception is raised here."""
        conn = self._ensure()
        pid = self._proc.pid
        job = job_of(task, dedupe_buffer_size, io_max_bytes_per_second, io_check_interval_s)

        def exchange() -> tuple[str, Any]:
            conn.send(job)
            for fd in task.fds:
                send_handle(conn, fd, pid)
            return conn.recv()

        try:
            kind, value = await trio.to_thread.run_sync(exchange, abandon_on_cancel=True)
        except (EOFError, OSError) as e:
            self.close()
            raise CleanerProcessDied(f"the cleaner process ended during a pass: {e!r}") from None
        if kind != "ok":
            raise value
        self.passes += 1
        apply_result(task, value)
        return value

    def close(self) -> None:
        """End the child (its pipe closes; it exits between passes, or is terminated)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.join(2)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
