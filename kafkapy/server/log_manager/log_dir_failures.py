"""What the broker does when a log directory goes offline (Kafka's ReplicaManager
handleLogDirFailure, run by its LogDirFailureHandler thread).

The storage layer has already marked the directory's partitions offline (they answer
KAFKA_STORAGE_ERROR) and logged the failure in one line (storage/log_manager.py). Here, on the
trio thread, for each newly failed directory:

* ZooKeeper mode: its partitions are no longer fetched or followed; while another directory is
  online, the broker posts /log_dir_event_notification/log_dir_event_N naming them and the
  controller moves their leadership to other in-sync replicas and takes this broker out of their
  ISRs (kafkapy.replication.controller);
* no online directory left: the broker stops, with exit status 1, as Kafka does ("Shutdown
  broker because all log dirs ... have failed"). Kafka halts at once and leaves its partitions
  to be moved when its ZooKeeper session expires; kafkapy first removes its registration
  (controlled shutdown: resign, unregister, wait up to CONTROLLED_SHUTDOWN_S for leadership to
  move), so the cluster stops waiting on it at once. Nothing more is written to the failed
  directory (no clean-shutdown marker): the next start recovers it.

Storage failures are reported from any thread (flushes and the cleaner run in worker threads);
they reach this task through the trio token.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.log_dir_events import post_log_dir_event
from kafkapy.storage.log_dir_failure import LogDirFailure

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.storage")

CONTROLLED_SHUTDOWN_S = 10.0
EXIT_LOG_DIRS_FAILED = 1


class LogDirFailureHandler:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._pending: list[LogDirFailure] = []
        self._lock = threading.Lock()
        self._token: trio.lowlevel.TrioToken | None = None
        self._wake = trio.Event()
        broker.logs.failures.listeners.append(self._on_failure)
        self.handled: list[LogDirFailure] = []

    def _on_failure(self, failure: LogDirFailure) -> None:  # any thread
        with self._lock:
            self._pending.append(failure)
            token = self._token
        if token is not None:
            try:
                token.run_sync_soon(self._wake.set)
            except trio.RunFinishedError:
                pass

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        with self._lock:
            self._token = trio.lowlevel.current_trio_token()
            if self._pending:
                self._wake.set()
        task_status.started()
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            with self._lock:
                taken, self._pending = self._pending, []
            for failure in taken:
                await self._handle(failure)

    async def _handle(self, failure: LogDirFailure) -> None:
        broker = self.broker
        logs = broker.logs
        self.handled.append(failure)
        partitions = logs.partitions_in(failure.log_dir)
        replicas = broker.replicas
        if replicas is not None:
            replicas.on_log_dir_failure(partitions)
        if logs.online_dirs:
            if replicas is not None and partitions:
                try:
                    await trio.to_thread.run_sync(
                        post_log_dir_event, broker.store, broker.broker_id, partitions
                    )
                except StoreError as e:
                    log.warning("cannot post the log dir event to ZooKeeper: %s", e)
            return
        if replicas is not None and not replicas.shutting_down:
            await replicas.controlled_shutdown(CONTROLLED_SHUTDOWN_S)
        broker.halt(EXIT_LOG_DIRS_FAILED)
