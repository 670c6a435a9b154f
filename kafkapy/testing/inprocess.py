"""A kafkapy broker inside this process: the broker's own trio event loop in a thread.

The same code as `kafkapy server` (``run_broker``), minus a process start and its imports: once
the broker modules are imported, starting one takes milliseconds. Several can run at once (each
has its own loop, thread, port, log dirs and metadata store), and stopping one releases all of
them: the loop is cancelled, so the broker shuts down as on SIGTERM (logs flushed and closed,
the metadata store closed, the listener and every connection closed), and the thread ends.

It shares the interpreter with the test: Python clients (kafka-python, aiokafka) and the broker
take turns on the GIL, librdkafka-based ones (confluent-kafka) do not need it. A test that must
crash the broker for real, or see its exit status, uses ``BrokerProcess`` (the same API).
"""

from __future__ import annotations

import threading
from typing import Any

from .handle import BrokerStartError, TestBroker


class BrokerThread(TestBroker):
    mode = "thread"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As TestBroker: ``(data_dir, overrides=None, *, port=None, storage="disk")``."""
        super().__init__(*args, **kwargs)
        self.broker: Any = None  # kafkapy.server.broker.Broker while running
        self.error: BaseException | None = None  # why the loop ended, if not asked to
        self.exit_code: int | None = None  # run_broker's status when the broker halted itself
        self._thread: threading.Thread | None = None
        self._token: Any = None
        self._scope: Any = None
        self._ready = threading.Event()
        self._held: threading.Event | None = None  # set while paused

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> BrokerThread:
        from kafkapy.server.config.broker_config import BrokerConfig

        if self.running:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = BrokerConfig.from_properties(self.properties())
        self.error, self.broker, self.exit_code = None, None, None
        self._ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(config,), name=f"kafkapy-broker-{self.port}", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            self.kill()
            raise BrokerStartError(f"in-process broker on {self.bootstrap} did not start")
        self._wait_listening(timeout, self._exited)
        return self

    def _run(self, config: Any) -> None:
        import trio

        from kafkapy.server.broker import run_broker

        async def broker(task_status: Any) -> None:
            self.exit_code = await run_broker(config, task_status=task_status)

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                self.broker = await nursery.start(broker)
                self._ready.set()

        try:
            trio.run(main)
        except BaseException as e:
            self.error = e
        finally:
            self._ready.set()

    def _exited(self) -> str | None:
        if self._thread is not None and self._thread.is_alive() and self.broker is not None:
            return None
        why = self.error
        self._join(5.0)
        return f"in-process broker on {self.bootstrap} failed to start: {why!r}"

    def _call_soon(self, fn: Any) -> bool:
        """Run ``fn`` on the broker's loop thread; False when the loop is gone."""
        import trio

        if self._token is None:
            return False
        try:
            self._token.run_sync_soon(fn)
        except trio.RunFinishedError:
            return False
        return True

    def _join(self, timeout: float) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                raise RuntimeError(f"in-process broker on {self.bootstrap} did not stop")
        self._token = self._scope = self.broker = None

    def stop(self, timeout: float = 20.0) -> int | None:
        """Shut the broker down cleanly and wait for its thread; 0, the status it halted itself
        with (1: every log directory failed), 1 if it failed (``self.error`` says why), or None
        if it was not running."""
        if self._thread is None:
            return None
        self.resume()
        scope = self._scope
        if scope is not None:
            self._call_soon(scope.cancel)
        self._join(timeout)
        if self.error is not None:
            return 1
        return self.exit_code or 0

    def kill(self) -> None:
        """Stop at once, as a crash would: logs and the metadata store are closed without a flush,
        a checkpoint or the clean-shutdown marker, so the next start recovers the logs."""
        if self._thread is None:
            return
        self.resume()
        broker, scope = self.broker, self._scope

        def crash() -> None:
            if broker is not None:
                # closed without a flush; broker.stop() skips services start() did not open
                logs, store = broker.opened("logs"), broker.opened("store")
                if logs is not None:
                    for plog in logs.all_logs():
                        plog.close()
                    del broker.logs
                if store is not None:
                    store.close()
                    del broker.store
            if scope is not None:
                scope.cancel()

        self._call_soon(crash)
        try:
            self._join(20.0)
        finally:
            self.error = None  # errors of tasks that found the logs gone are the crash's

    def pause(self) -> None:
        """Hold the broker's event loop: it accepts nothing and answers nothing until resume()."""
        if self._held is not None or not self.running:
            return
        held = self._held = threading.Event()
        self._call_soon(held.wait)  # blocks the loop thread itself

    def resume(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.set()

    @property
    def running(self) -> bool:
        return (
            self._thread is not None
            and self._thread.is_alive()
            and self.broker is not None
            and self.exit_code is None
        )

    def _fault_pid(self) -> int:
        import os

        return os.getpid()

    def log_text(self) -> str:
        return "" if self.error is None else repr(self.error)
