"""Cleaning passes in the cleaner's own process (server/log_manager/cleaner_process.py): the result
the broker installs is the in-thread pass's, I/O follows log.cleaner.io.max.bytes.per.second, a
failing pass is reported as the in-thread one would be, and a dying process aborts the pass
without blaming the partition."""

from __future__ import annotations

import os
import signal
import uuid

import pytest
import trio

from kafkapy.protocol.record_batch import CorruptRecordError
from kafkapy.server.log_manager.cleaner_process import CleanerProcess, CleanerProcessDied
from kafkapy.storage.cleaner import UNLIMITED_IO, LogCleaner
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log_manager import LogManager

from .test_cleaner import T0, TID, all_records, cfg, fill, latest_view


@pytest.fixture
def logs(tmp_path):
    mgr = LogManager([tmp_path], LogConfig())
    mgr.startup(0, "cluster")
    yield mgr
    mgr.shutdown()


def clean_in_process(cleaner, process, io_rate=UNLIMITED_IO):
    async def main():
        task = cleaner.select(T0)
        assert task is not None
        try:
            # the rate checked every millisecond: the test's small log is read in a few of them
            result = await process.prepare(task, cleaner.dedupe_buffer_size, io_rate, 0.001)
        except BaseException as e:
            cleaner.fail(task, e)
            raise
        return cleaner.commit(task), result

    return trio.run(main)


def test_a_pass_in_the_cleaner_process_cleans_as_in_a_thread(logs):
    log = logs.create_log("t", 0, TID, cfg())
    other = logs.create_log("u", 0, uuid.uuid4(), cfg())
    fill(log)
    fill(other, codec=3)  # lz4
    before = all_records(log)
    process = CleanerProcess()
    try:
        cleaner = LogCleaner(logs)
        stats, result = clean_in_process(cleaner, process)
        pid = process.pid
        assert pid is not None and pid != os.getpid()
        assert stats.records_read > stats.records_kept > 0
        after = all_records(log if stats.topic == "t" else other)
        assert latest_view(after) == latest_view(
            before if stats.topic == "t" else all_records(other)
        )
        assert [r.offset for r in after] == sorted(r.offset for r in after)
        clean_in_process(cleaner, process)  # the second log, in the same process
        assert process.pid == pid and process.passes == 2
        after = all_records(log)
        assert latest_view(after) == latest_view(before) and len(after) < len(before)
    finally:
        process.close()
    assert process.pid is None


def test_io_rate_limit_slows_the_pass(logs):
    log = logs.create_log("t", 0, TID, cfg(segment_bytes=4000))
    fill(log, rounds=60, keys=5)
    size = log.size_in_bytes()
    process = CleanerProcess()
    try:
        _stats, result = clean_in_process(LogCleaner(logs), process, io_rate=size / 1.5)
    finally:
        process.close()
    # the log read and the cleaned part written, at size / 1.5 bytes a second: over a second
    # where the pass alone takes milliseconds
    assert result.throttled_s > 0.5 and result.stats.elapsed_s > 1.0


def test_a_corrupt_log_fails_the_pass_and_only_its_partition(logs):
    log = logs.create_log("t", 0, TID, cfg())
    fill(log)
    seg = log.segments[0]
    with open(seg.log_path, "r+b") as f:  # a record length that overruns its batch
        f.seek(61)
        f.write(b"\x7f")
    process = CleanerProcess()
    cleaner = LogCleaner(logs)
    try:
        with pytest.raises(CorruptRecordError):
            clean_in_process(cleaner, process)
    finally:
        process.close()
    assert ("t", 0) in cleaner.uncleanable and not log.cleaning


def test_a_dying_cleaner_process_aborts_the_pass(logs):
    log = logs.create_log("t", 0, TID, cfg(segment_bytes=4000))
    fill(log, rounds=60, keys=5)
    process = CleanerProcess()
    cleaner = LogCleaner(logs)

    async def main():
        task = cleaner.select(T0)
        async with trio.open_nursery() as n:
            async def kill_soon():
                while process.pid is None:
                    await trio.sleep(0.01)
                await trio.sleep(0.2)
                os.kill(process.pid, signal.SIGKILL)

            n.start_soon(kill_soon)
            with pytest.raises(CleanerProcessDied):
                await process.prepare(task, cleaner.dedupe_buffer_size, 1000.0, 0.001)  # slow
        cleaner.fail(task, CleanerProcessDied("killed"))

    try:
        trio.run(main)
    finally:
        process.close()
    assert ("t", 0) not in cleaner.uncleanable and not log.cleaning
    # a new process takes the next pass
    process = CleanerProcess()
    try:
        stats, _ = clean_in_process(cleaner, process)
        assert stats.topic == "t"
    finally:
        process.close()
