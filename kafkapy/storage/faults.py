"""Test-only fault injection for the storage layer: a disk that fills up or fails.

Off unless enabled, in one of two explicit ways, both for tests only:

* in-process: ``inject(directory, errno.ENOSPC, after_bytes)`` / ``clear()``;
* in a broker process: the environment variable ``KAFKAPY_TEST_STORAGE_FAULTS`` set to
  ``<directory>=<ERRNO>@<bytes>`` (e.g. ``/tmp/t/logs=ENOSPC@1048576``; several separated by
  ``;``), read at import.

Once ``after_bytes`` bytes have been written to files under ``directory`` (segment data, index
entries, checkpoint files), writes there fail with that errno: a write that crosses the budget
writes what fits first, as a full disk does; creating a file fails once the budget is spent; with
EIO, fsync fails too. Tests use it where a size-limited filesystem cannot be mounted (no
privilege) and for I/O errors, which a real filesystem cannot be made to produce on demand.

The storage code calls ``writable`` / ``check_write`` / ``check_create`` / ``check_sync`` only
when ``ACTIVE`` is true, so the seam costs one global lookup per write when off.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

ENV = "KAFKAPY_TEST_STORAGE_FAULTS"


class _Fault:
    def __init__(self, directory: Path, error: int, after_bytes: int) -> None:
        self.prefix = str(Path(directory).resolve()) + os.sep
        self.error = error
        self.budget = after_bytes
        self.lock = threading.Lock()

    def covers(self, path: str | os.PathLike[str]) -> bool:
        return str(Path(path).resolve()).startswith(self.prefix)

    def fail(self, path: str | os.PathLike[str]) -> OSError:
        return OSError(self.error, os.strerror(self.error), str(path))


_faults: list[_Fault] = []
ACTIVE = False


def inject(directory: str | os.PathLike[str], error: int, after_bytes: int = 0) -> None:
    """Fail writes under ``directory`` with ``error`` once ``after_bytes`` were written
    (several directories may each have their own fault)."""
    global ACTIVE
    _faults.append(_Fault(Path(directory), error, after_bytes))
    ACTIVE = True


def clear() -> None:
    global ACTIVE
    _faults.clear()
    ACTIVE = False


def _fault_for(path: str | os.PathLike[str]) -> _Fault | None:
    for f in _faults:
        if f.covers(path):
            return f
    return None


def writable(path: str | os.PathLike[str], n: int) -> int:
    """How many of ``n`` bytes a write to ``path`` may write; raises when none."""
    f = _fault_for(path)
    if f is None:
        return n
    with f.lock:
        allowed = min(n, max(f.budget, 0))
        if allowed <= 0 and n > 0:
            raise f.fail(path)
        f.budget -= allowed
        return allowed


def check_write(path: str | os.PathLike[str], n: int) -> None:
    """An all-or-nothing write of ``n`` bytes (an index entry, a checkpoint file)."""
    f = _fault_for(path)
    if f is not None and writable(path, n) < n:
        raise f.fail(path)


def check_create(path: str | os.PathLike[str]) -> None:
    f = _fault_for(path)
    if f is not None and f.budget <= 0:
        raise f.fail(path)


def check_sync(path: str | os.PathLike[str]) -> None:
    f = _fault_for(path)
    if f is not None and f.error == errno.EIO and f.budget <= 0:
        raise f.fail(path)


def _from_env() -> None:
    """``<directory>=<ERRNO>@<bytes>``, several separated by ``;``."""
    for spec in filter(None, (x.strip() for x in os.environ.get(ENV, "").split(";"))):
        directory, sep, rest = spec.rpartition("=")
        name, _, size = rest.partition("@")
        code = getattr(errno, name.strip().upper(), None)
        if not sep or not directory or not isinstance(code, int):
            raise ValueError(f"{ENV}={spec!r}: expected <directory>=<ERRNO>@<bytes>")
        inject(directory, code, int(size or 0))


_from_env()
