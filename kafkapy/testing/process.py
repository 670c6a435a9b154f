"""A real kafkapy broker as a separate process, for tests and benchmarks.

`BrokerProcess` starts `kafkapy server` on a free loopback port with its data in a given
directory, waits until the broker listens, and stops the process (SIGTERM, then
SIGKILL) when asked — including `kill()` for crash tests, `pause()` (SIGSTOP) and `restart()` on
the same port and data. By default the broker runs on this interpreter (`python -m
kafkapy.cli.main`); `kafkapy` names another command, such as the `kafkapy` script of a
runtime-only install. Its output goes to `broker.log` in the data directory. Started from the
main thread, the broker dies with the process that started it (PR_SET_PDEATHSIG), and an atexit
hook kills what is still running, so no broker outlives a test run. When nothing could tell the
difference, the process is forked from a zygote that has the broker's modules imported already
(kafkapy/testing/zygote.py), which saves the quarter second of CPU a broker spends importing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .handle import TestBroker
from .ports import free_port

__all__ = ["BrokerProcess", "free_port"]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class BrokerProcess(TestBroker):
    mode = "process"

    def __init__(
        self,
        data_dir: str | Path,
        overrides: dict[str, str] | None = None,
        *,
        port: int | None = None,
        log_path: Path | None = None,
        cpu: int | None = None,
        kafkapy: list[str] | None = None,
        storage: str = "disk",
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(data_dir, overrides, port=port, storage=storage)
        self.log_path = log_path or self.data_dir / "broker.log"
        self.cpu = cpu
        self.kafkapy = kafkapy or [sys.executable, "-m", "kafkapy.cli.main"]
        self.env = env
        self.proc: Any = None  # subprocess.Popen, or a zygote's child (the same API)
        self.paused = False

    def command(self) -> list[str]:
        cmd = [*self.kafkapy, "server"]
        for k, v in self.properties().items():
            cmd += ["--override", f"{k}={v}"]
        if self.cpu is not None:
            cmd = ["taskset", "-c", str(self.cpu), *cmd]
        return cmd

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = None if self.env is None else {**os.environ, **self.env}
        main_thread = threading.current_thread() is threading.main_thread()
        self.proc = None
        command = self.command()
        if env is None and command[:3] == [sys.executable, "-m", "kafkapy.cli.main"]:
            # exactly this interpreter's `kafkapy` (no wrapper such as taskset or prlimit)
            from .zygote import spawn_broker

            self.proc = spawn_broker(command[1:], str(self.log_path))
        if self.proc is None:
            self._popen(env, main_thread)
        self.paused = False
        try:
            self._wait_listening(timeout, self._exited)
        except BaseException:
            self.kill()
            raise
        return self

    def _popen(self, env: dict[str, str] | None, main_thread: bool) -> None:
        with open(self.log_path, "ab") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                # the death signal follows the thread that forks: only the main thread lives
                # as long as the process
                preexec_fn=_die_with_parent if main_thread and sys.platform == "linux" else None,
            )

    def _exited(self) -> str | None:
        if self.proc is None:
            return "broker was stopped"
        if self.proc.poll() is None:
            return None
        return f"broker exited with {self.proc.returncode}: {self.log_text()[-2000:]}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> int | None:
        """Graceful stop (SIGTERM), SIGKILL if it does not exit in time; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.resume()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code = self.proc.returncode
        self.proc = None
        return code

    def kill(self) -> None:
        """Crash the broker (SIGKILL), as kill -9 does."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None
        self.paused = False

    def pause(self) -> None:
        """SIGSTOP: the broker freezes, connections stay open, its ZooKeeper session lapses."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused and self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def restart(self, timeout: float = 30.0) -> BrokerProcess:
        self.stop()
        return self.start(timeout)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _fault_pid(self) -> int:
        if self.proc is None:
            raise RuntimeError(f"broker on {self.bootstrap} is not running")
        return self.proc.pid

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
