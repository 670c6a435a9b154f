"""A fork server for subprocess test brokers: pay the broker's imports once per test run.

A broker process spends nearly all of its start-up importing (about 260 ms of CPU: trio, kio, the
broker's modules); the broker itself is wired in milliseconds. The zygote is one helper process,
started along with the second subprocess broker of a test run (which starts the usual way), that
imports everything a broker imports (ZooKeeper mode included) and then forks a fresh broker
process per request. Each child runs
``kafkapy server`` exactly as ``python -m kafkapy.cli.main server ...`` would, with its output in
its log file, its own pid, signals and exit status; it dies with the zygote, which dies with the
test process. ``BrokerProcess`` uses it when nothing could tell the difference, else it starts the
broker with ``subprocess.Popen`` as before:

* the ``KAFKAPY_*`` and ``PYTHON*`` variables are those the zygote was started with (kafkapy's
  modules read ``KAFKAPY_*`` variables when they are imported; Python reads ``PYTHON*`` at start);
  the child gets the caller's whole environment as it is now for everything read later;
* the broker command is this interpreter's plain ``kafkapy`` (no taskset, prlimit, other
  installation);
* Linux, and the zygote was started from the main thread (the death signal follows the thread
  that forks);
* ``KAFKAPY_TEST_NO_ZYGOTE`` is not set.

The test process talks to the zygote over a socket pair, one JSON object per line: requests
``{"argv", "log", "cwd", "env"}`` get ``{"pid"}`` (or ``{"error"}``) in order; exits come as
``{"exit": pid, "status": code}`` (the zygote reaps its children, so it reports their status:
negative for a signal, as subprocess does). `ZygoteChild` is the ``Popen``-like handle.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any

FD_ENV = "KAFKAPY_ZYGOTE_FD"
DISABLE_ENV = "KAFKAPY_TEST_NO_ZYGOTE"
_IMPORT_TIME_ENV_PREFIXES = ("KAFKAPY_", "PYTHON")


def _relevant_env(env: dict[str, str]) -> dict[str, str]:
    """The variables read when the broker's modules are imported (or the interpreter starts)."""
    return {
        k: v for k, v in env.items() if k.startswith(_IMPORT_TIME_ENV_PREFIXES) and k != FD_ENV
    }


def _die_with_parent() -> None:
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


# --- the test process's side ------------------------------------------------------------------


