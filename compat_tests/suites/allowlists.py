"""What the upstream suites' runners share (librdkafka.py, franz_go.py): reading an allowlist
file (one test name a line, `#` starts a comment)."""

from __future__ import annotations

from pathlib import Path


def read_allowlist(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names
