"""What every test broker offers, in-process (``BrokerThread``) or as a subprocess
(``BrokerProcess``): one API, so a test or fixture does not care which it got.

A broker is made with a data directory, ``server.properties`` overrides, a free loopback port and a
storage kind (kafkapy/testing/storage.py). ``start()`` returns once the broker listens (it binds
its listener last, when it can serve);
``stop()`` shuts it down cleanly; ``restart()`` brings it back on the same port and data;
``close()`` (or leaving the ``with`` block) stops it and removes what it stored in memory.

Faults, for tests of what clients and applications do when Kafka misbehaves:

* ``kill()``: a crash (kill -9 for a subprocess; in-process, the broker stops without flushing,
  checkpointing or writing its clean-shutdown marker, so the next start recovers its logs);
* ``pause()`` / ``resume()``: the broker stops answering but keeps its connections (SIGSTOP and
  SIGCONT; in-process, its event loop is held). A paused member of a ZooKeeper cluster loses its
  session when ``zookeeper.session.timeout.ms`` passes: leadership moves;
* ``drop_connections()``: every client connection is closed under the clients
  (kafkapy/testing/connections.py);
* ``fail_log_dir(topic, partition)``: the log directory holding that partition fails, as in
  Kafka's own LogDirFailureTest: the directory is moved aside and a file takes its place, so the
  broker's next file operation there (a checkpoint, a new segment, a new partition) gets an I/O
  error and it takes the directory offline (KAFKA_STORAGE_ERROR, leadership moves elsewhere).
  ``repair_log_dir()`` puts it back (restart the broker afterwards, as after a disk swap).

Measurements, for benchmarks and resource tests: ``usage()`` (the broker process's CPU time and
peak RSS, kafkapy/testing/usage.py) and ``profile()`` (py-spy sampling its stacks,
kafkapy/testing/profiling.py).
"""

from __future__ import annotations

import atexit
import subprocess
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from . import storage as storage_kinds
from .connections import drop_accepted
from .ports import free_port
from .probe import port_open
from .profiling import start_py_spy
from .usage import ProcessUsage

HOST = "127.0.0.1"

_live: weakref.WeakSet[TestBroker] = weakref.WeakSet()


@atexit.register
def _stop_leftovers() -> None:
    for b in list(_live):
        try:
            if b.mode == "process":
                b.kill()
            else:
                b.stop()
        except Exception:
            pass


class BrokerStartError(RuntimeError):
    """The broker exited or did not answer in time; the message carries its last log lines."""


