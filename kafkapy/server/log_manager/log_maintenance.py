"""Background log maintenance of a running broker (the trio side of kafkapy/storage):

* retention: every ``log.retention.check.interval.ms`` each log deletes the closed segments past
  retention.ms / retention.bytes (delete policy) or below its log start offset, and the log
  start offsets are checkpointed (Kafka's kafka-log-retention task);
* removal of ``.deleted`` segment files once their ``file.delete.delay.ms`` has passed;
* producer expiration: every ``producer.id.expiration.check.interval.ms`` each log forgets the
  producers idle for ``producer.id.expiration.ms`` that have no open transaction;
* scheduled flushes and recovery-point checkpoints (server/log_manager/log_flusher.py);
* the partition.metadata files of new logs, written (with their fsyncs) in a worker thread
  soon after the logs are created (Kafka's "flush-metadata-file" task), so CreateTopics does not
  wait for one fsync per partition; a log's first append writes its file if this has not yet;
* the log cleaner (``log.cleaner.enable``): picks the dirtiest compacted log on this thread,
  cleans it in the cleaner's own process (server/log_manager/cleaner_process.py; I/O kept under
  ``log.cleaner.io.max.bytes.per.second``), installs the result back on this thread;
  when nothing is cleanable it sleeps ``log.cleaner.backoff.ms``. ``log.cleaner.backoff.ms`` and
  ``log.cleaner.dedupe.buffer.size`` are read on every pass, so dynamic changes apply.

Each pass catches and logs its own errors: maintenance never takes the broker down.
"""

from __future__ import annotations

import logging

import trio

from kafkapy import clock
from kafkapy.storage.cleaner import DEFAULT_DEDUPE_BUFFER_SIZE, UNLIMITED_IO, LogCleaner

from ..config.log_configs import broker_layers
from ..replication.notify import AppendNotifier
from .cleaner_process import CleanerProcess
from .log_flusher import flush_loop, recovery_checkpoint_loop

log = logging.getLogger("kafkapy.maintenance")

PURGE_INTERVAL_S = 0.5


def _config(broker, key: str, default, kind=int):
    """A broker config value read now (dynamic changes apply), ``default`` if unset or bad."""
    raw = broker_layers(broker).value(key)
    try:
        return kind(raw) if raw is not None else default
    except ValueError:
        return default


async def retention_loop(broker) -> None:
    interval = max(broker.config.log_retention_check_interval_ms, 1) / 1000
    while True:
        await trio.sleep(interval)
        if broker.stopped:
            return
        try:
            deleted = broker.logs.delete_old_segments(clock.now_ms())
            if deleted:
                log.info("retention deleted segments=%d", deleted)
        except Exception:
            log.exception("retention pass failed")


async def producer_expiration_loop(broker) -> None:
    """Every producer.id.expiration.check.interval.ms (10 min), forget the producers idle for
    producer.id.expiration.ms (1 day; read each time, it is a dynamic config) that have no open
    transaction, on every log (Kafka's PeriodicProducerExpirationCheck)."""
    interval = max(_config(broker, "producer.id.expiration.check.interval.ms", 600_000), 1)
    while True:
        await trio.sleep(interval / 1000)
        if broker.stopped:
            return
        expiration = _config(
            broker, "producer.id.expiration.ms", broker.config.producer_id_expiration_ms
        )
        try:
            removed = broker.logs.remove_expired_producers(clock.now_ms(), expiration)
            if removed:
                log.debug("expired producer states=%d", removed)
        except Exception:
            log.exception("producer expiration pass failed")


async def purge_loop(broker) -> None:
    while True:
        await trio.sleep(PURGE_INTERVAL_S)
        if broker.stopped:
            return
        try:
            broker.logs.purge_deleted_files(clock.now_ms())
        except Exception:
            log.exception("removing .deleted files failed")


async def metadata_file_loop(broker) -> None:
    wake = AppendNotifier()
    broker.logs.on_metadata_pending = wake.notify
    while True:
        waiter = wake.waiter()
        if broker.stopped:
            return
        pending, broker.logs.metadata_pending = broker.logs.metadata_pending, []
        if pending:
            try:
                await trio.to_thread.run_sync(broker.logs.flush_pending_metadata, pending)
            except Exception:
                log.exception("writing partition.metadata files failed")
            continue
        await waiter.wait()


async def cleaner_loop(broker, cleaner: LogCleaner) -> None:
    process = CleanerProcess()
    try:
        await _clean_forever(broker, cleaner, process)
    finally:
        process.close()


async def _clean_forever(broker, cleaner: LogCleaner, process: CleanerProcess) -> None:
    while True:
        if broker.stopped:
            return
        cleaner.dedupe_buffer_size = _config(
            broker, "log.cleaner.dedupe.buffer.size", DEFAULT_DEDUPE_BUFFER_SIZE
        )
        try:
            task = cleaner.select(clock.now_ms())
        except Exception:
            log.exception("cleaner selection failed")
            task = None
        if task is None:
            await trio.sleep(_config(broker, "log.cleaner.backoff.ms", 15000) / 1000)
            continue
        try:
            await process.prepare(task, cleaner.dedupe_buffer_size, _config(
                broker, "log.cleaner.io.max.bytes.per.second", UNLIMITED_IO, float
            ))
            stats = cleaner.commit(task)
            log.info(
                "cleaned tp=%s-%d offsets=%d..%d read=%dB written=%dB records=%d/%d in %.3fs",
                stats.topic,
                stats.partition,
                stats.first_dirty,
                stats.end_offset,
                stats.bytes_read,
                stats.bytes_written,
                stats.records_kept,
                stats.records_read,
                stats.elapsed_s,
            )
        except Exception as e:
            cleaner.fail(task, e)
        except BaseException:
            cleaner.release(task)
            raise
        await trio.sleep(0)


async def run_log_maintenance(broker) -> None:
    """Run every maintenance task until cancelled (started in run_broker's nursery)."""
    cleaner = LogCleaner(broker.logs)
    broker.cleaner = cleaner
    async with trio.open_nursery() as nursery:
        nursery.start_soon(retention_loop, broker)
        nursery.start_soon(producer_expiration_loop, broker)
        nursery.start_soon(purge_loop, broker)
        nursery.start_soon(flush_loop, broker)
        nursery.start_soon(recovery_checkpoint_loop, broker)
        nursery.start_soon(metadata_file_loop, broker)
        if broker.config.log_cleaner_enable:
            nursery.start_soon(cleaner_loop, broker, cleaner)
