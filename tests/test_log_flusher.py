"""flush.messages / flush.ms fsyncs off the event loop (server/log_manager/log_flusher.py), on real
files.

The disk here is too fast (or a tmpfs) for an fsync to take noticeable time, so the fsync that
flush_log runs in a worker thread is slowed down (it sleeps, then syncs): while it runs the event
loop keeps running other tasks and appending to the same log, and the recovery point ends at what
the flush covered.
"""

from __future__ import annotations

import os
import time
import uuid

import trio

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.server.log_manager.log_flusher import flush_if_due, flush_log
from kafkapy.storage import flush as flush_module
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log_manager import LogManager

T0 = 1_700_000_000_000
SLOW_FSYNC_S = 0.3


def batch(tag: int) -> bytes:
    return encode_batch([Record(0, T0, None, b"%d" % tag)])


def test_flush_runs_in_a_worker_thread_while_appends_go_on(tmp_path, monkeypatch):
    manager = LogManager([tmp_path], LogConfig(flush_interval_messages=3))
    manager.startup(0, "c")
    plog = manager.create_log("t", 0, uuid.uuid4())
    real_fsync = os.fsync
    threads = []

    def slow_fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith((".log", ".index", ".timeindex")):
            threads.append(trio.lowlevel.in_trio_run())  # True: on the event loop's thread
            time.sleep(SLOW_FSYNC_S)
        real_fsync(fd)

    monkeypatch.setattr(flush_module.os, "fsync", slow_fsync)  # the os module: every fsync

    async def main() -> None:
        for i in range(3):
            plog.append_as_leader(batch(i), leader_epoch=0, now_ms=T0)
        ticks = 0
        async with trio.open_nursery() as nursery:

            async def appender() -> None:
                nonlocal ticks
                for i in range(3, 13):  # meanwhile, more appends to the same log
                    plog.append_as_leader(batch(i), leader_epoch=0, now_ms=T0)
                    ticks += 1
                    await trio.sleep(0.01)

            nursery.start_soon(appender)
            started = trio.current_time()
            await flush_if_due(plog, T0)  # due: 3 records
            took = trio.current_time() - started
        assert took >= SLOW_FSYNC_S and ticks == 10, (took, ticks)
        assert threads and not any(threads)  # every fsync ran outside the trio thread
        assert plog.recovery_point == 3  # what the flush covered, not what came after
        await flush_log(plog)
        assert plog.recovery_point == 13

    trio.run(main)
    data = plog.read_bytes(0, 10**6)
    values = [
        r.value for pos, h in iter_batches(data) for r in decode_records(data[pos : pos + h.size])
    ]
    assert values == [b"%d" % i for i in range(13)]  # in append order
    manager.shutdown()