class ZygoteChild:
    """The ``subprocess.Popen`` subset BrokerProcess and tests use, for a zygote's child."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]) -> None:
        self.zygote, self.pid, self.args = zygote, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.zygote.wait_status(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    def __init__(self) -> None:
        self.env = _relevant_env(dict(os.environ))
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from kafkapy.testing.zygote import serve; serve()"],
            env={**os.environ, FD_ENV: str(theirs.fileno())},
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        theirs.close()
        self.sock = ours
        self.file = ours.makefile("r", encoding="utf-8")
        self.lock = threading.Lock()  # one request at a time
        self.changed = threading.Condition()
        self.statuses: dict[int, int] = {}
        self.replies: list[dict[str, Any]] = []
        self.alive = False  # until the zygote has imported everything (brokers meanwhile: Popen)
        threading.Thread(target=self._read, name="kafkapy-zygote", daemon=True).start()

    def _read(self) -> None:
        ready = json.loads(self.file.readline() or '{"ready": false}').get("ready", False)
        with self.changed:
            self.alive = ready
        if not ready:
            return
        for line in self.file:
            msg = json.loads(line)
            with self.changed:
                if "exit" in msg:
                    self.statuses[msg["exit"]] = msg["status"]
                else:
                    self.replies.append(msg)
                self.changed.notify_all()
        with self.changed:
            self.alive = False
            self.changed.notify_all()

    def spawn(
        self, argv: list[str], log: str, cwd: str, env: dict[str, str]
    ) -> ZygoteChild | None:
        """A forked broker running ``argv`` (after the interpreter), or None if the zygote is
        gone (the caller starts the broker the usual way)."""
        request = {"argv": argv, "log": log, "cwd": cwd, "env": env}
        with self.lock:
            try:
                self.sock.sendall((json.dumps(request) + "\n").encode())
            except OSError:
                return None
            with self.changed:
                if not self.changed.wait_for(lambda: self.replies or not self.alive, 30):
                    return None
                if not self.replies:
                    return None
                reply = self.replies.pop(0)
        if "pid" not in reply:
            return None
        return ZygoteChild(self, reply["pid"], [sys.executable, *argv])

    def status(self, pid: int) -> int | None:
        with self.changed:
            return self.statuses.get(pid)

    def wait_status(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.statuses or not self.alive, timeout)
            if pid not in self.statuses and not self.alive:
                # the zygote is gone and its children with it (death signal)
                self.statuses[pid] = -signal.SIGKILL
            return self.statuses.get(pid)


_shared: Zygote | None = None
_shared_lock = threading.Lock()


_asked = 0


def warm() -> Zygote | None:
    """The run's zygote, started now if need be (it is ready once ``alive``); None where there
    is none (not Linux, KAFKAPY_TEST_NO_ZYGOTE, or first asked for off the main thread)."""
    global _shared
    if os.environ.get(DISABLE_ENV) or sys.platform != "linux":
        return None
    with _shared_lock:
        if _shared is None and threading.current_thread() is threading.main_thread():
            _shared = Zygote()
        return _shared


def spawn_broker(argv: list[str], log: str) -> ZygoteChild | None:
    """Fork a broker from the run's zygote when that is indistinguishable from starting one
    (see the module docstring); None: start it the usual way. A run's first broker always
    starts the usual way (a run with one broker never pays for a zygote); the second starts the
    zygote, which serves once it has imported everything."""
    global _asked
    _asked += 1
    if _asked == 1 and _shared is None:
        return None
    zygote = warm()
    if zygote is None or not zygote.alive or _relevant_env(dict(os.environ)) != zygote.env:
        return None
    return zygote.spawn(argv, log, os.getcwd(), dict(os.environ))


# --- the zygote ---------------------------------------------------------------------------------


def _preload() -> None:
    """Everything `kafkapy server` imports, in embedded and in ZooKeeper mode."""
    import kafkapy.cli.main
    import kafkapy.metadata.zookeeper
    import kafkapy.server.apis  # registers every API handler
    import kafkapy.server.broker
    import kafkapy.server.replication.replica_manager  # noqa: F401


def serve() -> None:
    sock = socket.socket(fileno=int(os.environ.pop(FD_ENV)))
    try:
        _preload()
    except BaseException:
        failure = {"ready": False, "error": traceback.format_exc()}
        sock.sendall((json.dumps(failure) + "\n").encode())
        return
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd does the work
    children: set[int] = set()
    sock.sendall(b'{"ready": true}\n')
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(sock, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                if key.fileobj == wake_r:
                    os.read(wake_r, 4096)
                    _reap(sock, children)
                    continue
                data = sock.recv(65536)
                if not data:  # the test process is gone: so are its brokers
                    for pid in children:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    pid = _fork(json.loads(line), sock, (wake_r, wake_w, sel.fileno()))
                    children.add(pid)
                    sock.sendall((json.dumps({"pid": pid}) + "\n").encode())
            _reap(sock, children)


def _reap(sock: socket.socket, children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        sock.sendall((json.dumps({"exit": pid, "status": code}) + "\n").encode())


def _fork(request: dict[str, Any], sock: socket.socket, fds: tuple[int, ...]) -> int:
    pid = os.fork()
    if pid:
        return pid
    # the child: a broker process as `python -m kafkapy.cli.main <argv>` would be
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        for fd in fds:
            os.close(fd)
        _die_with_parent()
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        argv = request["argv"]
        sys.argv = ["kafkapy", *argv[2:]] if argv[:2] == ["-m", "kafkapy.cli.main"] else argv
        from kafkapy.cli.main import main

        code = main(sys.argv[1:]) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    return 0  # not reached


def wait_gone(pid: int, timeout: float) -> bool:
    """For tests: True once ``pid`` no longer exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False
