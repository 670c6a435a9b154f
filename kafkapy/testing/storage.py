"""Where a test broker keeps its log directories: ``storage="disk"`` or ``storage="memory"``.

"memory" puts the log directories on a tmpfs (``/dev/shm``, RAM-backed on Linux) instead of the
disk: the broker is the same code writing Kafka's on-disk format, byte for byte (segments,
indexes, checkpoints, the embedded metadata store), so nothing forks the storage layer and what a
test sees is what the disk would hold; but no byte reaches a disk and fsync returns at once, which
is what makes topic creation and acks fast. Data does not survive a reboot (tests do not care) and
counts against RAM. Where no tmpfs is available (macOS, some containers) "memory" falls back to a
temp directory on disk and says so in ``StorageDir.on_tmpfs``.

Each memory directory is named ``kafkapy-<pid>-...``; one made by a process that no longer exists
(a test run killed with -9) is removed the next time a memory directory is made.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

TMPFS_CANDIDATES = (Path("/dev/shm"),)
PREFIX = "kafkapy-"
STORAGE_KINDS = ("disk", "memory")

_made: set[Path] = set()


def tmpfs_root() -> Path | None:
    """A writable RAM-backed directory, or None."""
    for root in TMPFS_CANDIDATES:
        if root.is_dir() and os.access(root, os.W_OK | os.X_OK) and _is_tmpfs(root):
            return root
    return None


def _is_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text()
    except OSError:
        return False
    return any(
        fields[1] == str(path) and fields[2] == "tmpfs"
        for fields in (line.split() for line in mounts.splitlines())
        if len(fields) > 2
    )


def check_kind(storage: str) -> str:
    if storage not in STORAGE_KINDS:
        raise ValueError(f"storage must be one of {', '.join(STORAGE_KINDS)}, got {storage!r}")
    return storage


def memory_dir() -> tuple[Path, bool]:
    """A fresh directory for log dirs on tmpfs (or, failing that, on disk); (path, on tmpfs)."""
    root = tmpfs_root()
    if root is not None:
        _remove_orphans(root)
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
    _made.add(path)
    return path, root is not None


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    _made.discard(path)


def _remove_orphans(root: Path) -> None:
    for entry in root.glob(f"{PREFIX}*-*"):
        pid = entry.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@atexit.register
def _remove_all() -> None:
    for path in list(_made):
        remove(path)
