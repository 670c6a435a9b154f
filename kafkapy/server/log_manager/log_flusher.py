"""fsync off the event loop: flush.messages / flush.ms (log.flush.interval.*) and the
recovery-point checkpoint (Kafka's LogManager flush and checkpoint tasks).

* After an append (Produce, a follower's fetch, the group coordinator's writes), the writer
  asks ``flush_if_due``: when flush.messages records are unflushed, or flush.ms passed since
  the last flush, the fsyncs run in a worker thread (trio.to_thread) and the writer waits for
  them before it answers, as Kafka's handler does, while the event loop serves everyone else.
  Appends continue meanwhile, in order; the recovery point moves to what the flush covered.
* Every ``log.flush.scheduler.interval.ms`` (default: never, as Kafka) the logs whose flush.ms
  passed are flushed even if nothing is appended to them any more.
* Every ``log.flush.offset.checkpoint.interval.ms`` (60 s) the recovery points are written to
  recovery-point-offset-checkpoint, so a restart after a crash scans only what was not flushed.

A failed fsync takes the log's directory offline (storage/log_dir_failure.py); the writer gets
KAFKA_STORAGE_ERROR.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from kafkapy import clock
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.log import PartitionLog

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.flush")


async def flush_log(plog: PartitionLog) -> None:
    """Flush ``plog`` up to its current end, the fsyncs in a worker thread. Raises
    KafkaStorageError if the log is offline or the fsync fails (its directory goes offline)."""
    job = plog.start_flush(clock.now_ms())
    if job is None:
        return
    try:
        await trio.to_thread.run_sync(job.run)
    except OSError as e:
        raise plog.flush_failed(e) from e
    finally:
        job.close()  # if cancelled before the thread ran it
    plog.finish_flush(job)


async def flush_if_due(plog: PartitionLog | None, now_ms: int | None = None) -> None:
    """flush.messages / flush.ms: flush when due (see the module doc)."""
    if plog is not None and plog.flush_due(clock.now_ms() if now_ms is None else now_ms):
        await flush_log(plog)


async def flush_loop(broker: Broker) -> None:
    """log.flush.scheduler.interval.ms: flush the logs whose flush.ms has passed."""
    interval_ms = broker.config.log_flush_scheduler_interval_ms
    if interval_ms >= 2**62:  # Long.MAX_VALUE: Kafka never runs the task
        return
    while True:
        await trio.sleep(max(interval_ms, 1) / 1000)
        if broker.stopped:
            return
        now = clock.now_ms()
        for plog in broker.logs.online_logs():
            ms = plog.config.flush_interval_ms
            if ms is not None and plog.flush_due(now):
                try:
                    await flush_log(plog)
                except KafkaStorageError:
                    pass  # its directory went offline (logged once)


async def recovery_checkpoint_loop(broker: Broker) -> None:
    """log.flush.offset.checkpoint.interval.ms: write the recovery points (in a thread)."""
    interval_ms = broker.config.log_flush_offset_checkpoint_interval_ms
    if interval_ms <= 0:
        return
    while True:
        await trio.sleep(interval_ms / 1000)
        logs = broker.logs
        if logs is None:
            return
        await trio.to_thread.run_sync(logs.write_recovery_points, logs.recovery_points())