class TestBroker(ABC):
    """Base of BrokerThread and BrokerProcess (not collected by pytest: not a test)."""

    __test__ = False
    mode: ClassVar[str] = ""

    def __init__(
        self,
        data_dir: str | Path,
        overrides: dict[str, str] | None = None,
        *,
        port: int | None = None,
        storage: str = "disk",
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = HOST
        self.port = port or free_port()
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.storage = storage_kinds.check_kind(storage)
        self.memory_dir: Path | None = None
        self.on_tmpfs = False
        self.failed_log_dirs: dict[Path, Path] = {}  # failed log dir -> where it was moved
        self.started_in: float | None = None  # seconds from start() until it listened

    # --- addresses and config ---------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:<port>``, for any client's ``bootstrap.servers``."""
        return self.bootstrap

    def _log_root(self) -> Path:
        if self.storage == "memory":
            if self.memory_dir is None:
                self.memory_dir, self.on_tmpfs = storage_kinds.memory_dir()
            return self.memory_dir
        return self.data_dir

    def properties(self) -> dict[str, str]:
        """The broker's server.properties: listener on our port, log dirs, then the overrides."""
        return {
            "listeners": f"PLAINTEXT://{self.host}:{self.port}",
            "log.dirs": str(self._log_root() / "logs"),
            **self.overrides,
        }

    @property
    def log_dirs(self) -> list[Path]:
        props = self.properties()
        dirs = props.get("log.dirs") or props.get("log.dir") or ""
        return [Path(d.strip()) for d in dirs.split(",") if d.strip()]

    # --- lifecycle (the subclasses start and stop) -----------------------------------------

    @abstractmethod
    def start(self, timeout: float = 30.0) -> TestBroker:
        ...

    @abstractmethod
    def stop(self, timeout: float = 20.0) -> int | None:
        ...

    @abstractmethod
    def kill(self) -> None:
        ...

    @abstractmethod
    def pause(self) -> None:
        ...

    @abstractmethod
    def resume(self) -> None:
        ...

    @property
    @abstractmethod
    def running(self) -> bool:
        ...

    def log_text(self) -> str:
        return ""

    def restart(self, timeout: float = 30.0) -> TestBroker:
        self.stop()
        return self.start(timeout)

    def close(self) -> None:
        """Stop the broker and remove what it kept in memory (disk data stays with its dir)."""
        try:
            self.stop()
        finally:
            _live.discard(self)
            if self.memory_dir is not None:
                storage_kinds.remove(self.memory_dir)
                self.memory_dir = None

    def __enter__(self) -> TestBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_listening(self, timeout: float, exited: Callable[[], str | None]) -> None:
        """Poll the port until it accepts connections (the broker binds its listener last, once
        everything is wired); ``exited()`` returns why the broker is gone, if it is. Raises
        BrokerStartError with that reason, or after ``timeout``. A connection, not a request:
        tests that count requests or handler calls see none of ours."""
        started = time.perf_counter()
        deadline = started + timeout
        delay = 0.002
        while True:
            reason = exited()
            if reason is not None:
                raise BrokerStartError(reason)
            if port_open(self.host, self.port, timeout=min(2.0, timeout)):
                self.started_in = time.perf_counter() - started
                _live.add(self)
                return
            if time.perf_counter() > deadline:
                raise BrokerStartError(
                    f"broker on {self.bootstrap} did not listen within {timeout}s:"
                    f"\n{self.log_text()[-2000:]}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.01)  # connecting to a closed port costs microseconds

    # --- faults -------------------------------------------------------------------------------

    @abstractmethod
    def _fault_pid(self) -> int:
        """The process whose sockets the fault helpers act on."""

    def usage(self) -> ProcessUsage:
        """CPU and memory of the broker's process (kafkapy/testing/usage.py); in-process
        (``BrokerThread``) that is this whole process, the test's own work included."""
        return ProcessUsage(self._fault_pid())

    def profile(
        self, out: Path, seconds: float, rate: int = 250
    ) -> subprocess.Popen[bytes] | None:
        """Start sampling the broker's stacks with py-spy for ``seconds`` into ``out``
        (kafkapy/testing/profiling.py); None when py-spy is not installed."""
        return start_py_spy(self._fault_pid(), out, seconds, rate)

    def drop_connections(self) -> int:
        """Close every client connection of this broker under the clients; returns how many."""
        return drop_accepted(self._fault_pid(), self.port)

    def log_dir_of(self, topic: str, partition: int) -> Path:
        for d in self.log_dirs:
            if (d / f"{topic}-{partition}").is_dir():
                return d
        raise LookupError(f"no log dir of {self.bootstrap} holds {topic}-{partition}")

    def fail_log_dir(self, topic: str, partition: int) -> Path:
        """Make the log dir holding ``topic``-``partition`` fail (see the module docstring);
        returns that log dir."""
        d = self.log_dir_of(topic, partition)
        aside = d.with_name(d.name + ".failed")
        d.rename(aside)
        d.write_bytes(b"")  # a file where the broker expects its directory
        self.failed_log_dirs[d] = aside
        return d

    def repair_log_dir(self, log_dir: Path | None = None) -> None:
        """Undo ``fail_log_dir`` (every failed dir by default); restart the broker afterwards."""
        for d in [log_dir] if log_dir is not None else list(self.failed_log_dirs):
            aside = self.failed_log_dirs.pop(Path(d))
            Path(d).unlink(missing_ok=True)
            aside.rename(d)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<{type(self).__name__} {self.bootstrap} {self.storage} {state}>"


def overrides_from_kwargs(kwargs: dict[str, Any]) -> dict[str, str]:
    """``num_partitions=3`` -> ``{"num.partitions": "3"}``; keys with dots are taken as they are
    (``**{"log.retention.ms": 1000}``); True/False become Kafka's true/false."""
    out = {}
    for key, value in kwargs.items():
        name = key if "." in key else key.replace("_", ".")
        out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out
