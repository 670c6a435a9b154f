"""Run a real kafkapy broker as a separate process, for tests and benchmarks.

`BrokerProcess` picks a free loopback port, starts `kafkapy server` with its data in a given
directory, waits until the port accepts connections, and stops the process (SIGTERM, then
SIGKILL) when asked — including `kill()` for crash tests, and `restart()` on the same port and
data. By default the broker runs on this interpreter (`python -m kafkapy.cli.main`); `kafkapy`
names another command, such as the `kafkapy` script of a runtime-only install.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BrokerProcess:
    def __init__(
        self,
        data_dir: Path,
        overrides: dict[str, str] | None = None,
        *,
        port: int | None = None,
        log_path: Path | None = None,
        cpu: int | None = None,
        kafkapy: list[str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.overrides = dict(overrides or {})
        self.log_path = log_path or self.data_dir / "broker.log"
        self.cpu = cpu
        self.kafkapy = kafkapy or [sys.executable, "-m", "kafkapy.cli.main"]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        props = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.data_dir / "logs"),
            **self.overrides,
        }
        cmd = [*self.kafkapy, "server"]
        for k, v in props.items():
            cmd += ["--override", f"{k}={v}"]
        if self.cpu is not None:
            cmd = ["taskset", "-c", str(self.cpu), *cmd]
        return cmd

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115  (owned by the child for its life)
        self.proc = subprocess.Popen(
            self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"broker exited with {self.proc.returncode}: {self.log_text()[-2000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"broker did not listen within {timeout}s: {self.log_text()[-2000:]}")

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

    def restart(self) -> BrokerProcess:
        self.stop()
        return self.start()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
