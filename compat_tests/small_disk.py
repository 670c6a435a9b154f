"""A log directory on a small filesystem that a test can fill up and free again.

Where mounting is allowed (root with CAP_SYS_ADMIN, as on the development VM), a tmpfs of the
given size is mounted on a temp dir (and unmounted by ``close``): a broker writing there gets
real ENOSPC errors from the kernel. Where mounting is refused (an unprivileged container), the
storage layer's test-only seam (kafkapy.storage.faults, enabled through the environment of the
broker process only) fails writes after the same number of bytes, and "freeing" the disk means
starting the broker without it. ``KAFKAPY_TEST_NO_MOUNT=1`` forces the seam (to run that path
where mounting works).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kafkapy.storage.faults import ENV

MiB = 1 << 20


class SmallDisk:
    def __init__(self, path: Path, size: int) -> None:
        self.path = Path(path)
        self.size = size
        self.path.mkdir(parents=True, exist_ok=True)
        self.mounted = False
        self.refusal = "KAFKAPY_TEST_NO_MOUNT is set"
        if not os.environ.get("KAFKAPY_TEST_NO_MOUNT"):  # to try the seam where mounts work
            got = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(self.path)],
                capture_output=True,
                text=True,
            )
            self.mounted = got.returncode == 0
            self.refusal = got.stderr.strip()
        self.budget: int | None = None  # seam mode: bytes the broker may write

    @property
    def mode(self) -> str:
        return "tmpfs" if self.mounted else "fault-injection seam"

    def leave_free(self, free: int) -> None:
        """Fill the disk so that about ``free`` bytes are left for what writes next."""
        if self.mounted:
            st = os.statvfs(self.path)
            avail = st.f_bavail * st.f_frsize
            with open(self.path / "filler", "wb") as f:
                f.write(b"\0" * max(avail - free, 0))
        else:
            self.budget = free

    def broker_env(self, logs: Path) -> dict[str, str]:
        """Environment for a broker writing to ``logs`` on this disk (seam mode only)."""
        if self.mounted or self.budget is None:
            return {}
        return {ENV: f"{logs}=ENOSPC@{self.budget}"}

    def free(self) -> None:
        """Make room again (the filler goes; in seam mode the next start has no fault)."""
        (self.path / "filler").unlink(missing_ok=True)
        self.budget = None

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True)
            self.mounted = False


def env_spec(*envs: dict[str, str]) -> dict[str, str]:
    """Several disks' broker environments merged (the seam takes ``;``-separated specs)."""
    specs = [e[ENV] for e in envs if ENV in e]
    return {ENV: ";".join(specs)} if specs else {}
